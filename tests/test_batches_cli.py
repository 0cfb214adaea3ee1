"""The create_annotator and create_batch commands: idempotent, clear errors, the batch id on stdout."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator, AnnotatorLanguage, Batch, BatchItem

from .batch_helpers import fast_password_hashing, make_task  # noqa: F401


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_annotator_creates_a_login_with_languages_and_is_idempotent(db):
    run("create_annotator", "hana", "--languages", "eng-Latn,dan-Latn:fluent", "--password", "a-long-secret-9")
    run("create_annotator", "hana", "--languages", "eng-Latn,ara-Arab:near-native")
    annotator = Annotator.objects.get(user__username="hana")
    assert annotator.agent == "human"
    assert annotator.user.check_password("a-long-secret-9")
    assert annotator.user.groups.filter(name="annotator").exists()
    assert dict(AnnotatorLanguage.objects.filter(annotator=annotator).values_list("language", "proficiency")) == {
        "eng-Latn": "native", "dan-Latn": "fluent", "ara-Arab": "near-native"}


def test_create_annotator_makes_llm_annotators(db):
    run("create_annotator", "gpt-4o", "--languages", "eng-Latn", "--agent", "llm")
    annotator = Annotator.objects.get(user__username="gpt-4o")
    assert (annotator.agent, annotator.user.has_usable_password()) == ("llm", False)


def test_create_annotator_names_a_bad_language_code(db):
    with pytest.raises(CommandError, match="'english' is not an MTEB-style code"):
        run("create_annotator", "ivan", "--languages", "english")
    assert not Annotator.objects.exists()


def test_create_batch_prints_the_id_and_returns_the_same_batch_when_run_again(alice, db):
    task = make_task(n=3)
    first = run("create_batch", task.name, "--language", "eng-Latn", "--overlap", "2", "--annotators", "alice",
                "--name", "pilot")
    again = run("create_batch", task.name, "--language", "eng-Latn", "--overlap", "2", "--annotators", "alice",
                "--name", "pilot")
    batch = Batch.objects.get()
    assert first.strip() == again.strip() == str(batch.pk)
    assert (batch.overlap, batch.language, BatchItem.objects.filter(batch=batch).count()) == (2, "eng-Latn", 3)
    assert list(batch.assignees.values_list("user__username", flat=True)) == ["alice"]


def test_create_batch_refuses_an_annotator_without_the_language_unless_given_a_reason(bob, db):
    task = make_task(n=1)
    with pytest.raises(CommandError, match="bob do\\(es\\) not list eng-Latn"):
        run("create_batch", task.name, "--language", "eng-Latn", "--overlap", "1", "--annotators", "bob")
    assert not Batch.objects.exists()
    run("create_batch", task.name, "--language", "eng-Latn", "--overlap", "1", "--annotators", "bob",
        "--override-reason", "bilingual")
    assert Batch.objects.get().batchassignee_set.get().override_reason == "bilingual"


def test_create_batch_names_an_unknown_task_or_annotator(alice, db):
    with pytest.raises(CommandError, match="no task named"):
        run("create_batch", "Nope", "--language", "eng-Latn", "--overlap", "1", "--annotators", "alice")
    task = make_task(n=1)
    with pytest.raises(CommandError, match="no annotator named zoe"):
        run("create_batch", task.name, "--language", "eng-Latn", "--overlap", "1", "--annotators", "alice,zoe")
