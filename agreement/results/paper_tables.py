"""The rest of HUME's tables as data, in pure Python: Table 2, Tables 4–7, Table 8 and the §5.1 analysis.

Inputs are the pure layer's :class:`SubsetScore` list (``subset_scores.py``) or its per-task rows
(``compare.per_task_rows``: Table 8 with N, K, agreement); outputs are JSON-ready rows, and
:func:`rows_to_csv` / :func:`rows_to_latex` print any of them ×100 like the paper. Definitions, checked
against the paper in ``tests/test_paper_tables.py``:

* **Table 2** (LLM annotators per category): per task kind, the unweighted mean over that kind's
  subsets for the human, each LLM and the best embedding model (the model with the highest mean);
  ``Average`` is the mean over all those subsets (HUME: 19 task-language pairs, clustering left out
  because LLMs were not asked to cluster). Only subsets the human scored count.
* **Tables 4–7** (every model per dataset): per entry and MTEB task of one kind, the mean over the
  task's languages — all the languages of the entry's files by default, as the paper's tables do (its
  SIB200 and STS22 model cells include the French subsets: all-MiniLM-L6-v2 STS22 48.4 is the mean of
  en, ar, fr and ru), while the human has only HUME's five.
* **§5.1** (task quality vs model advantage): Spearman ρ, two-sided p and n between each subset's
  inter-annotator agreement and the best model's score as a percentage of the human's, over the
  subsets that have an agreement value (K ≥ 2). A negative ρ is the paper's finding: models gain most
  where humans agree least.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from scipy import stats

from agreement.results.table_formats import fmt_score, latex_escape
from hume.lib.csv_safety import to_csv
from measures.results.subset_scores import HUME_LANGUAGES, SubsetScore, short_task_name, task_kind

TABLE2_KINDS = ("Classification", "Reranking", "STS")  # HUME: clustering is not asked of LLMs
DATASET_TABLES = {"4": "Clustering", "5": "Classification", "6": "Reranking", "7": "STS"}


def table2(
    scores: Iterable[SubsetScore], *, human: str, kinds: Mapping[str, str] | None = None,
    task_kinds: Sequence[str] = TABLE2_KINDS, languages: Collection[str] = HUME_LANGUAGES,
) -> list[dict[str, Any]]:
    """HUME Table 2 rows: one per task kind plus ``Average``; cells are mean scores (0–1)."""
    by_entry: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    entry_agent: dict[str, str] = {}
    for item in scores:
        if item.language in languages and task_kind(item.task, kinds) in task_kinds:
            by_entry[item.name][(item.task, item.language)] = item.score
            entry_agent[item.name] = item.agent
    subsets = set(by_entry.get(human, {}))
    llms = sorted(name for name, agent in entry_agent.items() if agent == "llm")
    models = sorted(name for name, agent in entry_agent.items() if agent == "model")
    rows = []
    for label in (*task_kinds, "Average"):
        keys = {key for key in subsets if label == "Average" or task_kind(key[0], kinds) == label}
        if not keys:
            continue
        means = {name: _mean_over(by_entry[name], keys) for name in (human, *llms, *models)}
        best = max((name for name in models if means[name] is not None), key=lambda n: means[n], default=None)
        rows.append({"category": label, "n_subsets": len(keys), "human": means[human],
                     "llms": {name: means[name] for name in llms},
                     "best_model": None if label == "Average" or best is None else
                     {"name": best, "score": means[best]}})
    return rows


def _mean_over(values: Mapping[tuple[str, str], float], keys: Collection[tuple[str, str]]) -> float | None:
    """Mean over ``keys``; None unless the entry has every one (a mean over fewer is not comparable)."""
    if not keys <= values.keys():
        return None
    return statistics.fmean(values[key] for key in keys)


def dataset_table(
    scores: Iterable[SubsetScore], kind: str, *, kinds: Mapping[str, str] | None = None,
    languages: Collection[str] | None = None, entry_agents: Collection[str] = ("model", "human"),
) -> dict[str, Any]:
    """HUME Tables 4–7: each entry's score per MTEB task of ``kind``, averaged across languages (all of
    them unless ``languages`` is given)."""
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    order: dict[str, str] = {}
    for item in scores:
        if (languages is None or item.language in languages) and item.agent in entry_agents \
                and task_kind(item.task, kinds) == kind:
            cells[item.name][item.task].append(item.score)
            order[item.name] = item.agent
    tasks = sorted({task for row in cells.values() for task in row})
    names = sorted(cells, key=lambda n: (order[n] != "model", n.split("/")[-1].lower()))
    return {"kind": kind, "tasks": tasks,
            "rows": [{"name": name, "agent": order[name],
                      "scores": {task: statistics.fmean(cells[name][task]) if cells[name][task] else None
                                 for task in tasks}} for name in names]}


def table8(per_task: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """HUME Table 8 rows from ``compare.per_task_rows``: N, K, Tot = N × K, human and CI, IAA, best model."""
    rows = []
    for row in per_task:
        best = row.get("best_model") or {}
        n, k = row.get("n_items"), row.get("n_annotators")
        rows.append({"task": short_task_name(row["task"]), "kind": row["kind"], "language": row["language"],
                     "n": n, "k": k, "total": n * k if n and k else None, "human": row["human"],
                     "ci": row.get("ci"), "ci_method": row.get("ci_method"),
                     "iaa": row.get("agreement_label") if (k or 0) >= 2 else "N/A",
                     "best_model": best.get("name"), "best_score": best.get("score"),
                     "outside_ci": best.get("outside_ci")})
    return rows


def agreement_gap(per_task: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """§5.1: Spearman between agreement and the best model's % of human, over subsets with agreement."""
    pairs = [(row["agreement"], row["best_model"]["pct_of_human"], row) for row in per_task
             if row.get("agreement") is not None and row.get("best_model")
             and row["best_model"].get("pct_of_human") is not None]
    rows = [{"task": short_task_name(row["task"]), "language": row["language"], "agreement": a,
             "agreement_metric": row.get("agreement_metric"), "best_pct_of_human": pct} for a, pct, row in pairs]
    x, y = [a for a, _, _ in pairs], [p for _, p, _ in pairs]
    if len(pairs) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"rho": None, "p_value": None, "n": len(pairs), "rows": rows}
    result = stats.spearmanr(x, y)
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": len(pairs), "rows": rows}


