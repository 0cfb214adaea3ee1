"""Exports of a stored report (CSV, JSON) and of a task's raw answers (JSONL in the import format).

The CSV is "tidy": one number per row, so a spreadsheet can pivot it and a script can read it without
knowing the task kind. Dataset text and names are untrusted, so every cell goes through the project's
`hume.lib.csv_safety.safe_cell` (formula injection, OWASP "CSV Injection"). The JSONL is exactly what
``import_annotations`` reads, so a study can be moved to another instance.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from agreement.core.report_document import ReportDocument
from annotation.models import Annotation
from hume.lib.csv_safety import safe_cell
from tasks_app.models import Task

CSV_COLUMNS = ("task", "kind", "language", "scope", "group", "section", "annotator", "annotator_agent",
               "metric", "value", "band", "note")


# The documented key order (docs/reports.md); the database keeps JSON keys in its own order.
TOP_KEYS = ("format_version", "task", "task_id", "kind", "language", "mteb_task_name", "mteb_subset",
            "computed_at", "computed_in", "answers_digest", "inputs_digest", "n_rows_read", "aggregation")
PART_KEYS = ("batch_id", "batch", "language", "n_items", "n_annotators", "n_answers", "n_skipped", "n_flagged",
             "n_flagged_items", "n_excluded", "excluded_reasons", "score_scale", "agreement_main", "agreement",
             "agreement_bands", "agreement_notes", "agreement_counts", "agreement_pairs", "agreement_intervals",
             "flags", "human", "annotators", "annotator_models", "llm", "charts", "by_batch", "by_language",
             "disagreement", "excluded")
HUMAN_KEYS = ("main_metric", "main_score", "ci_low", "ci_high", "ci_method", "ci_note", "reason", "n_items_scored",
              "n_annotators_scored", "scores")
ANNOTATOR_KEYS = ("name", "agent", "n_answers", "n_skipped", "n_flagged", "scores")
ITEM_KEYS = ("item", "disagreement", "gold_disagreement", "reason")


def ordered(value: Any, keys: tuple[str, ...] = ()) -> Any:
    """A report (part) with its keys in the documented order, the rest alphabetical, recursively."""
    if isinstance(value, list):
        return [ordered(entry, keys) for entry in value]
    if not isinstance(value, dict):
        return value
    first = [k for k in keys if k in value]
    out = {k: value[k] for k in first} | {k: value[k] for k in sorted(value) if k not in keys}
    nested = {"human": HUMAN_KEYS, "annotators": ANNOTATOR_KEYS, "by_batch": TOP_KEYS + PART_KEYS,
              "by_language": TOP_KEYS + PART_KEYS, "disagreement": ITEM_KEYS, "excluded": ITEM_KEYS}
    result = {k: ordered(v, nested.get(k, ())) for k, v in out.items()}
    main = value.get("agreement_main")
    if isinstance(result.get("agreement"), dict) and main in result["agreement"]:
        result["agreement"] = {main: result["agreement"][main]} | result["agreement"]
    return result


def report_json(doc: ReportDocument) -> str:
    return json.dumps(ordered(doc, TOP_KEYS + PART_KEYS), ensure_ascii=False, indent=2) + "\n"


def report_rows(doc: ReportDocument) -> Iterator[dict[str, Any]]:
    """Every number of the report, for the whole task and then for each batch and language."""
    yield from part_rows(doc, "task", "")
    for part in doc.get("by_batch", []):
        yield from part_rows({**doc, **part}, "batch", part["batch"])
    for part in doc.get("by_language", []):
        yield from part_rows({**doc, **part}, "language", part["language"])


def part_rows(part: dict[str, Any], scope: str, group: str) -> Iterator[dict[str, Any]]:
    base = {"task": part["task"], "kind": part["kind"], "language": part["language"], "scope": scope, "group": group}
    for metric in ("n_items", "n_annotators", "n_answers", "n_skipped", "n_flagged", "n_excluded"):
        yield {**base, "section": "counts", "metric": metric, "value": part.get(metric)}
    if scope == "task":  # who an admin left out: their answers are in none of the numbers below
        for entry in part.get("excluded_annotators") or []:
            yield {**base, "section": "excluded_annotator", "annotator": entry["name"], "metric": "n_answers",
                   "value": entry.get("n_answers"), "note": entry["reason"]}
    notes, bands = part.get("agreement_notes", {}), part.get("agreement_bands", {})
    for metric, value in part["agreement"].items():
        yield {**base, "section": "agreement", "metric": metric, "value": value, "band": bands.get(metric, ""),
               "note": notes.get(metric, "")}
    for metric, interval in (part.get("agreement_intervals") or {}).items():
        note = f"{interval['weights']} weights; 95% CI by t with n - 1 = {interval['n_items'] - 1} df (Gwet 2014)"
        for key in ("standard_error", "ci_low", "ci_high"):
            yield {**base, "section": "agreement_interval", "metric": f"{metric}.{key}", "value": interval[key],
                   "note": note}
    yield from pair_rows(part, base)
    yield from human_rows(part["human"], base)
    yield from model_rows(part.get("annotator_models"), base)
    if scope == "task":  # a whole-task block: the batch and language parts inherit it unchanged
        yield from spread_rows(part.get("annotator_models"), base)
    for annotator in part["annotators"]:
        who = {**base, "section": "annotator", "annotator": annotator["name"], "annotator_agent": annotator["agent"]}
        for metric in ("n_answers", "n_skipped", "n_flagged"):
            yield {**who, "metric": metric, "value": annotator.get(metric)}
        for metric, value in annotator["scores"].items():
            yield {**who, "metric": metric, "value": value}
    flags = part["flags"]
    yield {**base, "section": "flags", "metric": "low_agreement", "value": flags["low_agreement"],
           "note": flags.get("message") or ""}


def pair_rows(part: dict[str, Any], base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Cohen's κ per annotator pair ("a | b"), with the shared count and whether the mean left it out."""
    block = (part.get("agreement_pairs") or {}).get("cohen_kappa") or {}
    for pair in block.get("pairs", []):
        note = f"{pair['n_shared']} shared {block['unit']}" + (f"; {pair['reason']}" if pair["reason"] else "")
        yield {**base, "section": "agreement_pair", "annotator": f"{pair['a']} | {pair['b']}", "metric": "cohen_kappa",
               "value": pair["kappa"], "note": note}


