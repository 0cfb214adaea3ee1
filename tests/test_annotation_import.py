"""Importing annotations made elsewhere: validated like a browser submit, atomic, each answer stored once."""
from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation.core.batches import add_pool_items
from annotation.models import Annotation, AnnotationRevision, Annotator, Batch, BatchItem
from tasks_app.models import Task
from tests.import_samples import SAMPLES, cli_import, jsonl, upload, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(tmp_path: Path) -> Task:
    options, records, _ = SAMPLES["reranking"]
    cli_import(write(tmp_path / "r.jsonl", jsonl(records)), "Rerank", "reranking", language="dan-Latn", **options)
    return Task.objects.get(name="Rerank")


JUDGED = {"p1": 1, "p2": 0}


def line(item: str = "q1", annotator: str = "ext-ann-1", value: object = JUDGED, **extra: object) -> dict:
    return {"item": item, "annotator": annotator, "annotator_agent": "human", "value": value, **extra}


def run(path: Path, task_name: str = "Rerank", **options: object) -> str:
    out = StringIO()
    call_command("import_annotations", str(path), task=task_name, stdout=out, **options)
    return out.getvalue()


def state() -> tuple[int, int, int, int]:
    return (Annotation.objects.count(), Annotator.objects.count(), User.objects.count(),
            AnnotationRevision.objects.count())


def refused(path: Path, **options: object) -> str:
    before = state()
    with pytest.raises(CommandError) as failure:
        run(path, **options)
    assert state() == before
    return str(failure.value)


def test_annotations_are_stored_with_new_annotators(tmp_path: Path, task: Task) -> None:
    rows = [line(time_spent_ms=5300), line(annotator="gpt-judge", annotator_agent="llm", value={"p1": "1", "p2": 1}),
            line(item="q2", skipped=True, skip_reason="unsure", value=None, flag_comment="candidates look odd")]
    out = run(write(tmp_path / "a.jsonl", jsonl(rows)))
    assert out.splitlines() == ["task 'Rerank': 3 added, 0 unchanged, 0 replaced",
                                "created annotators: ext-ann-1, gpt-judge"]
    human = Annotator.objects.get(user__username="ext-ann-1")
    assert human.agent == "human" and not human.user.has_usable_password()
    assert list(human.languages.values_list("language", flat=True)) == ["dan-Latn"]
    assert Annotator.objects.get(user__username="gpt-judge").agent == "llm"
    first = Annotation.objects.get(item__external_id="q1", annotator=human)
    assert (first.value, first.skipped, first.time_spent_ms, first.source) == (JUDGED, False, 5300, "import")
    normalised = Annotation.objects.get(annotator__user__username="gpt-judge")
    assert normalised.value == {"p1": 1, "p2": 1}  # "1" read as 1, exactly as a browser submit
    skip = Annotation.objects.get(item__external_id="q2")
    assert (skip.value, skip.skipped, skip.skip_reason, skip.flagged, skip.flag_comment) == (
        None, True, "unsure", True, "candidates look odd")


def test_the_same_file_twice_stores_each_annotation_once(tmp_path: Path, task: Task) -> None:
    path = write(tmp_path / "a.jsonl", jsonl([line(), line(annotator="ext-ann-2")]))
    run(path)
    assert run(path).splitlines() == ["task 'Rerank': 0 added, 2 unchanged, 0 replaced"]
    assert Annotation.objects.count() == 2 and Annotator.objects.count() == 2


def test_a_different_answer_is_refused_unless_replace_keeps_the_old_one(tmp_path: Path, task: Task) -> None:
    run(write(tmp_path / "a.jsonl", jsonl([line()])))
    changed = write(tmp_path / "b.jsonl", jsonl([line(value={"p1": 0, "p2": 0})]))
    error = refused(changed)
    assert """b.jsonl line 1, field "value": annotator 'ext-ann-1' already answered item 'q1' with""" in error
    assert run(changed, replace=True).splitlines() == ["task 'Rerank': 0 added, 0 unchanged, 1 replaced"]
    annotation = Annotation.objects.get()
    assert annotation.value == {"p1": 0, "p2": 0}
    assert list(annotation.revisions.values_list("value", "skipped")) == [({"p1": 1, "p2": 0}, False)]


