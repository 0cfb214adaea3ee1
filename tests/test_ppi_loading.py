"""Reading a task's answers into PPI's numbers (agreement/ppi/ppi_loading.py) and the estimates document built from
them (measures/ppi/task_estimates.py): every kind's estimands, the mean of several humans, systems and their
differences, and the inputs refused with a message naming the problem."""
from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from agreement.ppi.ppi_loading import PPIInputError, load_numbers
from annotation.models import Annotation, Annotator
from kinds.kind_registry import KINDS
from measures.ppi.task_estimates import estimates_document, overall
from tasks_app.models import Task
from tests.kind_samples import SAMPLES, SampleTable
from tests.ppi_helpers import JUDGE, rated_likert_study
from tests.report_builders import annotator_named, build_task, import_answers, import_study

pytestmark = pytest.mark.django_db


def test_likert_numbers_take_the_mean_of_several_humans_and_match_ppi_python() -> None:
    labelled = list(range(0, 60, 3))  # 20 of 60 items
    task, truth = rated_likert_study("ppi-likert", 60, labelled, seed=3)
    numbers = load_numbers(task, JUDGE)
    assert numbers.estimands == ["rating:overall"] and numbers.bounds == [(1.0, 7.0)]
    assert int(numbers.labelled.sum()) == 20 and numbers.n_human_answers == 20 + 7
    assert numbers.n_annotators_scored == 2
    # item 1 (position 0) was rated by alice (truth) and bob (truth + 1, clipped): its value is their mean
    assert numbers.human[0, 0] == pytest.approx((truth[0] + min(truth[0] + 1, 7)) / 2)
    assert numbers.human[3, 0] == truth[3]  # alice alone
    doc = estimates_document(numbers, alpha=0.05)
    row = overall(doc, "rating:overall")
    mask = numbers.labelled
    y, yhat, yhat_u = numbers.human[mask, 0], numbers.judge[mask, 0], numbers.judge[~mask, 0]
    assert row["estimate"] == pytest.approx(float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_u))[0]), abs=1e-9)
    low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert (row["classical_low"], row["classical_high"]) == pytest.approx(classical_mean_ci(y, alpha=0.05), abs=1e-9)
    assert row["n"] == 20 and row["n_unlabelled"] == 40 and doc["n_items"] == 60
    assert row["judge_mean_error"] == pytest.approx(float(np.mean(yhat - y)))
    assert doc["sampling"].startswith("uniform") and "mean of the human answers" in doc["item_value"]


def test_systems_get_their_own_estimates_and_a_difference() -> None:
    systems = ["sys-a", "sys-b"] * 40
    task, _truth = rated_likert_study("ppi-systems", 80, list(range(0, 80, 2)) + list(range(1, 80, 4)), seed=4,
                                      systems=systems)
    doc = estimates_document(load_numbers(task, JUDGE))
    by_system = {r["group"]: r for r in doc["estimates"] if r["scope"] == "system"}
    assert sorted(by_system) == ["sys-a", "sys-b"]
    assert by_system["sys-a"]["n"] + by_system["sys-a"]["n_unlabelled"] == 40
    (diff,) = doc["differences"]
    assert (diff["a"], diff["b"], diff["estimand"]) == ("sys-a", "sys-b", "rating:overall")
    a, b = by_system["sys-a"], by_system["sys-b"]
    assert diff["estimate"] == pytest.approx(a["estimate"] - b["estimate"])
    half = np.hypot(a["half_width"], b["half_width"])
    assert diff["ci_high"] - diff["estimate"] == pytest.approx(half)


def judged(kind: str, name: str, records: list[dict], judge: list, humans: dict[str, list], **fields) -> object:
    task = build_task(kind, name, records, **fields)
    rows = [{"item": str(i + 1), "annotator": JUDGE, "annotator_agent": "llm", "value": v} for i, v in enumerate(judge)]
    rows += [{"item": str(i + 1), "annotator": who, "value": v}
             for who, values in humans.items() for i, v in enumerate(values) if v is not None]
    import_answers(task, rows)
    return task


