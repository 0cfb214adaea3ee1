"""Every task kind imports the same way through the command, the upload page (carol) and the API (carol)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.management.commands.load_demo import demo_tasks
from tasks_app.core.kinds import content_digest
from tasks_app.models import Item, Task
from tests.import_samples import CSV_SAMPLES, SAMPLES, cli_import, csv_bytes, gold_by_id, jsonl, upload, write

pytestmark = pytest.mark.django_db


def via_cli(tmp_path: Path, client: Client, filename: str, content: bytes, fields: dict[str, Any]) -> None:
    path = write(tmp_path / filename, content)
    options = {k: v for k, v in fields.items() if k not in ("name", "kind", "language")}
    cli_import(path, fields["name"], fields["kind"], fields["language"], **options)


def via_page(tmp_path: Path, client: Client, filename: str, content: bytes, fields: dict[str, Any]) -> None:
    client.force_login(User.objects.get(username="carol"))
    response = client.post("/tasks/import/", {"file": upload(filename, content), **fields})
    assert response.status_code == 302, response.content.decode()[-2000:]


def via_api(tmp_path: Path, client: Client, filename: str, content: bytes, fields: dict[str, Any]) -> None:
    client.force_login(User.objects.get(username="carol"))
    response = client.post("/api/v1/tasks/import/", {"file": upload(filename, content), **fields})
    assert response.status_code == 201, response.content
    assert response.json()["created_task"] is True


ENTRY_POINTS: dict[str, Callable[..., None]] = {"cli": via_cli, "page": via_page, "api": via_api}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("kind", SAMPLES)
def test_every_kind_imports_its_items_and_gold(kind: str, entry: str, tmp_path: Path, client: Client,
                                               request: pytest.FixtureRequest) -> None:
    if entry != "cli":
        request.getfixturevalue("carol")
    options, records, gold = SAMPLES[kind]
    fields = {"name": f"{kind} task", "kind": kind, "language": "eng-Latn", **options}
    ENTRY_POINTS[entry](tmp_path, client, f"{kind}.jsonl", jsonl(records), fields)

    task = Task.objects.get(name=f"{kind} task")
    assert task.kind == kind and task.language == "eng-Latn"
    assert list(Item.objects.filter(task=task).order_by("position").values_list("external_id", flat=True)) == [
        r["id"] for r in records]
    stored_gold = gold_by_id(task)
    for external_id, value in gold.items():
        assert stored_gold[external_id] == value


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("kind", CSV_SAMPLES)
def test_flat_kinds_import_from_csv_like_from_jsonl(kind: str, entry: str, tmp_path: Path, client: Client,
                                                   request: pytest.FixtureRequest) -> None:
    if entry != "cli":
        request.getfixturevalue("carol")
    options, records, gold = SAMPLES[kind]
    fields = {"name": f"{kind} csv", "kind": kind, "language": "eng-Latn", **options}
    ENTRY_POINTS[entry](tmp_path, client, f"{kind}.csv", csv_bytes(*CSV_SAMPLES[kind]), fields)

    task = Task.objects.get(name=f"{kind} csv")
    payloads = dict(Item.objects.filter(task=task).values_list("external_id", "payload"))
    for record in records:
        expected = {k: v for k, v in record.items() if k not in ("id", "label", "score", "preferred", "scores")}
        assert payloads[record["id"]] == expected
    assert gold_by_id(task) == gold


def test_classification_payload_is_the_text_and_gold_stays_apart(tmp_path: Path) -> None:
    _, records, _ = SAMPLES["classification"]
    cli_import(write(tmp_path / "c.jsonl", jsonl(records)), "Sentiment", "classification", labels="pos,neg")
    item = Item.objects.get(external_id="c1")
    assert item.payload == {"text": "A wonderful film."}
    assert item.uid == content_digest("Sentiment", "classification", {"text": "A wonderful film."})
    assert not hasattr(Item.objects.get(external_id="c3"), "gold") or gold_by_id(item.task).get("c3") is None


def test_mteb_positive_and_negative_lists_become_shuffled_candidates_with_gold(tmp_path: Path) -> None:
    _, records, _ = SAMPLES["reranking"]
    cli_import(write(tmp_path / "r.jsonl", jsonl(records)), "Rerank", "reranking")
    item = Item.objects.get(external_id="q2")
    texts = {c["id"]: c["text"] for c in item.payload["candidates"]}
    gold = gold_by_id(item.task)["q2"]
    assert sorted(texts) == ["c1", "c2", "c3"]
    assert {texts[c] for c, rel in gold.items() if rel == 1} == {"Copenhagen is the capital."}
    assert {texts[c] for c, rel in gold.items() if rel == 0} == {"Oslo is in Norway.", "Cats sleep a lot."}
    assert Item.objects.get(external_id="q1").payload["instruction"] == "Judge the passage."


def test_the_label_set_is_inferred_from_gold_when_not_given(tmp_path: Path) -> None:
    records = [{"text": "a", "label": "sad"}, {"text": "b", "label": "joy"}, {"text": "c", "label": "anger"}]
    out = cli_import(write(tmp_path / "e.jsonl", jsonl(records)), "Emotion", "classification")
    assert Task.objects.get(name="Emotion").labels == ["anger", "joy", "sad"]
    assert "labels: anger, joy, sad" in out


def test_items_without_an_id_get_a_deterministic_one_from_their_content(tmp_path: Path) -> None:
    records = [{"text": "first"}, {"text": "second"}]
    cli_import(write(tmp_path / "a.jsonl", jsonl(records)), "A", "classification", labels="x,y")
    cli_import(write(tmp_path / "b.jsonl", jsonl(records)), "B", "classification", labels="x,y")
    ids_a = list(Item.objects.filter(task__name="A").values_list("external_id", flat=True))
    ids_b = list(Item.objects.filter(task__name="B").values_list("external_id", flat=True))
    assert ids_a == ids_b and len(set(ids_a)) == 2 and all(len(i) == 16 for i in ids_a)
    assert set(Item.objects.filter(task__name="A").values_list("uid", flat=True)).isdisjoint(
        Item.objects.filter(task__name="B").values_list("uid", flat=True))


def test_the_command_prints_what_it_did_and_stores_task_settings(tmp_path: Path) -> None:
    _, records, _ = SAMPLES["sts"]
    instructions = write(tmp_path / "how.md", b"# Rate similarity\n\n0 = unrelated, 5 = same meaning.")
    out = cli_import(write(tmp_path / "sts.jsonl", jsonl(records)), "STS22 en", "sts", scale="0,5", step="0.5",
                     instructions=str(instructions), mteb_task_name="STS22", mteb_subset="en",
                     dataset_revision="abc123")
    assert out.splitlines() == ["created task 'STS22 en' (sts, eng-Latn)", "2 added (2 with gold), 0 unchanged"]
    task = Task.objects.get(name="STS22 en")
    assert (task.scale, task.mteb_task_name, task.mteb_subset, task.dataset_revision) == (
        (0.0, 5.0, 0.5), "STS22", "en", "abc123")
    assert task.instructions.startswith("# Rate similarity")


def test_the_api_answers_with_the_summary(tmp_path: Path, client: Client, carol) -> None:
    client.force_login(carol)
    _, records, _ = SAMPLES["pairwise"]
    body = {"file": upload("p.jsonl", jsonl(records)), "name": "Pairs", "kind": "pairwise", "language": "eng-Latn"}
    summary = client.post("/api/v1/tasks/import/", body).json()
    task = Task.objects.get(name="Pairs")
    assert summary == {"task_id": task.pk, "task": "Pairs", "kind": "pairwise", "language": "eng-Latn",
                       "created_task": True, "added": 2, "added_with_gold": 2, "unchanged": 0, "gold_updated": 0,
                       "labels": [], "updated_fields": [], "warnings": []}


def test_the_demo_datasets_all_import(tmp_path: Path) -> None:
    """Each kind's demo tasks (its samples' `demo`, files in its folder's demo/) import through the command."""
    for kind, spec, folder in demo_tasks():
        options = {key: getattr(spec, key) for key in ("step", "mteb_task_name", "mteb_subset")
                   if getattr(spec, key) is not None}
        for key in ("labels", "axes", "scale"):
            if getattr(spec, key):
                options[key] = ",".join(str(value) for value in getattr(spec, key))
        cli_import(folder / spec.file, spec.name, kind, spec.language, **options)
        lines = [line for line in (folder / spec.file).read_text().splitlines() if line.strip()]
        assert Item.objects.filter(task__name=spec.name).count() == len(lines)
