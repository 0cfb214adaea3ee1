"""`manage.py escalate` and `manage.py alt_test` (docs/escalation.md): three judges answer through a real local
chat-completions server (two with log-probs, one with simulated annotators), the cascade escalates exactly the
items it should and the human batch holds exactly those; bad input is refused with the reason and writes nothing."""
from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.core.annotators import create_annotator
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotation, Annotator, Batch, BatchItem
from measures.escalation.alternative_annotator_test import alt_test
from measures.escalation.calibration import clopper_pearson_upper
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer, Seen

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_llm_endpoints")]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-test-escalate")


def marker(n: int) -> str:
    return f"[m{n:02d}]"


# Items 1-90 have two people's label "negative" (make_task's items); 91-110 have no human label.
# cheap: confident (0.9) and right on 1-40 and 91-95, unsure (0.2) and wrong elsewhere.
# mid:   confident (0.8) and right on 41-80 and 96-100, unsure (0.1) and wrong elsewhere.
# strong: no log-probs, two simulated annotators; only 10 calibration items are left to it (81-90): < 30, so it
# covers nothing. Expected: cheap's threshold is the grid's first λ above 0.2 (λ ≤ 0.2 adds 50 errors), mid's the
# first above 0.1 on items 41-90, and the items escalated are 101-110.
def plan(judge: str, n: int) -> tuple[str, float]:
    if judge == "cheap":
        return ("negative", 0.9) if n <= 40 or 91 <= n <= 95 else ("positive", 0.2)
    if judge == "mid":
        return ("negative", 0.8) if 41 <= n <= 80 or 96 <= n <= 100 else ("positive", 0.1)
    return ("negative", 0.5)


def judge_of(seen: Seen) -> str:
    return seen.body["model"].removeprefix("model-")


def item_number(seen: Seen) -> int:
    return int(seen.marker.strip("[]m"))


def run_to_end(annotator: Annotator, task) -> None:
    run = create_run(annotator, task=task)
    for _ in range(50):
        if execute_run(run.pk) != "continue":
            return
    raise AssertionError("the run never finished")


def labelled_task():
    task, items, _ = make_task("classification", 110, name="escalation task")
    for name in ("person-1", "person-2"):
        person = create_annotator(name)
        Annotation.objects.bulk_create([Annotation(item=item, annotator=person, value="negative")
                                        for item in items[:90]])
    return task, items