def test_each_kind_gives_its_estimands() -> None:
    sts = judged("sts", "ppi-sts", [{"sentence1": f"a{i}", "sentence2": f"b{i}"} for i in range(4)],
                 [4, 3, 2, 5], {"alice": [3, 3, None, None], "bob": [4, None, None, None]})
    numbers = load_numbers(sts, JUDGE)
    assert numbers.estimands == ["similarity"] and numbers.human[0, 0] == 3.5 and np.isnan(numbers.human[2, 0])
    assert numbers.bounds == [(0.0, 5.0)]  # what the confidence sequence's bets are capped by: the scale

    docs = [{"id": "d1", "text": "x"}, {"id": "d2", "text": "y"}]
    graded = judged("graded_relevance", "ppi-graded", [{"query": f"q{i}", "documents": docs} for i in range(3)],
                    [{"d1": 9, "d2": 2}, {"d1": 7, "d2": 7}, {"d1": 0, "d2": 10}],
                    {"alice": [{"d1": 8, "d2": 6}, None, None]})
    numbers = load_numbers(graded, JUDGE)
    assert numbers.estimands == ["grade", "share_at_least:7"]  # 7 on 0–10 (docs/retrieval.md's judges)
    assert list(numbers.judge[0]) == [5.5, 0.5] and list(numbers.judge[1]) == [7.0, 1.0]
    assert list(numbers.human[0]) == [7.0, 0.5]
    assert load_numbers(graded, JUDGE, threshold=5).estimands == ["grade", "share_at_least:5"]
    assert numbers.bounds == [(0.0, 10.0), (0.0, 1.0)]  # a grade on the scale, a share 0–1

    labels = judged("classification", "ppi-labels", [{"text": f"t{i}"} for i in range(3)], ["pos", "neg", "pos"],
                    {"alice": ["pos", "neg", None], "bob": ["neg", None, None]}, labels=["neg", "pos"])
    numbers = load_numbers(labels, JUDGE)
    assert numbers.estimands == ["share:neg", "share:pos"]
    assert list(numbers.human[0]) == [0.5, 0.5] and list(numbers.judge[2]) == [0.0, 1.0]
    assert numbers.bounds == [(0.0, 1.0), (0.0, 1.0)]

    pairwise = judged("pairwise", "ppi-pairwise", [{"context": "c", "a": f"a{i}", "b": f"b{i}"} for i in range(2)],
                      ["a", "tie"], {"alice": ["b", None], "bob": ["a", None], "carl": ["a", None]})
    numbers = load_numbers(pairwise, JUDGE)
    assert numbers.estimands == ["share:a", "share:b", "share:tie"]
    assert numbers.human[0] == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_a_person_as_judge_is_refused() -> None:
    task, _ = rated_likert_study("ppi-person", 10, [0, 1, 2])
    with pytest.raises(PPIInputError, match="'alice' is a person"):
        load_numbers(task, "alice")
    with pytest.raises(PPIInputError, match="no annotator named 'nobody'"):
        load_numbers(task, "nobody")


def test_a_judge_that_missed_items_is_refused_naming_them() -> None:
    task, _ = rated_likert_study("ppi-missing", 10, [0, 1, 2])
    Annotation.objects.filter(annotator__user__username=JUDGE, item__external_id__in=["4", "9"]).delete()
    with pytest.raises(PPIInputError, match=r"answered 8 of the 10 items .* Missing \(2\): '4', '9'"):
        load_numbers(task, JUDGE)
    # a skip is no answer either
    Annotation.objects.filter(annotator__user__username=JUDGE, item__external_id="5").update(skipped=True)
    with pytest.raises(PPIInputError, match=r"Missing \(3\): '4', '5', '9'"):
        load_numbers(task, JUDGE)


def test_no_human_labels_is_refused() -> None:
    task, _ = rated_likert_study("ppi-nohumans", 10, [])
    with pytest.raises(PPIInputError, match="no human answers"):
        load_numbers(task, JUDGE)


