"""Humans against models: gather every entry's subset scores, with each human's CI and agreement.

The comparison pages, the exports and the ``leaderboard`` command all start from :func:`build`, which
turns the database into the inputs of the pure table modules (``subset_scores.py``, ``table1.py``, ``per_task.py``,
``win_rates.py``, ``entry_correlation.py``; pure math, checked against HUME):

* **models** — each imported model's current revision (or the one a ``rev`` query parameter picks);
* **human reference** — an imported ``baseline/Human``; its CI per subset is derived from its own
  files by :func:`reference_intervals` (rules below);
* **this project's humans** — the stored agreement report of every project Task mapped to an MTEB task
  (``Task.mteb_task_name``), one subset per language of its batches (a task without one is ``pending``);
* **LLM annotators** — the report's ``annotators`` whose ``agent`` is ``llm``, each its own row (HUME §3.6, §4.4).

Subsets are matched by (MTEB task, language) as in the pure layer, never by ``hf_subset`` spelling.

CI of an imported human reference (HUME Table 8, reproduced to 0.1 point on all 26 subsets):
classification → Wilson score interval of the accuracy with n = the subset's ``agreement.n_items``;
STS → Fisher z of the Spearman ρ with the plain 1/(n − 3) variance; clustering and reranking → the
range of the ``annotator_<id>`` revisions' scores when at least two annotators scored the subset, else
(one annotator) the Wilson interval as HUME's table did. A subset without its own agreement block
(single-annotator languages) takes n from another subset of the same task: HUME sampled the same N
items per language. With no n anywhere, the CI is unknown and no model is marked.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from agreement.results import paper_tables as pt
from agreement.results.entries import Comparison, Entry, HumanSubset, agreement_family, kind_of_task
from agreement.results.models import ResultRevision, stored_rows
from agreement.results.project import add_model_run_entries, add_project_entries
from measures import metrics as m
from measures.results import paper_figures as pf
from measures.results.entry_correlation import entry_scores, spearman
from measures.results.mteb_files import ScoreRow, evaluation_rows
from measures.results.per_task import figure2, per_task
from measures.results.subset_scores import HUME_LANGUAGES, SubsetKey, SubsetScore, scores_from_rows, short_task_name
from measures.results.table1 import ranked_subsets, table1
from measures.results.win_rates import win_rates

# ---------------------------------------------------------------------------------------------
# Pure: the human reference's intervals


def language_of(row: ScoreRow) -> str:
    return "+".join(row.languages)


def reference_intervals(
    rows: Sequence[ScoreRow], related: Sequence[ScoreRow], annotators: Sequence[ScoreRow],
    kind_of: Callable[[str], str],
) -> dict[SubsetKey, HumanSubset]:
    """CI and agreement per subset of an imported human reference (rules in the module docstring).

    ``rows`` are the compared revision's rows, ``related`` every revision of the same reference (some
    carry the agreement block the compared one lacks), ``annotators`` its annotator_<id> rows.
    """
    blocks = _agreement_blocks([*rows, *related])
    task_n = {task: n for (task, _), block in blocks.items() if (n := _int(block.get("n_items")))}
    scores_by_annotator: dict[SubsetKey, list[float]] = defaultdict(list)
    for row in annotators:
        scores_by_annotator[(row.mteb_task_name, language_of(row))].append(row.main_score)
    result = {}
    for row in rows:
        key = (row.mteb_task_name, language_of(row))
        block = blocks.get(key, {})
        n = _int(block.get("n_items")) or task_n.get(row.mteb_task_name)
        spread = scores_by_annotator.get(key, [])
        ci, method = _reference_ci(kind_of(row.mteb_task_name), row.main_score, n, spread)
        metric, value = agreement_value(block)
        family = agreement_family(metric)
        result[key] = HumanSubset(
            ci=ci, ci_method=method, n_items=n,
            n_annotators=_int(block.get("n_annotators")) or len(spread) or None,
            agreement_metric=metric, agreement=value, band=m.agreement_band(value, family),
            low_agreement=m.is_low_agreement(value, family), source=row.revision)
    return result


def _agreement_blocks(rows: Iterable[ScoreRow]) -> dict[SubsetKey, Mapping[str, Any]]:
    blocks: dict[SubsetKey, Mapping[str, Any]] = {}
    for row in rows:
        if row.agreement and row.annotator_id is None:
            blocks.setdefault((row.mteb_task_name, language_of(row)), row.agreement)
    return blocks


def _reference_ci(kind: str, score: float, n: int | None,
                  spread: Sequence[float]) -> tuple[tuple[float, float] | None, str | None]:
    if kind in ("Clustering", "Reranking") and len(spread) >= 2:
        return m.annotator_range(spread), f"annotator range (K = {len(spread)})"
    if not n:
        return None, None
    if kind == "STS":
        interval, _ = m.fisher_z_interval.explain(score, n)
        return interval, f"Fisher z (n = {n})"
    if kind in ("Classification", "PairClassification", "Clustering", "Reranking"):
        # HUME Table 8 applies Wilson to the single-annotator clustering and reranking subsets too, with
        # the score as the proportion (score × n "successes", not rounded: it reproduces the table).
        return m.wilson_interval(score * n, n), f"Wilson (n = {n})"
    return None, None


def agreement_value(block: Mapping[str, Any]) -> tuple[str | None, float | None]:
    """The headline agreement of an MTEB agreement block: ``metric``/``value``, else reranking's ρ."""
    if isinstance(block.get("metric"), str) and _finite(block.get("value")):
        return block["metric"], float(block["value"])
    if _finite(block.get("mean_spearman")):
        return "mean_spearman", float(block["mean_spearman"])
    return None, None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# ---------------------------------------------------------------------------------------------