def model_rows(block: dict[str, Any] | None, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each annotator model's consensus accuracy and each annotator's skill (and spam score) under it."""
    for method, model in ((block or {}).get("models") or {}).items():
        row = {**base, "section": "annotator_model"}
        yield {**row, "metric": f"{method}.consensus_accuracy", "value": model["consensus_accuracy"],
               "note": f"{model['n_units_scored']} {block['unit']} with gold"}
        for annotator in model["annotators"]:
            yield {**row, "annotator": annotator["name"], "metric": f"{method}.{model['skill_name']}",
                   "value": annotator["skill"]}
            if annotator.get("spam") is not None:
                yield {**row, "annotator": annotator["name"], "metric": f"{method}.spam", "value": annotator["spam"]}


SPREAD_METRICS = ("n_answers", "modal_share", "entropy_bits", "pool_share", "straightlining")


def spread_rows(block: dict[str, Any] | None, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each annotator's answer spread (straight-lining; docs/reports.md, "Annotator models"): one row per
    number, `straightlining` as 1 or 0, the modal label named in the note of `modal_share`."""
    spread = (block or {}).get("answer_spread") or {}
    for annotator in spread.get("annotators", []):
        row = {**base, "section": "answer_spread", "annotator": annotator["name"]}
        for metric in SPREAD_METRICS:
            value = annotator[metric]
            yield {**row, "metric": metric, "value": int(value) if isinstance(value, bool) else value,
                   "note": f"modal label {annotator['modal_label']}" if metric == "modal_share" else ""}


def human_rows(human: dict[str, Any], base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    row = {**base, "section": "human"}
    note = f"main metric {human['main_metric']}; CI {human['ci_method']}"
    if human.get("aggregation", "majority") != "majority":  # the humans as aggregated by an annotator model
        note += f"; {human['combination']}"
    for metric in ("main_score", "ci_low", "ci_high"):
        yield {**row, "metric": metric, "value": human[metric], "note": note}
    for metric, value in human["scores"].items():
        yield {**row, "metric": metric, "value": value}


def report_csv(doc: ReportDocument) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    for row in report_rows(doc):
        writer.writerow({key: safe_cell("" if value is None else value) for key, value in row.items()})
    return out.getvalue()


def answer_lines(task: Task) -> Iterator[str]:
    """The task's raw answers, one JSON object per line, in the annotation-import format (streamed). Every answer
    is written, each with `excluded`: true for an excluded annotator's (counted in no number; docs/crowd.md,
    "Exclusion"), with the exclusion's reason in `excluded_reason`, and when it was given in `submitted_at`, so a
    study imported elsewhere keeps its answers' order (docs/ppi.md, "Stopping")."""
    rows = (
        Annotation.objects.marked().filter(item__task=task)
        .order_by("item__position", "annotator__user__username")
        .values_list("item__external_id", "annotator__user__username", "annotator__agent", "value", "skipped",
                     "skip_reason", "flag_comment", "time_spent_ms", "confidence", "excluded",
                     "annotator__excluded_reason", "submitted_at")
    )
    for (item, name, agent, value, skipped, skip_reason, flag_comment, time_spent_ms,
         confidence, excluded, excluded_reason, submitted_at) in rows.iterator(chunk_size=5000):
        line = {"item": item, "annotator": name, "annotator_agent": agent, "value": None if skipped else value,
                "skipped": skipped, "skip_reason": skip_reason, "flag_comment": flag_comment,
                "time_spent_ms": time_spent_ms, "submitted_at": submitted_at.isoformat(), "excluded": excluded}
        if excluded:
            line["excluded_reason"] = excluded_reason
        if confidence is not None:  # a machine answer's confidence (docs/escalation.md), imported back as is
            line["confidence"] = confidence
        yield json.dumps(line, ensure_ascii=False) + "\n"