def test_answers_off_the_tasks_scale_are_refused_naming_item_and_annotator() -> None:
    task, _ = rated_likert_study("ppi-offscale", 10, [0, 1, 2])
    # an answer stored from a study run on 1–9 (written straight to the table, as an old import could have)
    Annotation.objects.create(item=task.items.get(external_id="5"), annotator=annotator_named("erin"),
                              value={"overall": 9}, source="import")
    with pytest.raises(PPIInputError, match=r"item '5', annotator 'erin': value.overall: 9 is not on the task's "
                                            r"scale 1–7"):
        load_numbers(task, JUDGE)


def test_kinds_without_a_mean_are_refused() -> None:
    task = build_task("reranking", "ppi-rerank", [{"query": "q", "candidates": [{"id": "c1", "text": "t"}]}])
    annotator_named(JUDGE, Annotator.Agent.LLM)
    with pytest.raises(PPIInputError, match="reranking tasks have no PPI estimate"):
        load_numbers(task, JUDGE)


def test_import_keeps_system_and_group_beside_the_payload_where_annotators_never_see_them(tmp_path) -> None:
    records = [{"context": "c1", "text": "same output", "system": "sys-a", "group": "news"},
               {"context": "c1", "text": "same output", "system": "sys-b", "group": "news"},  # two systems: two items
               {"context": "c2", "text": "other"}]
    answers = [{"item": str(i), "annotator": JUDGE, "annotator_agent": "llm", "value": {"overall": 5}}
               for i in (1, 2, 3)] + [{"item": "1", "annotator": "alice", "value": {"overall": 4}}]
    task = import_study(tmp_path, "likert", "ppi-import", records, answers, axes="overall")
    items = list(task.items.order_by("position").values_list("system", "group", "payload"))
    assert [(s, g) for s, g, _p in items] == [("sys-a", "news"), ("sys-b", "news"), ("", "")]
    assert all(set(p) == {"context", "text"} for _s, _g, p in items)  # the loop sends the payload: no system in it
    numbers = load_numbers(task, JUDGE)
    assert numbers.strata == {"system": ["sys-a", "sys-b", ""], "group": ["news", "news", ""]}
    csv_file = tmp_path / "rows.csv"
    csv_file.write_text("id,context,text,system\nx1,c,t,sys-a\nx2,c,t,sys-b\n")
    call_command("import_task", str(csv_file), "--name=ppi-csv-import", "--kind=likert", "--axes=overall",
                 "--language=eng-Latn", stdout=io.StringIO())
    assert list(Task.objects.get(name="ppi-csv-import").items.order_by("position").values_list("system", flat=True)) \
        == ["sys-a", "sys-b"]


def test_every_kind_with_estimands_brings_its_random_ppi_samples() -> None:
    assert set(SampleTable("ppi_answer")) == {name for name, kind in KINDS.items() if kind.ppi_estimands}


@pytest.mark.parametrize("kind", list(SampleTable("ppi_answer")))
def test_every_kinds_estimates_match_ppi_python(kind: str) -> None:
    """Random answers of 80 items, people on 30: each estimand's PPI++ and classical interval is ppi-python's.
    The records and random answers are each kind's own (its samples.py `ppi_*`)."""
    rng = np.random.default_rng(len(kind))
    samples = SAMPLES[kind]
    record, fields = samples.ppi_record, samples.ppi_task_fields

    def answer() -> Any:
        return samples.ppi_answer(rng)

    humans = [answer() for _ in range(30)]
    judge = [h if rng.random() < 0.7 else answer() for h in humans] + [answer() for _ in range(50)]
    task = judged(kind, f"ppi-{kind}-all", [record(i) for i in range(80)], judge,
                  {"alice": humans + [None] * 50}, **fields)
    numbers = load_numbers(task, JUDGE)
    doc = estimates_document(numbers)
    assert len(doc["estimates"]) == len(numbers.estimands) >= 1
    for column, row in enumerate(doc["estimates"]):
        y, yhat, yhat_u = numbers.human[:30, column], numbers.judge[:30, column], numbers.judge[30:, column]
        assert row["estimate"] == pytest.approx(float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_u))[0]),
                                                abs=1e-9), row["estimand"]
        low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
        assert (row["classical_low"], row["classical_high"]) == pytest.approx(classical_mean_ci(y, alpha=0.05),
                                                                              abs=1e-9)