# From the database


def build(revision_ids: Collection[int] = (), *, with_project: bool = True) -> Comparison:
    """Gather models, human references, this project's humans and LLMs (``revision_ids`` override current)."""
    revisions = _chosen_revisions(revision_ids)
    rows = stored_rows()
    board = evaluation_rows(
        row for row in rows if row.annotator_id is None and (row.model_name, row.revision) in revisions)
    entries = {
        name: Entry(name, "human" if rev.model.is_human_reference else "model", "imported", rev.revision, rev.pk,
                    rev.is_current)
        for (name, _), rev in revisions.items()
    }
    comparison = Comparison(scores=scores_from_rows(board), entries=entries, humans={}, kinds={})
    if with_project:
        add_project_entries(comparison)
        add_model_run_entries(comparison)
    comparison.kinds = {task: comparison.kinds.get(task) or kind_of_task(task)
                        for task in {score.task for score in comparison.scores}}
    kind_of = comparison.kinds.__getitem__
    for name, entry in entries.items():
        if entry.agent == "human" and entry.origin == "imported":
            own = [row for row in board if row.model_name == name]
            related = evaluation_rows(row for row in rows if row.model_name == name and row.annotator_id is None)
            annotators = evaluation_rows(row for row in rows if row.model_name == name and row.annotator_id)
            comparison.humans[name] = reference_intervals(own, related, annotators, kind_of)
    return comparison


def _chosen_revisions(revision_ids: Collection[int]) -> dict[tuple[str, str], ResultRevision]:
    """Each model's current revision, replaced by any requested one of the same model."""
    revisions = ResultRevision.objects.filter(annotator_id="").select_related("model")
    chosen = {rev.model_id: rev for rev in revisions if rev.is_current}
    for rev in revisions:
        if rev.pk in revision_ids:
            chosen[rev.model_id] = rev
    return {(rev.model.name, rev.revision): rev for rev in chosen.values()}


# ---------------------------------------------------------------------------------------------
# Tables for the pages, exports and CLI (the math is in table1.py, per_task.py, win_rates.py, ...)