@pytest.mark.parametrize(("row", "field", "message"), [
    (line(value={"p1": 1}), "value", "candidates not judged: ['p2']"),
    (line(value={"p1": 2, "p2": 0}), "value.p1", "must be 0 or 1, got 2"),
    (line(value={"p1": 1, "p2": 0, "p9": 1}), "value", "unknown candidate ids: ['p9']"),
    (line(item="nope"), "item", "no item with id 'nope' in task 'Rerank'"),
    (line(annotator_agent="robot"), "annotator_agent", "must be \"human\" or \"llm\", got 'robot'"),
    (line(annotator="bad name!"), "annotator", "'bad name!': Enter a valid username"),
    (line(skipped=True), "value", "a skipped annotation has no value"),
    (line(value=None), "value", "is required"),
    (line(time_spent_ms=-5), "time_spent_ms", "must be a whole number of milliseconds"),
    (line(batch="no-such-batch"), "batch", "no batch named 'no-such-batch' in task 'Rerank'"),
    (line(submitted_at="yesterday"), "submitted_at", "'yesterday' is not an ISO 8601 time"),
    (line(submitted_at=1767225600), "submitted_at", "must be an ISO 8601 time with a time zone"),
    (line(submitted_at="2026-03-01T14:05:00"), "submitted_at", "'2026-03-01T14:05:00' has no time zone"),
    (line(submitted_at="2999-01-01T00:00:00Z"), "submitted_at", "'2999-01-01T00:00:00Z' is later than the import"),
])
def test_bad_lines_name_line_and_field_and_store_nothing(tmp_path: Path, task: Task, row: dict, field: str,
                                                         message: str) -> None:
    error = refused(write(tmp_path / "bad.jsonl", jsonl([line(item="q2", annotator="fine"), row])))
    assert f'bad.jsonl line 2, field "{field}": {message}' in error


def test_answers_without_a_time_share_the_import_s_time_and_given_times_are_kept(tmp_path: Path,
                                                                                task: Task) -> None:
    """The file's line order never becomes an order of the answers: the model would stamp each inserted row with
    its own microsecond, in line order (docs/ppi.md, "Stopping")."""
    rows = [line(annotator=f"ann-{k}") for k in range(6)]
    rows += [line(annotator="dated", submitted_at="2026-03-01T14:05:00+01:00"),
             line(annotator="dated", item="q2", value={"c1": 1, "c2": 0, "c3": 0}, submitted_at="2026-02-27T09:00:00Z")]
    run(write(tmp_path / "a.jsonl", jsonl(rows)))
    undated = Annotation.objects.exclude(annotator__user__username="dated")
    assert undated.count() == 6 and undated.values("submitted_at").distinct().count() == 1
    dated = dict(Annotation.objects.filter(annotator__user__username="dated")
                 .values_list("item__external_id", "submitted_at"))
    assert {k: v.isoformat() for k, v in dated.items()} == {"q1": "2026-03-01T13:05:00+00:00",
                                                            "q2": "2026-02-27T09:00:00+00:00"}
    # a replaced answer takes the new line's time; the old one's stays on the revision
    run(write(tmp_path / "b.jsonl", jsonl([line(annotator="dated", value={"p1": 0, "p2": 0},
                                                submitted_at="2026-03-02T08:00:00Z")])), replace=True)
    replaced = Annotation.objects.get(annotator__user__username="dated", item__external_id="q1")
    assert replaced.submitted_at.isoformat() == "2026-03-02T08:00:00+00:00"
    assert replaced.revisions.get().previous_submitted_at.isoformat() == "2026-03-01T13:05:00+00:00"


def test_a_repeated_answer_within_the_file_is_refused(tmp_path: Path, task: Task) -> None:
    error = refused(write(tmp_path / "d.jsonl", jsonl([line(), line(item="q2"), line()])))
    assert """d.jsonl line 3, field "item": annotator 'ext-ann-1' already answers item 'q1' on line 1""" in error


def test_an_existing_user_who_is_not_an_annotator_is_refused(tmp_path: Path, task: Task, carol) -> None:
    error = refused(write(tmp_path / "c.jsonl", jsonl([line(annotator="carol")])))
    assert """c.jsonl line 1, field "annotator": user 'carol' exists but is not an annotator""" in error