# ---------------------------------------------------------------------------------------------
# Flat rows for CSV / LaTeX (scores ×100, one decimal, like the paper)


def flat_rows(table: str, data: Any) -> tuple[list[str], list[list[Any]]]:
    """(header, body) of one table's data as the paper prints it."""
    if table == "2":
        llms = sorted({name for row in data for name in row["llms"]})
        header = ["category", "human", *llms, "best_model", "best_score"]
        return header, [[row["category"], fmt_score(row["human"], 100, 1),
                         *(fmt_score(row["llms"].get(n), 100, 1) for n in llms),
                         (row["best_model"] or {}).get("name", ""),
                         fmt_score((row["best_model"] or {}).get("score"), 100, 1)] for row in data]
    if table in DATASET_TABLES:
        header = ["model", *(short_task_name(t) for t in data["tasks"])]
        return header, [[row["name"].split("/")[-1], *(fmt_score(row["scores"][t], 100, 1) for t in data["tasks"])]
                        for row in data["rows"]]
    if table == "8":
        header = ["task", "language", "N", "K", "Tot", "human", "ci_low", "ci_high", "IAA", "best_model",
                  "best_score", "outside_ci"]
        return header, [_table8_line(r) for r in data]
    if table == "5.1":
        header = ["task", "language", "agreement_metric", "agreement", "best_pct_of_human"]
        return header, [[r["task"], r["language"], r["agreement_metric"] or "", f"{r['agreement']:.3f}",
                         f"{r['best_pct_of_human']:.1f}"] for r in data["rows"]]
    raise ValueError(f"unknown table {table!r}")


def _table8_line(r: Mapping[str, Any]) -> list[Any]:
    low, high = r["ci"] or (None, None)
    return [r["task"], r["language"], r["n"] or "", r["k"] or "", r["total"] or "", fmt_score(r["human"], 100, 1),
            fmt_score(low, 100, 1), fmt_score(high, 100, 1), r["iaa"], r["best_model"] or "",
            fmt_score(r["best_score"], 100, 1),
            "*" if r["outside_ci"] else ""]


def rows_to_csv(table: str, data: Any) -> str:
    header, body = flat_rows(table, data)
    return to_csv(header, body)


def rows_to_latex(table: str, data: Any, *, caption: str | None = None) -> str:
    """Any of these tables as a booktabs LaTeX table."""
    header, body = flat_rows(table, data)
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(latex_escape(str(h)) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(str(cell)) for cell in row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