AGREEMENT_SYMBOLS = (("fleiss", "κ"), ("cohen", "κ"), ("kappa", "κ"), ("krippendorff", "α"), ("ari", "ARI"),
                     ("spearman", "ρ"), ("pearson", "r"), ("kendall", "τ"))


def leaderboard_rows(comparison: Comparison, languages: Collection[str], *, rank_over: str = "shared",
                     reference: bool = False) -> list[dict[str, Any]]:
    """HUME Table 1 rows (all entries ranked together) plus each human's and LLM's rank among models.

    ``rank_over`` picks the ranked subsets (``table1.ranked_subsets``: ``shared`` or ``all``);
    ``reference`` keeps only the imported entries (HUME's own table: its models and its human baseline).
    """
    scores = reference_scores(comparison, languages) if reference else comparison.for_languages(languages)
    subsets = ranked_subsets(scores, rank_over=rank_over, languages=languages)
    rows = table1(scores, languages=languages, kinds=comparison.kinds, subsets=subsets)
    model_rows = [row for row in rows if row["agent"] == "model"]
    for row in rows:
        entry = comparison.entries.get(row["name"])
        row["origin"] = entry.origin if entry else ""
        row["revision"] = entry.revision if entry else ""
        row["is_current"] = entry.is_current if entry else True
        row["rank_among_models"] = (
            None if row["agent"] == "model" or row["overall"] is None
            else 1 + sum(model["overall"] > row["overall"] for model in model_rows if model["overall"] is not None))
    return rows


def reference_scores(comparison: Comparison, languages: Collection[str]) -> list[SubsetScore]:
    """The scores of the imported entries only: the models and human reference of the result files."""
    imported = {name for name, entry in comparison.entries.items() if entry.origin == "imported"}
    return [score for score in comparison.for_languages(languages) if score.name in imported]


def ranking_summary(comparison: Comparison, languages: Collection[str], rows: Sequence[Mapping[str, Any]], *,
                    rank_over: str = "shared", reference: bool = False) -> dict[str, Any]:
    """What the page says about the ranking of ``rows`` (from :func:`leaderboard_rows` with the same
    arguments): how many subsets are ranked and of how many, how many rows are ranked, which are not."""
    scores = reference_scores(comparison, languages) if reference else comparison.for_languages(languages)
    ranked = ranked_subsets(scores, rank_over=rank_over, languages=languages)
    every = ranked_subsets(scores, rank_over="all", languages=languages)
    return {"rank_over": rank_over, "n_subsets": len(ranked), "n_subsets_all": len(every),
            "n_rows": sum(row["rank"] is not None for row in rows),
            "unranked": [row for row in rows if row["rank"] is None]}


EXPORT_KEYS = ("rank", "name", "agent", "overall", "n_subsets", "complete", "rank_among_models", "origin",
               "revision", "columns")


def export_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Leaderboard rows as the JSON exports, the API and the CLI give them (scores 0–1, like MTEB)."""
    return [{key: row[key] for key in EXPORT_KEYS} for row in rows]


def per_task_rows(comparison: Comparison, human: str, languages: Collection[str],
                  against: Collection[str] = ("model",)) -> list[dict[str, Any]]:
    """HUME Table 8 rows for one human entry, each with its N, K, agreement, band, validity flag."""
    infos = comparison.humans.get(human, {})
    rows = per_task(comparison.for_languages(languages), human=human, ci=comparison.ci(human),
                    against=against, languages=languages, kinds=comparison.kinds)
    for row in rows:
        info = infos.get((row["task"], row["language"]), HumanSubset())
        best = row["best_model"] or {}
        pct = best.get("pct_of_human")
        row.update(
            short_task=short_task_name(row["task"]), ci_method=info.ci_method, n_items=info.n_items,
            n_annotators=info.n_annotators, agreement_metric=info.agreement_metric, agreement=info.agreement,
            agreement_label=agreement_label(info.agreement_metric, info.agreement), band=info.band,
            low_agreement=info.low_agreement, source=info.source,
            n_outside_ci=sum(bool(cell["outside_ci"]) for cell in row["models"]),
            superhuman_warning=bool(info.low_agreement and pct is not None and pct > 100))
    return rows


def agreement_label(metric: str | None, value: float | None) -> str:
    """``κ = 0.39`` — the symbol the paper uses for the metric, or the metric's own name."""
    if value is None:
        return "n/a"
    name = (metric or "").lower()
    symbol = next((sym for key, sym in AGREEMENT_SYMBOLS if key in name), metric or "agreement")
    return f"{symbol} = {value:.2f}"


