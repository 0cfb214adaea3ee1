"""The raw-answers JSONL is the annotation-import format: a study moved to another task (or instance) with
`import_annotations` gives the same report."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from agreement.core.report_exports import answer_lines
from agreement.core.reports import report_in_process
from annotation.models import Annotation
from tasks_app.models import Task
from tests.report_builders import import_study

pytestmark = pytest.mark.django_db

RECORDS = [{"sentence1": f"a {i}", "sentence2": f"b {i}", "score": s} for i, s in enumerate([0, 1.5, 3, 4.5, 5, 2])]
ANSWERS = [
    {"item": "1", "annotator": "sara", "value": 0.5, "time_spent_ms": 5100},
    {"item": "2", "annotator": "sara", "value": 2}, {"item": "3", "annotator": "sara", "value": 3},
    {"item": "4", "annotator": "sara", "value": 4}, {"item": "5", "annotator": "sara", "value": 5},
    {"item": "6", "annotator": "sara", "skipped": True, "skip_reason": "unreadable", "flag_comment": "=cut off"},
    {"item": "1", "annotator": "tom", "value": 0}, {"item": "2", "annotator": "tom", "value": 1},
    {"item": "3", "annotator": "tom", "value": 3.5}, {"item": "4", "annotator": "tom", "value": 5},
    {"item": "5", "annotator": "tom", "value": 4.5}, {"item": "6", "annotator": "tom", "value": 2.5},
    {"item": "1", "annotator": "judge-llm", "annotator_agent": "llm", "value": 1, "confidence": 0.7},
]


def test_exported_answers_import_into_a_copy_of_the_task_and_give_the_same_report(tmp_path) -> None:
    original = import_study(tmp_path, "sts", "sts-original", RECORDS, ANSWERS)
    exported = "".join(answer_lines(original))
    (tmp_path / "moved.jsonl").write_text(exported)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": str(n), **r}) + "\n"
                                                  for n, r in enumerate(RECORDS, start=1)))
    call_command("import_task", str(tmp_path / "items.jsonl"), "--name=sts-moved", "--kind=sts",
                 "--language=eng-Latn", stdout=io.StringIO())

    call_command("import_annotations", str(tmp_path / "moved.jsonl"), "--task=sts-moved", stdout=io.StringIO())

    before, _ = report_in_process(original)
    after, _ = report_in_process(Task.objects.get(name="sts-moved"))
    for key in ("n_items", "n_annotators", "n_answers", "n_skipped", "n_flagged", "agreement", "human", "annotators"):
        assert after[key] == before[key], key
    assert before["human"]["main_metric"] == "spearman" and before["n_skipped"] == 1
    assert before["answers_digest"] == after["answers_digest"]  # same rows (and, on one instance, same annotators)
    lines = [json.loads(line) for line in exported.splitlines()]
    times = {(line["item"], line["annotator"]): line.pop("submitted_at") for line in lines}
    assert {"item": "6", "annotator": "sara", "annotator_agent": "human", "value": None, "skipped": True,
            "skip_reason": "unreadable", "flag_comment": "=cut off", "time_spent_ms": None, "excluded": False} in lines
    moved_judge = Annotation.objects.get(item__task__name="sts-moved", annotator__user__username="judge-llm")
    assert moved_judge.confidence == 0.7  # a machine answer's confidence travels (docs/escalation.md)
    assert sum("confidence" in line for line in lines) == 1
    # when each answer was given travels too, so the moved study reads its answers in the same order (PPI's
    # confidence sequence, docs/ppi.md "Stopping")
    moved = {(a.item.external_id, a.annotator.user.username): a.submitted_at.isoformat()
             for a in Annotation.objects.filter(item__task__name="sts-moved").select_related("item", "annotator__user")}
    original_times = {(a.item.external_id, a.annotator.user.username): a.submitted_at.isoformat()
                      for a in Annotation.objects.filter(item__task=original).select_related("item", "annotator__user")}
    assert moved == times == original_times and len(moved) == 13