def escalate(*args: str) -> dict:
    out = StringIO()
    call_command("escalate", *args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_three_judges_on_a_real_server_escalate_exactly_the_unsure_items_into_a_human_batch() -> None:
    task, _ = labelled_task()
    server = ChatServer(answer_for=lambda seen: plan(judge_of(seen), item_number(seen))[0],
                        answer_probability=lambda seen: plan(judge_of(seen), item_number(seen))[1])
    with server:
        judges = [make_judge("cheap", server.base_url, logprobs=True, max_concurrency=8),
                  make_judge("mid", server.base_url, logprobs=True, max_concurrency=8),
                  make_judge("strong", server.base_url, confidence_samples=2, max_concurrency=8)]
        for judge in judges:
            run_to_end(judge.annotator, task)
        assert not any("logprobs" in seen.body for seen in server.seen if judge_of(seen) == "strong")
    confidences = Annotation.objects.filter(annotator=judges[2].annotator).values_list("confidence", flat=True)
    assert len(confidences) == 110 and all(c is not None for c in confidences)  # from simulated annotators

    result = escalate(task.name, "--judges", "cheap,mid,strong", "--alpha", "0.15", "--delta", "0.1",
                      "--batch", "escalated", "--overlap", "2")
    cheap, mid, strong = result["judges"]
    assert (cheap["n_calibration"], cheap["n_covered"], cheap["risk"]) == (90, 40, 0.0)
    assert cheap["threshold"] == pytest.approx(1000 / 4999)  # the first grid point above 0.2 (999.8 / 4999)
    assert (mid["n_calibration"], mid["n_covered"], mid["risk"]) == (50, 40, 0.0)
    assert mid["threshold"] == pytest.approx(500 / 4999)  # the first above 0.1 (499.9 / 4999)
    assert cheap["risk_bound"] == pytest.approx(1 - 0.1 ** (1 / 40))  # 0 errors in 40: 1 − δ^(1/n)
    assert (strong["n_calibration"], strong["threshold"], strong["n_covered"]) == (10, None, 0)
    assert result["calibration"] == {"n_items": 90, "n_covered": 80, "coverage": pytest.approx(80 / 90)}
    assert result["rest"] == {"n_items": 20, "n_decided": 10, "coverage": 0.5, "n_escalated": 10}
    assert [cheap["n_decided"], mid["n_decided"], strong["n_decided"]] == [5, 5, 0]
    assert result["escalated_items"] == [marker(n) for n in range(101, 111)]
    assert result["human_labels_saved"] == 10
    assert [(c["judge"], c["http_requests"], c["prompt_tokens"], c["completion_tokens"]) for c in result["cost"]] == [
        ("cheap", 110, 11_000, 2_200), ("mid", 110, 11_000, 2_200),
        ("strong", 330, 33_000, 6_600)]  # strong: the answer and two simulated annotators per item
    labels = {row["item"]: (row["decided_by"], row["label"])
              for row in escalate(task.name, "--judges", "cheap,mid,strong", "--labels")["labels"]}
    assert labels[marker(1)] == labels[marker(90)] == ("people", "negative")
    assert labels[marker(93)] == ("cheap", "negative") and labels[marker(97)] == ("mid", "negative")
    assert [labels[marker(n)] for n in range(101, 111)] == [("escalated", None)] * 10
    batch = Batch.objects.get(task=task, name="escalated")
    assert (batch.overlap, batch.language, result["batch"]["n_items"]) == (2, task.language, 10)
    assert list(BatchItem.objects.filter(batch=batch).order_by("position")
                .values_list("item__external_id", flat=True)) == [marker(n) for n in range(101, 111)]


def judge_with_confidences(name: str, items, confidence: float | None = 0.9) -> Annotator:
    judge = make_judge(name, "http://127.0.0.1:9/v1").annotator
    Annotation.objects.bulk_create([Annotation(item=item, annotator=judge, value="negative", source="llm",
                                               confidence=confidence) for item in items])
    return judge


@pytest.mark.parametrize(("args", "problem"), [
    (("--judges", "cheap,ghost"), "no annotator named 'ghost'"),
    (("--judges", "cheap,person-1"), "'person-1': a person, not an LLM annotator"),
    (("--judges", "cheap,blind"), "'blind': no answer with a confidence on task"),
    (("--judges", "cheap,cheap"), "judge named twice: cheap"),
    (("--judges", "cheap", "--calibration", "20"),
     "20 human-labelled calibration items; calibration needs at least 30"),
    (("--judges", "cheap", "--alpha", "0"), "alpha must be strictly between 0 and 1"),
    (("--judges", "cheap", "--delta", "1.2"), "delta must be strictly between 0 and 1"),
    (("--judges", "cheap", "--tolerance", "1"), "--tolerance is for rating kinds"),
])
def test_bad_input_is_refused_with_the_reason_and_nothing_is_written(args: tuple[str, ...], problem: str) -> None:
    task, items = labelled_task()
    judge_with_confidences("cheap", items)
    judge_with_confidences("blind", items, confidence=None)
    before = (Batch.objects.count(), Annotation.objects.count())
    with pytest.raises(CommandError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        escalate(task.name, *args, "--batch", "should-not-exist")
    assert (Batch.objects.count(), Annotation.objects.count()) == before


def test_too_few_human_labelled_items_are_refused() -> None:
    task, items = labelled_task()
    Annotation.objects.filter(item__in=items[20:], annotator__agent="human").delete()
    judge_with_confidences("cheap", items)
    with pytest.raises(CommandError, match="20 human-labelled calibration items; calibration needs at least 30"):
        escalate(task.name, "--judges", "cheap")


def test_a_held_out_check_sample_measures_the_judges_agreement() -> None:
    task, items = labelled_task()
    judge = judge_with_confidences("cheap", items)
    Annotation.objects.filter(annotator=judge, item__in=items[:9]).update(value="positive")  # 9 of 90 wrong
    result = escalate(task.name, "--judges", "cheap", "--calibration", "60", "--alpha", "0.3")
    assert result["calibration"]["n_items"] == 60 and result["check"]["n_items"] == 30
    assert result["check"]["n_covered"] == 30  # all confidences 0.9 ≥ the threshold
    wrong_in_check = 9 - round(result["judges"][0]["risk"] * 60)
    assert result["check"]["agreement"] == pytest.approx(1 - wrong_in_check / 30)
    assert result["rest"]["n_escalated"] == 0 and result["escalated_items"] == []


def test_alt_test_command_matches_the_pure_test_and_needs_three_people() -> None:
    task, items, _ = make_task("classification", 40, name="alt task")
    people = [create_annotator(f"rater-{n}") for n in range(3)]
    for n, person in enumerate(people):
        Annotation.objects.bulk_create([Annotation(item=item, annotator=person,
                                                   value="positive" if (i + n) % 4 == 0 else "negative")
                                        for i, item in enumerate(items)])
    judge = judge_with_confidences("alt-judge", items)
    out = StringIO()
    call_command("alt_test", task.name, "--judge", "alt-judge", "--epsilon", "0.2", stdout=out)
    doc = json.loads(out.getvalue())
    humans = {p.name: {item.pk: json.dumps("positive" if (i + n) % 4 == 0 else "negative")
                       for i, item in enumerate(items)} for n, p in enumerate(people)}
    expected = alt_test({item.pk: json.dumps("negative") for item in items}, humans, "accuracy", 0.2)
    assert doc["winning_rate"] == expected.winning_rate and doc["passed"] == expected.passed
    assert doc["advantage_probability"] == pytest.approx(expected.advantage_probability)
    assert [a["annotator"] for a in doc["annotators"]] == ["rater-0", "rater-1", "rater-2"]
    Annotation.objects.filter(annotator=people[2]).delete()
    with pytest.raises(CommandError, match="needs at least 3 human annotators on the items; task 'alt task' has 2"):
        call_command("alt_test", task.name, "--judge", "alt-judge", stdout=StringIO())
    with pytest.raises(CommandError, match="'rater-0': a person"):
        call_command("alt_test", task.name, "--judge", "rater-0", stdout=StringIO())
    assert judge.agent == "llm"


def test_the_text_format_says_the_guarantee_thresholds_and_escalated_count() -> None:
    task, items = labelled_task()
    judge_with_confidences("cheap", items)
    out = StringIO()
    call_command("escalate", task.name, "--judges", "cheap", "--format", "text", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("escalation task: agreement with people ≥ 0.85 on the judges' items, with probability "
                        "≥ 0.9 per judge (docs/escalation.md)")
    # Every answer right at confidence 0.9: every λ down to 0 passes, and the last one tested is the threshold.
    assert lines[1] == "  cheap: threshold 0.0000, 90 of 90 calibration items, decides 20 others"
    assert lines[2:4] == ["calibration: 90 of 90 covered (100.0%)",
                          "other items: 20 of 20 decided by judges, 0 escalated to people"]
    assert lines[4] == "  cheap: 0 requests, 0 prompt and 0 completion tokens"  # answers imported, not run here


def test_alt_test_on_graded_relevance_scores_by_minus_the_rmse_over_every_document() -> None:
    task, items, _ = make_task("graded_relevance", 30, name="graded alt task")
    people = [create_annotator(f"grader-{n}") for n in range(3)]
    grades = {(n, i): {"d1": (i + n) % 11, "d2": (2 * i + n) % 11} for n in range(3) for i in range(30)}
    for n, person in enumerate(people):
        Annotation.objects.bulk_create([Annotation(item=item, annotator=person, value=grades[n, i])
                                        for i, item in enumerate(items)])
    judge = make_judge("grading-judge", "http://127.0.0.1:9/v1").annotator
    Annotation.objects.bulk_create([Annotation(item=item, annotator=judge, source="llm", value={"d1": 5, "d2": 5})
                                    for item in items])
    out = StringIO()
    call_command("alt_test", task.name, "--judge", "grading-judge", "--epsilon", "0.15", stdout=out)
    doc = json.loads(out.getvalue())
    humans = {p.name: {item.pk: np.array([grades[n, i]["d1"], grades[n, i]["d2"]], dtype=float)
                       for i, item in enumerate(items)} for n, p in enumerate(people)}
    expected = alt_test({item.pk: np.array([5.0, 5.0]) for item in items}, humans, "neg_rmse", 0.15)
    assert doc["winning_rate"] == expected.winning_rate
    assert doc["advantage_probability"] == pytest.approx(expected.advantage_probability)
    assert [a["p_value"] for a in doc["annotators"]] == pytest.approx([a.p_value for a in expected.annotators])


def test_a_judge_that_keeps_nothing_says_how_close_it_came_and_how_many_labels_would_let_it_keep_items() -> None:
    task, items = labelled_task()
    judge = judge_with_confidences("sure", items)  # confidence 0.9 everywhere
    Annotation.objects.filter(annotator=judge, item__in=items[:9]).update(value="positive")  # 9 of 90 wrong
    result = escalate(task.name, "--judges", "sure", "--alpha", "0.12", "--delta", "0.1")
    (sure,) = result["judges"]
    # 90 answered calibration items: the start is 30 (a quarter of 90 is under 30); the first λ covering 30 covers all
    # 90 (one confidence), 9 errors: bound 0.1533 > 0.12. At R̂ = 0.1 with every item kept, 474 items would pass:
    # the 0.9 quantile of Beta(48.4, 426.6) is ≤ 0.12 (tests/test_escalation_power.py checks labels_needed).
    assert (sure["threshold"], sure["n_covered"], sure["start_covered"], sure["n_tested"]) == (None, 0, 30, 1)
    assert result["start_covered"] == 100
    closest = sure["closest"]
    assert (closest["n_covered"], closest["n_errors"], closest["risk"]) == (90, 9, pytest.approx(0.1))
    assert closest["risk_bound"] == pytest.approx(float(clopper_pearson_upper(9, 90, 0.1)))
    assert closest["risk_bound"] == pytest.approx(0.1533, abs=1e-4)
    assert closest["n_calibration_needed"] == 474 and closest["passes_below_start"] is False
    assert result["rest"]["n_escalated"] == 20
    out = StringIO()
    call_command("escalate", task.name, "--judges", "sure", "--alpha", "0.12", "--format", "text", stdout=out)
    assert ("closest at threshold 0.9000: 90 items with 9 errors, disagreement 0.100, bound 0.153 > α = 0.12; about "
            "474 calibration items for this judge, at that disagreement, would let it keep items") in out.getvalue()
    # From a start of 30 given explicitly, the same; a start under 30 is refused by name.
    assert escalate(task.name, "--judges", "sure", "--alpha", "0.12", "--start-covered", "30")["judges"] == [sure]
    with pytest.raises(CommandError, match="--start-covered must be a whole number of at least 30"):
        escalate(task.name, "--judges", "sure", "--start-covered", "20")


def test_the_text_says_when_no_number_of_labels_would_do_and_when_the_test_stopped_above_a_passing_threshold() -> None:
    from agreement.management.commands.escalate import closest_text

    closest = {"threshold": 0.5, "n_covered": 120, "n_errors": 30, "risk": 0.25, "risk_bound": 0.31,
               "n_calibration_needed": None, "passes_below_start": False}
    assert closest_text(closest, 0.1) == ("closest at threshold 0.5000: 120 items with 30 errors, disagreement 0.250, "
                                          "bound 0.310 > α = 0.1; no number of labels would do: its disagreement there "
                                          "is ≥ α")
    closest.update(n_errors=5, risk=5 / 120, risk_bound=0.069, n_calibration_needed=90, passes_below_start=True)
    assert closest_text(closest, 0.1).endswith("bound 0.069 ≤ α = 0.1, but the test stopped at a failure above it "
                                               "(at its start)")