def win_rate_table(comparison: Comparison, human: str, languages: Collection[str]) -> dict[str, Any]:
    return win_rates(comparison.for_languages(languages), human=human, languages=languages,
                     kinds=comparison.kinds)


def llm_correlations(comparison: Comparison, human: str, languages: Collection[str]) -> list[dict[str, Any]]:
    """Spearman ρ between the human's and each LLM's per-subset scores (HUME §4.4, Table 13)."""
    scores = comparison.for_languages(languages)
    own = entry_scores(scores, human, languages=languages)
    llms = comparison.names("llm")
    result = [{"name": name, **spearman(own, entry_scores(scores, name, languages=languages))}
              for name in llms]
    if len(llms) > 1:
        per_subset: dict[SubsetKey, list[float]] = defaultdict(list)
        for name in llms:
            for key, value in entry_scores(scores, name, languages=languages).items():
                per_subset[key].append(value)
        mean = {key: sum(values) / len(values) for key, values in per_subset.items()}
        result.append({"name": "mean of the LLMs", **spearman(own, mean)})
    return result


def paper_table(comparison: Comparison, table: str, languages: Collection[str] | None, human: str) -> Any:
    """Data of HUME Table 2, 4–7, 8 or the §5.1 analysis (``languages`` None: every language, tables 4–7)."""
    if table in pt.DATASET_TABLES:
        return pt.dataset_table(comparison.scores, pt.DATASET_TABLES[table], kinds=comparison.kinds,
                                languages=languages)
    languages = languages or HUME_LANGUAGES
    if table == "2":
        return pt.table2(comparison.for_languages(languages), human=human, kinds=comparison.kinds,
                         languages=languages)
    rows = per_task_rows(comparison, human, languages)
    return pt.table8(rows) if table == "8" else pt.agreement_gap(rows)


def paper_figure(comparison: Comparison, number: str, human: str, languages: Collection[str], *,
                 rank_over: str = "shared", reference: bool = False) -> dict[str, Any]:
    """Data of HUME Figure 1 or 12–16 for one human entry (the drawing is paper_figures.render); Figure 1
    draws the rows the leaderboard ranks (``rank_over`` and ``reference`` as in :func:`leaderboard_rows`)."""
    if number == "1":
        return pf.figure_1(leaderboard_rows(comparison, languages, rank_over=rank_over, reference=reference))
    if number == "12":
        return pf.figure_12(win_rate_table(comparison, human, languages))
    rows = per_task(comparison.for_languages(languages), human=human, languages=languages, kinds=comparison.kinds)
    if number in ("13", "14"):
        return pf.figure_gap(rows, "best" if number == "13" else "median")
    if number == "15":
        return pf.figure_15(rows)
    if number == "16":
        return pf.figure_16(rows)
    raise ValueError(f"HUME figure {number!r} is not drawn here; figures: {', '.join(pf.FIGURES)}")


def figure_rows(comparison: Comparison, human: str, languages: Collection[str],
                task: str | None = None) -> list[dict[str, Any]]:
    """HUME Figure 2 rows (model range, median, human) with the human's CI, for one task or all."""
    rows = figure2(comparison.for_languages(languages), human=human, languages=languages,
                   kinds=comparison.kinds)
    ci = comparison.ci(human)
    return [{**row, "ci": list(ci[(row["task"], row["language"])]) if (row["task"], row["language"]) in ci else None}
            for row in rows if task is None or row["task"] == task]
