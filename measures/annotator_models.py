"""Annotator models: consensus labels and per-annotator skill from crowd answers, through crowd-kit.

Pure (no Django): answers in, consensus and skills out. The models are Toloka's crowd-kit 1.4.2
(`crowdkit.aggregation`), the library the issue names; this module only shapes our answers as its
(task, worker, label) frame, fixes the options that make a run reproducible, and turns its fitted
attributes into JSON-ready numbers:

- ``majority``: majority vote per item (crowd-kit's MajorityVote); skill = share of an annotator's
  answers equal to the consensus.
- ``dawid-skene``: A. P. Dawid, A. M. Skene, "Maximum Likelihood Estimation of Observer Error-Rates Using
  the EM Algorithm" (1979): one confusion matrix per annotator. Skill = the annotator's accuracy under the
  fitted class priors, Σ_k prior_k · P(answer k | true k); the confusion matrix is reported too.
- ``one-coin``: one-coin Dawid-Skene: one accuracy per annotator, errors spread evenly over the other labels.
- ``glad``: J. Whitehill et al., "Whose Vote Should Count More" (NeurIPS 2009): skill = alpha (ability,
  any real number; higher is better, 0 = guessing), items get a difficulty.
- ``mace``: D. Hovy et al., "Learning Whom to Trust with MACE" (NAACL 2013): skill = competence, the
  posterior probability that the annotator answers by knowing rather than spamming; spam = 1 − competence.

Which kinds: classification and pairwise (a label per item) and reranking's per-candidate 0/1 relevance
(each (query, candidate) is one unit). Kinds with numbers on a scale or partitions have no labels to model.
crowd-kit is imported inside `fit` because it imports pandas and more, which pages never need.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CROWD_KIT = "crowd-kit 1.4.2"
METHODS: tuple[str, ...] = ("majority", "dawid-skene", "one-coin", "glad", "mace")
SKILL_NAMES = {"majority": "agreement_with_consensus", "dawid-skene": "accuracy", "one-coin": "accuracy",
               "glad": "alpha", "mace": "competence"}
# crowd-kit's MACE starts every restart from the same draw when its random_state is an int (its default, 0),
# so its default 10 restarts fit ten identical runs: one gives the same result in a tenth of the time
# (tests/test_annotator_models.py checks the equality against crowd-kit's default MACE()).
MACE_RESTARTS = 1
MACE_SEED = 0
# Straight-lining (answer_spread): an annotator with at least this many answers, this share of them one label.
# MACE's blind spot is an annotator who always gives the same label: when several do, they agree with each other
# and MACE (without gold) takes them as competent (docs/reports.md, "Annotator models"). The share of one's modal
# label sees them whatever the others do. 0.9 leaves room for a careful annotator on a balanced task; on a task
# whose gold is 90% one label a careful annotator looks the same, so the pool's share is reported beside it.
STRAIGHTLINE_MODAL_SHARE = 0.9
STRAIGHTLINE_MIN_ANSWERS = 10

Triple = tuple[Hashable, str, Hashable]  # (unit, annotator, label)


class UnknownAggregation(ValueError):
    """An aggregation name that is not one of METHODS."""


@dataclass
class ModelResult:
    """One model's consensus per unit and its per-annotator numbers (None: the model has no such number)."""

    method: str
    consensus: dict[Hashable, Hashable]
    skills: dict[str, float]
    spam: dict[str, float] = field(default_factory=dict)
    confusion: dict[str, list[list[float]]] = field(default_factory=dict)  # rows: true label, columns: answer
    labels: list[Hashable] = field(default_factory=list)

    @property
    def skill_name(self) -> str:
        return SKILL_NAMES[self.method]


def check_method(method: str) -> str:
    """The method name, or UnknownAggregation naming the accepted ones."""
    if method not in METHODS:
        raise UnknownAggregation(f"unknown aggregation {method!r}; expected one of: {', '.join(METHODS)}")
    return method


def fit(method: str, triples: Sequence[Triple]) -> ModelResult:
    """Fit one model to the (unit, annotator, label) answers (skips left out by the caller)."""
    check_method(method)
    import pandas as pd
    from crowdkit import aggregation as ck

    frame = pd.DataFrame(list(triples), columns=["task", "worker", "label"])
    if frame.empty:
        return ModelResult(method, {}, {})
    labels = sorted(frame["label"].unique().tolist(), key=str)
    if method == "majority":
        model: Any = ck.MajorityVote()
    elif method == "dawid-skene":
        model = ck.DawidSkene(n_iter=100, tol=1e-5)
    elif method == "one-coin":
        model = ck.OneCoinDawidSkene(n_iter=100, tol=1e-5)
    elif method == "glad":
        model = ck.GLAD(n_iter=100, tol=1e-5, silent=True)
    else:
        model = ck.MACE(n_restarts=MACE_RESTARTS, n_iter=50, random_state=MACE_SEED)
    consensus_series = model.fit_predict(frame)
    consensus = {unit: label for unit, label in consensus_series.items()}
    result = ModelResult(method, consensus, {}, labels=labels)
    workers = pd.factorize(frame["worker"])[1].tolist()
    if method == "majority":
        agreed = frame["label"].to_numpy() == frame["task"].map(consensus_series).to_numpy()
        result.skills = {str(w): float(v) for w, v in pd.Series(agreed).groupby(frame["worker"]).mean().items()}
    elif method == "dawid-skene":
        result.confusion, result.skills = _confusions(model, labels)
    elif method == "one-coin":
        result.skills = {str(w): float(v) for w, v in model.skills_.items()}
    elif method == "glad":
        result.skills = {str(w): float(v) for w, v in model.alphas_.items()}
    else:
        competence = np.asarray(model.spamming_)[:, 1]
        result.skills = {str(w): float(c) for w, c in zip(workers, competence, strict=True)}
        result.spam = {w: 1.0 - c for w, c in result.skills.items()}
    return result


