"""The PPI document of a task and a judge, as the `ppi` command prints it and a worker computes it: the same
function reads the answers, estimates and plans, so the command needs no worker and gives a worker's numbers.
Keys in docs/ppi.md ("The JSON")."""
from __future__ import annotations

import csv
import io
import json
import socket
from typing import Any

from django.utils import timezone

from agreement.ppi.ppi_loading import load_numbers
from hume.lib.csv_safety import safe_row
from measures.ppi.planner import labels_needed
from measures.ppi.sequence import DEFAULT_T_STAR
from measures.ppi.task_estimates import StudyNumbers, estimates_document, sample_for
from tasks_app.models import Task

FORMAT_VERSION = 1
CSV_COLUMNS = ("task", "judge", "section", "scope", "group", "estimand", "estimate", "ci_low", "ci_high",
               "classical_estimate", "classical_low", "classical_high", "lambda", "judge_mean_error", "n",
               "n_unlabelled", "rho", "n_effective", "n_more", "half_width_planned", "note")


def ppi_document(task: Task, judge_name: str, *, alpha: float = 0.05, target_half_width: float | None = None,
                 threshold: float | None = None, t_star: int = DEFAULT_T_STAR,
                 computed_in: str = "cli") -> dict[str, Any]:
    """Every estimate of the task with this judge, and the plan when a target half-width is given.
    Raises agreement.ppi.ppi_loading.PPIInputError on input PPI cannot use (nothing is written)."""
    numbers = load_numbers(task, judge_name, threshold=threshold)
    doc = {"format_version": FORMAT_VERSION, "task": task.name, "task_id": task.pk, "kind": task.kind,
           "language": task.language, "judge": judge_name, "computed_at": timezone.now().isoformat(),
           "computed_in": computed_in if computed_in != "worker" else f"worker {socket.gethostname()}",
           **estimates_document(numbers, alpha=alpha, target_half_width=target_half_width, t_star=t_star)}
    if target_half_width is not None:
        doc["plan"] = plan_document(numbers, target_half_width, alpha)
    return doc


def plan_document(numbers: StudyNumbers, target_half_width: float, alpha: float) -> dict[str, Any]:
    """Per estimand (whole task), the labels needed for ±target; `n_more` is the largest of the reachable ones,
    the number a batch must hold for every estimand to reach the target."""
    everything = numbers.labelled | ~numbers.labelled
    plans = [{"estimand": estimand, **labels_needed(sample_for(numbers, column, everything), target_half_width,
                                                    alpha).as_dict()}
             for column, estimand in enumerate(numbers.estimands)]
    reachable = [p for p in plans if p["n_more"] is not None]
    deciding = max(reachable, key=lambda p: p["n_more"], default=None)
    return {"target_half_width": target_half_width,
            "n_more": None if deciding is None or len(reachable) < len(plans) else deciding["n_more"],
            "deciding_estimand": None if deciding is None else deciding["estimand"],
            "draw": "uniform, from the items without a human answer" + (
                "; the labels so far include active draws, which usually need fewer" if numbers.draw_rows is not None
                else ""),
            "by_estimand": plans}


def worth_line(doc: dict[str, Any]) -> str:
    """"your 40 labels are worth 80" for the whole task's first estimand, or why not."""
    row = next(r for r in doc["estimates"] if r["scope"] == "task")
    if row["n_effective"] is None:
        return f"{row['estimand']}: {row['reason'] or 'undefined'}"
    return (f"{row['estimand']}: your {row['n']} labels are worth {row['n_effective']:.0f} "
            f"(with the judge on {row['n_unlabelled']} more items)")


def ppi_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def ppi_csv(doc: dict[str, Any]) -> str:
    """One row per estimate, difference, confidence sequence (its last look) and plan; cells are
    spreadsheet-safe (hume/lib/csv_safety.py)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    base = {"task": doc["task"], "judge": doc["judge"]}
    for row in doc["estimates"]:
        writer.writerow(safe_row(_cells({**base, "section": "estimate", **row, "note": row["reason"]})))
    for row in doc["differences"]:
        writer.writerow(safe_row(_cells({**base, "section": "difference", **row, "group": f"{row['a']} − {row['b']}",
                                         "note": row["reason"]})))
    for row in doc["sequences"]:
        last = row["looks"][-1] if row["looks"] else {}
        writer.writerow(safe_row(_cells({**base, "section": "sequence", "scope": "task", "estimand": row["estimand"],
                                         "estimate": last.get("estimate"), "ci_low": last.get("low"),
                                         "ci_high": last.get("high"), "n": last.get("t"), "note": row["reason"]})))
    for row in doc.get("plan", {}).get("by_estimand", []):
        writer.writerow(safe_row(_cells({**base, "section": "plan", "scope": "task", **row,
                                         "n": row["n_labelled"], "note": row["reason"]})))
    return out.getvalue()


def _cells(row: dict[str, Any]) -> list[Any]:
    return ["" if row.get(column) is None else row.get(column) for column in CSV_COLUMNS]
