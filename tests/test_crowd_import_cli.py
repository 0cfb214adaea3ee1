"""Check items in a dataset file (`"check": {...}`, docs/import.md) and the `study_link` / `exclude_annotator`
commands (issue 26, items 1 and 2)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.core.batches import BatchSpec, create_batch
from annotation.crowd.models import StudyLink
from annotation.models import BatchItem
from tasks_app.models import Item, ItemCheck, ItemGold
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick annotator creation)
from tests.crowd_helpers import make_crowd_task
from tests.import_samples import cli_import, counts, jsonl, write

pytestmark = pytest.mark.django_db

RECORDS = [
    {"id": "w1", "text": "A fine film.", "label": "positive"},
    {"id": "w2", "text": "A dull film.", "label": "negative"},
    {"id": "att", "text": "To show you read this, choose negative.", "check": {"expected": "negative"}},
    {"id": "pr", "text": "What a lovely day.", "check": {"expected": "positive", "role": "practice",
                                                         "feedback": "A lovely day is positive."}},
]


def test_check_items_are_imported_apart_from_gold_and_never_drawn_into_batches(tmp_path: Path):
    cli_import(write(tmp_path / "d.jsonl", jsonl(RECORDS)), "Checked", "classification", labels="positive,negative")
    checks = {c.item.external_id: (c.role, c.expected, c.feedback) for c in ItemCheck.objects.select_related("item")}
    assert checks == {"att": ("attention", "negative", ""), "pr": ("practice", "positive", "A lovely day is positive.")}
    assert set(ItemGold.objects.values_list("item__external_id", flat=True)) == {"w1", "w2"}
    assert "check" not in Item.objects.get(external_id="att").payload  # the payload (what annotators see) has no answer
    task = Item.objects.get(external_id="att").task
    batch, _ = create_batch(BatchSpec(task=task, overlap=1))
    assert set(BatchItem.objects.filter(batch=batch).values_list("item__external_id", flat=True)) == {"w1", "w2"}


@pytest.mark.parametrize("check, field, message", [
    ({"expected": "maybe"}, "check.expected (value)", "unknown label 'maybe'"),
    ({"role": "attention"}, "check.expected", "is required"),
    ({"expected": "negative", "role": "trap"}, "check.role", "must be one of attention, practice"),
    ({"expected": "negative", "answer": "x"}, "check.answer", "unknown field"),
    ("negative", "check", "must be an object"),
])
def test_a_bad_check_names_the_file_line_and_field_and_imports_nothing(tmp_path: Path, check, field, message):
    records = [*RECORDS[:2], {"id": "bad", "text": "Choose negative.", "check": check}]
    before = counts()
    with pytest.raises(CommandError) as refused:
        cli_import(write(tmp_path / "bad.jsonl", jsonl(records)), "Bad", "classification", labels="positive,negative")
    assert f'bad.jsonl line 3, field "{field}"' in str(refused.value) and message in str(refused.value)
    assert counts() == before and not ItemCheck.objects.exists()


def test_study_link_prints_a_prolific_link_with_its_url_parameters():
    batch, _ = create_batch(BatchSpec(task=make_crowd_task(n=5), overlap=2))
    out, err = io.StringIO(), io.StringIO()
    call_command("study_link", str(batch.pk), "--quota", "3", "--minutes", "20", "--completion-code", "ABC123",
                 "--prolific", "--base-url", "https://hume.example.org", stdout=out, stderr=err)
    link = StudyLink.objects.get()
    assert out.getvalue().strip() == (f"https://hume.example.org/study/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                                      "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert len(link.token) >= 32 and link.platform == "prolific" and (link.quota, link.minutes) == (3, 20)
    assert "quota 3, 20 min, completion code ABC123" in err.getvalue()


@pytest.mark.parametrize("args, message", [
    (["--quota", "6", "--minutes", "20", "--completion-code", "C"], "--quota: 6 is more than the 5 items"),
    (["--quota", "2", "--minutes", "0", "--completion-code", "C"], "--minutes: must be between 1 and 1440"),
    (["--quota", "2", "--minutes", "5", "--completion-code", "=HYPERLINK(1)"], "--completion-code: must be 1 to 64"),
    (["--quota", "2", "--minutes", "5", "--completion-code", "C", "--gold-rate", "2"], "--gold-rate: must be between"),
])
def test_study_link_refuses_bad_settings_naming_the_option(args, message):
    batch, _ = create_batch(BatchSpec(task=make_crowd_task(n=5), overlap=1))
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("study_link", str(batch.pk), *args)
    assert not StudyLink.objects.exists()


def test_study_link_refuses_a_closed_batch_and_an_unknown_one():
    batch, _ = create_batch(BatchSpec(task=make_crowd_task(n=5), overlap=1))
    batch.is_open = False
    batch.save(update_fields=["is_open"])
    with pytest.raises(CommandError, match="--batch: the batch .* is closed"):
        call_command("study_link", str(batch.pk), "--quota", "2", "--minutes", "5", "--completion-code", "C")
    with pytest.raises(CommandError, match="BATCH: no batch with id '999999'"):
        call_command("study_link", "999999", "--quota", "2", "--minutes", "5", "--completion-code", "C")


def test_exclude_annotator_needs_a_known_name_and_a_reason():
    with pytest.raises(CommandError, match="no annotator named 'nobody'"):
        call_command("exclude_annotator", "nobody", "--reason", "x")


def test_a_sample_never_draws_check_items(tmp_path: Path):
    from tasks_app.sampling import sample_task

    cli_import(write(tmp_path / "d.jsonl", jsonl(RECORDS)), "Sampled", "classification", labels="positive,negative")
    task = Item.objects.get(external_id="att").task
    result = sample_task(task, 10, seed=1)
    assert result.size == 2  # the two work items; the attention and practice items are not data
    assert set(Item.objects.filter(task=task, in_sample=True).values_list("external_id", flat=True)) == {"w1", "w2"}