def _confusions(model: Any, labels: list[Hashable]) -> tuple[dict[str, list[list[float]]], dict[str, float]]:
    """Per annotator: P(answer | true label) as rows of true labels (crowd-kit's `errors_` is indexed by
    (worker, answer) with a column per true label), and the accuracy under the fitted priors."""
    errors, priors = model.errors_, model.priors_
    confusion, accuracy = {}, {}
    for worker in errors.index.get_level_values(0).unique():
        table = errors.loc[worker].reindex(index=labels, columns=labels, fill_value=0.0).to_numpy(dtype=float)
        matrix = table.T  # rows: true label
        confusion[str(worker)] = matrix.tolist()
        prior = priors.reindex(labels, fill_value=0.0).to_numpy(dtype=float)
        accuracy[str(worker)] = float((prior * np.diag(matrix)).sum())
    return confusion, accuracy


def triples_of_items(answers: Mapping[Hashable, Mapping[str, Any]], pool: Iterable[str]) -> list[Triple]:
    """(item, annotator, label) of every non-skipped answer of the pool: classification and pairwise."""
    keep = set(pool)
    return [(item, name, value) for item, votes in answers.items() for name, value in votes.items()
            if value is not None and name in keep]


def triples_of_candidates(answers: Mapping[Hashable, Mapping[str, Any]], pool: Iterable[str],
                          candidates: Mapping[Hashable, Sequence[Hashable]]) -> list[Triple]:
    """((query, candidate), annotator, 0/1) of reranking: a candidate left unmarked in an answer is 0, as the
    reranking scorer reads it."""
    keep = set(pool)
    out: list[Triple] = []
    for item, votes in answers.items():
        for name, value in votes.items():
            if value is None or name not in keep:
                continue
            out.extend(((item, key), name, 1 if value.get(key) else 0) for key in candidates.get(item, ()))
    return out


def accuracy_against(consensus: Mapping[Hashable, Hashable], gold: Mapping[Hashable, Any]) -> tuple[float | None, int]:
    """Share of units with gold whose consensus equals gold, and how many units that is."""
    scored = [unit for unit in consensus if gold.get(unit) is not None]
    if not scored:
        return None, 0
    return sum(consensus[u] == gold[u] for u in scored) / len(scored), len(scored)


def answer_spread(triples: Sequence[Triple]) -> dict[str, Any]:
    """Per annotator how spread their answers are, a spam signal that needs no model: `n_answers`, `modal_label`
    (the label they gave most; ties: the smallest as text), `modal_share` (its share of their answers),
    `entropy_bits` (Shannon entropy of their labels, 0 = always one label), `pool_share` (that label's share of
    all annotators' answers, the context: on a one-sided task a careful annotator's modal share is high too) and
    `straightlining`, True when modal_share >= STRAIGHTLINE_MODAL_SHARE over >= STRAIGHTLINE_MIN_ANSWERS."""
    by_annotator: dict[str, Counter[str]] = {}
    pool: Counter[str] = Counter()
    for _, annotator, label in triples:
        by_annotator.setdefault(annotator, Counter())[str(label)] += 1
        pool[str(label)] += 1
    rows = []
    for name, counts in sorted(by_annotator.items()):
        n = sum(counts.values())
        top = max(counts.values())
        modal = min(label for label, count in counts.items() if count == top)
        shares = np.array(list(counts.values()), dtype=float) / n
        rows.append({"name": name, "n_answers": n, "modal_label": modal, "modal_share": top / n,
                     "entropy_bits": float(abs(-(shares * np.log2(shares)).sum())),
                     "pool_share": pool[modal] / len(triples),
                     "straightlining": n >= STRAIGHTLINE_MIN_ANSWERS and top / n >= STRAIGHTLINE_MODAL_SHARE})
    return {"modal_share_threshold": STRAIGHTLINE_MODAL_SHARE, "min_answers": STRAIGHTLINE_MIN_ANSWERS,
            "annotators": rows}


def report_block(triples: Sequence[Triple], gold: Mapping[Hashable, Any], methods: Sequence[str] = METHODS,
                 *, unit: str = "items") -> dict[str, Any]:
    """The report's `annotator_models`: per model the consensus accuracy against gold and each annotator's
    skill (and spam, confusion matrix where the model has them)."""
    block: dict[str, Any] = {"library": CROWD_KIT, "unit": unit, "n_answers": len(triples), "models": {},
                             "answer_spread": answer_spread(triples)}
    for method in methods:
        result = fit(method, triples)
        accuracy, n_scored = accuracy_against(result.consensus, gold)
        block["models"][method] = {
            "skill_name": result.skill_name,
            "consensus_accuracy": accuracy,
            "n_units_scored": n_scored,
            "labels": [str(label) for label in result.labels],
            "annotators": [
                {"name": name, "skill": skill, "spam": result.spam.get(name),
                 **({"confusion": result.confusion[name]} if name in result.confusion else {})}
                for name, skill in sorted(result.skills.items())
            ],
        }
    return block