def test_an_annotator_keeps_their_agent(tmp_path: Path, task: Task, alice) -> None:
    error = refused(write(tmp_path / "k.jsonl", jsonl([line(annotator="alice", annotator_agent="llm")])))
    assert """k.jsonl line 1, field "annotator_agent": annotator 'alice' exists as 'human'""" in error
    run(write(tmp_path / "ok.jsonl", jsonl([line(annotator="alice")])))
    assert Annotation.objects.get().annotator == alice


def test_a_file_with_the_old_field_name_annotator_kind_still_imports(tmp_path: Path, task: Task) -> None:
    old = {"item": "q1", "annotator": "old-judge", "annotator_kind": "llm", "value": JUDGED, "confidence": 0.5}
    run(write(tmp_path / "old.jsonl", jsonl([old])))
    assert Annotator.objects.get(user__username="old-judge").agent == "llm"
    assert Annotation.objects.get().confidence == 0.5


def test_a_line_whose_old_and_new_agent_fields_disagree_is_refused(tmp_path: Path, task: Task) -> None:
    error = refused(write(tmp_path / "both.jsonl", jsonl([line(annotator_kind="llm")])))
    assert ("""both.jsonl line 1, field "annotator_agent": says 'human' but the old field 'annotator_kind' """
            """says 'llm'""") in error


def test_annotations_can_name_their_batch(tmp_path: Path, task: Task) -> None:
    batch = Batch.objects.create(task=task, name="round-1", language="dan-Latn")
    add_pool_items(batch)
    run(write(tmp_path / "b.jsonl", jsonl([line(batch="round-1")])))
    assert Annotation.objects.get().batch == batch
    counted = dict(BatchItem.objects.filter(batch=batch).values_list("item__external_id", "human_answers"))
    assert counted["q1"] == 1, "imported answers count toward the batch's overlap like browser answers"


def test_unknown_tasks_and_broken_files_are_refused(tmp_path: Path, task: Task) -> None:
    with pytest.raises(CommandError, match="no task named 'Nope'"):
        run(write(tmp_path / "a.jsonl", jsonl([line()])), task_name="Nope")
    assert "e.jsonl: the file has no annotations" in refused(write(tmp_path / "e.jsonl", b"\n"))
    error = refused(write(tmp_path / "t.jsonl", jsonl([line()]) + b'{"item": "q2", "annot\n'))
    assert "t.jsonl line 2: invalid JSON" in error


def test_the_api_imports_for_admins_only(client: Client, task: Task, carol, alice, dave) -> None:
    content = jsonl([line(), line(item="q2", annotator="ext-ann-2", value={"c1": 1, "c2": 0, "c3": 0})])
    for user in (alice.user, dave):
        client.force_login(user)
        response = client.post("/api/v1/annotations/import/", {"file": upload("a.jsonl", content), "task": "Rerank"})
        assert response.status_code == 403
    assert not Annotation.objects.exists()
    client.force_login(carol)
    response = client.post("/api/v1/annotations/import/", {"file": upload("a.jsonl", content), "task": "Rerank"})
    assert response.status_code == 201
    assert response.json() == {"task": "Rerank", "added": 2, "unchanged": 0, "replaced": 0,
                               "annotators_created": ["ext-ann-1", "ext-ann-2"], "annotators_excluded": []}
    again = client.post("/api/v1/annotations/import/", {"file": upload("a.jsonl", content), "task": str(task.pk)})
    assert again.json()["unchanged"] == 2 and Annotation.objects.count() == 2


def test_the_api_answers_400_with_the_problems(client: Client, task: Task, carol) -> None:
    client.force_login(carol)
    before = state()
    response = client.post("/api/v1/annotations/import/", {"file": upload("a.jsonl", jsonl([line(value={})])),
                                                           "task": "Rerank"})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"file": "a.jsonl", "line": 1, "field": "value",
                                           "message": "candidates not judged: ['p1', 'p2']"}]}
    missing = client.post("/api/v1/annotations/import/", {"file": upload("a.jsonl", b"{}"), "task": "Nope"})
    assert missing.json() == {"errors": [{"file": "a.jsonl", "line": None, "field": "task",
                                          "message": "no task named 'Nope'"}]}
    assert state() == before
