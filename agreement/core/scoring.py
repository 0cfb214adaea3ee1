"""The HUME human-score protocol per task kind: answers + gold → one JSON-ready report dict.

Pure like `metrics` (no Django): the Celery job loads annotations in one query, shapes them as
`answers[item][annotator] = value` (None = skipped) and `gold[item] = value` (value formats: each
kind's kinds/<name>/definition.py), and stores what `score_task` returns.

Each kind's metrics are one scorer class in its folder (kinds/<name>/scorer.py, on the bases of
kinds/scorers.py and kinds/rating_scorers.py), looked up in the registry (`SCORERS`, checked complete by
tasks_app/kind_parts.py); everything they share (counts, exclusions, bands, validity flag, sorting) lives
here in `score_task`.

Scores are on a 0..1 scale (the HUME paper prints them ×100). Only annotators whose agent is "human"
count toward agreement and the human score unless `include_llm=True`; every annotator, LLM or
human, is scored individually in "annotators".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from kinds.charts import chart_data
from kinds.kind_registry import Parts
from kinds.scorers import (
    Answers,
    Context,
    Disagreement,
    Explained,
    Gains,
    Human,
    Item,
    KindScorer,
    Scores,
    SpearmanVariance,
    mean_or_none,
)
from measures import annotator_models
from measures import metrics as m
from measures.pairwise_kappa import MIN_SHARED_DEFAULT
from tasks_app.core.kinds import KINDS  # plain Python like this module: the kinds' default scales

Report = dict[str, Any]

NO_HUMANS = "n/a: no human annotators"
SCORE_SCALE = "0..1 (the HUME paper prints scores x100)"


# ---------------------------------------------------------------- the report


SCORERS: Parts[type[KindScorer]] = Parts("scorer")  # {kind name: its scorer class}, from the registry


def score_task(
    kind: str,
    answers: Answers,
    gold: Mapping[Item, Any],
    *,
    labels: Sequence[Hashable] | None = None,
    scale: tuple[float, float] | None = None,
    axes: Sequence[str] | None = None,
    annotator_agents: Mapping[str, str] | None = None,
    include_llm: bool = False,
    k: int = 10,
    relevance_threshold: float = 1.0,
    spearman_variance: SpearmanVariance = "fisher",
    gains: Gains = "linear",
    kappa_min_shared: int = MIN_SHARED_DEFAULT,
    with_charts: bool = False,
    aggregation: str = "majority",
    annotator_models_max_answers: int = 0,
) -> Report:
    """Score one task the HUME way and return a JSON-serialisable report (no NaN anywhere).

    `answers[item][annotator]` is the answer (None = skipped) and `gold[item]` the gold value, in
    the formats of tasks_app/core/kinds.py. `scale` defaults per kind (sts 0..5, graded 0..10, likert 1..7);
    `relevance_threshold`: a graded_relevance document with gold ≥ it is relevant for Recall@k
    (default 1, the TREC convention: any positive grade).
    `spearman_variance` picks Var(z) of the STS Fisher z CI: "fisher" (1/(n−3), HUME Table 8) by
    default, "bonett_wright" or "fieller" as named options. `gains` picks graded relevance's nDCG
    gains: "linear" (trec_eval's, what MTEB computes) by default, "exponential" (2^grade − 1).
    `aggregation` (measures/annotator_models.py METHODS) combines the humans of the kinds with labels by that
    model: its consensus label per item (classification, pairwise) instead of the majority vote, its consensus
    relevance per candidate (reranking) instead of the mean over annotators. `annotator_models_max_answers` > 0
    adds the `annotator_models` block (every model's skills and consensus accuracy) when the pool gave at
    most that many answers; 0 leaves it out.
    """
    if kind not in SCORERS:
        raise ValueError(f"unknown task kind {kind!r}; expected one of {sorted(SCORERS)}")
    check_aggregation(kind, aggregation)
    names = sorted({n for votes in answers.values() for n in votes}, key=str)
    agents = {n: (annotator_agents or {}).get(n, "human") for n in names}
    lo, hi = scale or (KINDS[kind].default_scale or (0.0, 1.0))[:2]
    if axes is None and KINDS[kind].needs_axes:
        given = [*gold.values(), *(v for votes in answers.values() for v in votes.values())]
        axes = sorted({axis for value in given if value for axis in value})
    ctx = Context(
        kind=kind, answers=answers, gold=gold, items=list(answers), names=names,
        pool=[n for n in names if include_llm or agents[n] == "human"], agents=agents, labels=list(labels or ()),
        scale=(float(lo), float(hi)), axes=list(axes or ()), k=k,
        threshold=float(relevance_threshold),
        include_llm=include_llm, spearman_variance=spearman_variance, gains=gains,
        kappa_min_shared=kappa_min_shared, aggregation=aggregation,
    )
    return _report(SCORERS[kind](ctx), with_charts, annotator_models_max_answers)


def aggregated_kinds() -> list[str]:
    """The kinds whose human is built from labels (the kind's `aggregates_labels`), so --aggregation may
    replace the default: one label per item or per (query, candidate). Sorted, for the messages that list them."""
    return sorted(name for name, kind in KINDS.items() if kind.aggregates_labels)


def check_aggregation(kind: str, aggregation: str) -> None:
    """Refuse an unknown aggregation, or a model aggregation of a kind whose human is not a label per item."""
    annotator_models.check_method(aggregation)
    if aggregation != "majority" and kind not in aggregated_kinds():
        raise annotator_models.UnknownAggregation(
            f"aggregation {aggregation!r} needs labels (kinds: {', '.join(aggregated_kinds())}); "
            f"a {kind} task's human is combined as HUME does (docs/reports.md)")


def _annotator_models(scorer: KindScorer, max_answers: int) -> dict[str, Any] | None:
    """Every annotator model's skills and consensus accuracy, for kinds with labels, within the answer cap."""
    triples = scorer.model_triples() if max_answers > 0 else None
    if triples is None:
        return None
    if len(triples) > max_answers:
        return {"library": annotator_models.CROWD_KIT, "n_answers": len(triples), "models": {},
                "answer_spread": annotator_models.answer_spread(triples),  # no model: cheap at any size
                "reason": f"not computed: {len(triples)} answers, more than ANNOTATOR_MODELS_MAX_ANSWERS "
                          f"({max_answers})"}
    unit = KINDS[scorer.ctx.kind].label_unit
    return annotator_models.report_block(triples, scorer.model_gold(), unit=unit)


def _report(scorer: KindScorer, with_charts: bool = False, annotator_models_max_answers: int = 0) -> Report:
    """Assemble the stable report keys around one kind's computations."""
    ctx = scorer.ctx
    agreement = _agreement(scorer)
    per_annotator = {n: scorer.annotator_scores(n) for n in ctx.names}
    human = scorer.human({n: per_annotator[n] for n in ctx.pool}) if ctx.pool else _no_human()
    counts, excluded = _tally(ctx)
    excluded += scorer.excluded()
    return _json_safe({
        "kind": ctx.kind, "score_scale": SCORE_SCALE,
        "n_items": len(ctx.items),
        "n_annotators": len(ctx.pool),
        "n_answers": sum(counts[n][0] for n in ctx.pool),
        "n_skipped": sum(counts[n][1] for n in ctx.pool),
        "n_excluded": len(excluded),
        "agreement": {name: value for name, (value, _) in agreement.items()},
        "agreement_notes": {name: note for name, (_, note) in agreement.items() if note},
        "agreement_bands": _bands(agreement),
        "agreement_counts": scorer.agreement_counts(),
        "agreement_pairs": {"cohen_kappa": pairs} if (pairs := scorer.agreement_pairs()) else {},
        "agreement_intervals": scorer.agreement_intervals(),
        "aggregation": ctx.aggregation,
        "human": _human_block(scorer, human),
        "annotators": [{"name": n, "agent": ctx.agents[n], "n_answers": counts[n][0], "n_skipped": counts[n][1],
                        "scores": per_annotator[n]} for n in ctx.names],
        "llm": _llm_block(ctx, scorer, per_annotator),
        "excluded": excluded,
        "flags": _flags(scorer, agreement),
        **({"charts": chart_data(scorer, per_annotator)} if with_charts else {}),
        **({"annotator_models": block} if (block := _annotator_models(scorer, annotator_models_max_answers)) else {}),
    }) | {"disagreement": _disagreement_rows(scorer.disagreement())}


def _agreement(scorer: KindScorer) -> dict[str, tuple[float | None, str | None]]:
    """Agreement among the pool; "n/a" for every metric when fewer than two annotators count."""
    pool = scorer.ctx.pool
    if len(pool) < 2:
        reason = m.SINGLE_ANNOTATOR if pool else NO_HUMANS
        return {name: (None, reason) for name in scorer.agreement_names()}
    return scorer.agreement()


def _tally(ctx: Context) -> tuple[dict[str, tuple[int, int]], list[dict[str, Any]]]:
    """One pass over the answers: (answers, skips) per annotator — a None value is a skip, an
    absent key means "not assigned" — and the items that cannot be scored, with the reason."""
    answered = dict.fromkeys(ctx.names, 0)
    skipped = dict.fromkeys(ctx.names, 0)
    pool, excluded = set(ctx.pool), []
    for item, votes in ctx.answers.items():
        counted = False
        for name, value in votes.items():
            if value is None:
                skipped[name] += 1
            else:
                answered[name] += 1
                counted = counted or name in pool
        if not counted:
            excluded.append({"item": item, "reason": "no answers (all skipped)"})
        elif ctx.gold.get(item) is None:
            excluded.append({"item": item, "reason": "no gold"})
    excluded.extend({"item": item, "reason": "no answers"} for item in ctx.gold if item not in ctx.answers)
    return {n: (answered[n], skipped[n]) for n in ctx.names}, excluded

def _no_human() -> Human:
    return Human(None, (None, NO_HUMANS), {}, 0, reason=NO_HUMANS)


def _human_block(scorer: KindScorer, human: Human) -> dict[str, Any]:
    interval, ci_reason = human.ci
    reason = human.reason or (None if human.main_score is not None else "undefined: no scored items")
    return {
        "main_metric": scorer.main(),
        "main_score": human.main_score,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "ci_method": human.ci_method or scorer.ci_name(),
        "ci_note": ci_reason,
        "reason": reason,
        "n_items_scored": human.n_items_scored,
        "scores": human.scores,
        **human.extra,
    }


def _llm_block(ctx: Context, scorer: KindScorer, per_annotator: dict[str, Scores]) -> dict[str, Any]:
    """LLM annotators apart (HUME §3.6): their names and mean main score, never in the human's."""
    llms = [n for n in ctx.names if ctx.agents[n] == "llm"]
    return {"annotators": llms, "included_in_human": ctx.include_llm,
            "main_score_mean": mean_or_none([per_annotator[n].get(scorer.main()) for n in llms])}


def _bands(agreement: dict[str, Explained]) -> dict[str, str]:
    """Band per defined agreement value; percent agreement is not chance-corrected, so no band."""
    bands = {}
    for name, (value, _) in agreement.items():
        if value is not None and name != "percent_agreement":
            band = m.agreement_band(value, _family(name))
            if band:
                bands[name] = band
    return bands


def _family(name: str) -> m.Family:
    return "correlation" if name.split("_")[0] in {"spearman", "kendall", "pearson"} else "chance"


def _flags(scorer: KindScorer, agreement: dict[str, Explained]) -> dict[str, Any]:
    low = [name for name, family in scorer.flags() if m.is_low_agreement(agreement.get(name, (None, None))[0], family)]
    return {"low_agreement": bool(low), "message": m.LOW_AGREEMENT_MESSAGE if low else None, "metrics": low}


def _disagreement_rows(d: Disagreement) -> list[dict[str, Any]]:
    """Most-disagreed items first; ties broken by disagreement with gold, then input order."""
    with_gold = np.where(np.isnan(d.with_gold), -1.0, d.with_gold) if len(d.items) else d.with_gold
    order = np.lexsort((np.arange(len(d.items)), -with_gold, -d.among)) if len(d.items) else []
    among, gold = d.among.tolist(), d.with_gold.tolist()
    return [{"item": d.items[i], "disagreement": among[i], "gold_disagreement": None if gold[i] != gold[i] else gold[i]}
            for i in order]


def _json_safe(value: Any) -> Any:
    """Numpy scalars → Python, non-finite floats → None: the report goes straight to JSON."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
