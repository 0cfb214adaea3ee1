"""Each LLM answer's confidence (annotation/llm/confidence.py, simulated.py; docs/escalation.md): from the
endpoint's token log-probs where it returns them, else from K simulated annotators; and imported machine
answers carrying "confidence". The endpoint is the real local chat-completions server of tests/llm_server.py."""
from __future__ import annotations

import io
import json
import math

import pytest

from annotation.answer_import import import_annotations
from annotation.core.annotators import create_annotator
from annotation.llm.confidence import answer_probability, vote_share
from annotation.llm.models import LLMRequest, LLMRun
from annotation.llm.prompting import PROMPTS
from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from annotation.models import Annotation
from hume.lib.import_reader import ImportFailed
from tasks_app.core.kinds import content_digest
from tasks_app.models import Item, Task
from tests.llm_helpers import API_KEY_ENV, make_batch, make_judge, make_task
from tests.llm_server import ChatServer, Seen, token_logprobs

pytestmark = pytest.mark.usefixtures("local_llm_endpoints")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-test-confidence")


def run_to_end(run: LLMRun) -> None:
    for _ in range(50):
        if execute_run(run.pk) != "continue":
            return
    raise AssertionError("the run never finished")


def test_the_answer_probability_is_the_product_of_the_answer_tokens_probabilities() -> None:
    content = '{"reasoning": "It is upbeat.", "answer": "positive"}'
    tokens = [('{"reasoning": "It is upbeat.", ', -2.0), ('"answer": ', -0.1), ('"pos', math.log(0.8)),
              ('itive"', math.log(0.9)), ("}", -0.01)]
    assert answer_probability(content, tokens) == pytest.approx(0.72)  # 0.8 × 0.9; reasoning and keys left out
    assert answer_probability(content, tokens[:-1]) is None  # the tokens do not spell the reply
    assert answer_probability("no json here", [("no json here", -0.1)]) is None
    assert answer_probability(content, None) is None
    served = [(entry["token"], entry["logprob"]) for entry in token_logprobs(content, 0.6)]
    assert answer_probability(content, served) == pytest.approx(0.6)


def test_votes_and_swapped_pairs() -> None:
    assert vote_share({"c1": 1}, [{"c1": 1}, {"c1": 0}, {"c1": 1}, {"c1": 1}]) == 0.75
    assert vote_share("a", []) is None
    assert [PROMPTS["pairwise"].unswap(v) for v in ("a", "b", "tie")] == ["b", "a", "tie"]
    assert PROMPTS["pairwise"].swapped({"context": "c", "a": "x", "b": "y"}) == {"context": "c", "a": "y", "b": "x"}
    assert PROMPTS["sts"].swapped({"sentence1": "x", "sentence2": "y"}) is None


@pytest.mark.django_db
def test_with_log_probs_each_answer_stores_the_probability_of_its_answer_tokens() -> None:
    task, items, answers = make_task("classification", 3)
    probability = {"[m01]": 0.95, "[m02]": 0.6, "[m03]": 0.3}
    with ChatServer(answers, answer_probability=lambda seen: probability[seen.marker]) as server:
        judge = make_judge("judge-logprobs", server.base_url, logprobs=True, confidence_samples=2)
        run_to_end(create_run(judge.annotator, batch=make_batch(task, items)))
        assert all(seen.body.get("logprobs") is True for seen in server.seen)
        assert server.count == 3  # log-probs given: no simulated annotators asked
    stored = {a.item.external_id: a.confidence for a in Annotation.objects.filter(annotator=judge.annotator)
              .select_related("item")}
    assert stored == {marker: pytest.approx(p) for marker, p in probability.items()}
    assert sorted(LLMRequest.objects.filter(annotator=judge.annotator).values_list("confidence", flat=True)) == [
        pytest.approx(0.3), pytest.approx(0.6), pytest.approx(0.95)]


@pytest.mark.django_db
def test_without_log_probs_or_samples_an_answer_has_no_confidence_and_the_request_asks_for_none() -> None:
    task, items, answers = make_task("classification", 2)
    with ChatServer(answers, answer_probability=lambda seen: 0.9) as server:
        judge = make_judge("judge-plain", server.base_url)
        run_to_end(create_run(judge.annotator, batch=make_batch(task, items)))
        assert not any("logprobs" in seen.body for seen in server.seen)
    assert list(Annotation.objects.filter(annotator=judge.annotator).values_list("confidence", flat=True)) == [
        None, None]


def few_shot_answers(seen: Seen) -> tuple[str, ...]:
    """The human answers a request's worked examples carry (one human's answers per simulated annotator)."""
    return tuple(json.loads(m["content"])["answer"] for m in seen.body["messages"] if m["role"] == "assistant")


@pytest.mark.django_db
def test_simulated_annotators_each_see_another_humans_examples_and_vote() -> None:
    task, items, _ = make_task("classification", 5)
    for name, label in (("ann-neg", "negative"), ("ann-pos", "positive")):
        human = create_annotator(name)
        Annotation.objects.bulk_create([Annotation(item=item, annotator=human, value=label) for item in items[3:]])

    def answer(seen: Seen) -> str:
        # The main request (no examples) says "negative"; a simulated annotator follows its examples' label.
        examples = [m["content"] for m in seen.body["messages"] if m["role"] == "assistant"]
        return json.loads(examples[0])["answer"] if examples else "negative"

    with ChatServer(answer_for=answer) as server:
        judge = make_judge("judge-simulated", server.base_url, confidence_samples=2)
        run_to_end(create_run(judge.annotator, batch=make_batch(task, items[:3])))
        assert server.count == 9  # per item: the answer and two simulated annotators
        shots = {few_shot_answers(seen) for seen in server.seen if few_shot_answers(seen)}
        assert shots == {("negative", "negative"), ("positive", "positive")}  # two humans, two examples each
    rows = Annotation.objects.filter(annotator=judge.annotator)
    assert [(a.value, a.confidence) for a in rows] == [("negative", pytest.approx(2 / 3))] * 3  # neg, neg, pos
    run = LLMRun.objects.get(annotator=judge.annotator)
    assert (run.http_requests, run.prompt_tokens) == (9, 900)  # the simulated calls are paid for and counted


@pytest.mark.django_db
def test_pairwise_simulated_annotators_also_ask_with_the_candidates_swapped() -> None:
    task = Task.objects.create(name="pairs", kind="pairwise", language="eng-Latn")
    payloads = [{"context": f"[p0{i}] which reply is kinder?", "a": f"first {i}", "b": f"second {i}"}
                for i in range(1, 4)]
    items = [Item.objects.create(task=task, uid=content_digest(task.name, p), position=i, external_id=f"p{i}",
                                 payload=p) for i, p in enumerate(payloads)]
    human = create_annotator("ann-pairs")
    Annotation.objects.create(item=items[2], annotator=human, value="b")
    with ChatServer(answer_for=lambda seen: "a") as server:  # a judge that always prefers the first position
        judge = make_judge("judge-pairs", server.base_url, confidence_samples=1)
        run_to_end(create_run(judge.annotator, batch=make_batch(task, items[:2])))
        asked_second_first = [seen for seen in server.seen if "CANDIDATE A" in seen.body["messages"][-1]["content"]
                              and "second" in seen.body["messages"][-1]["content"].split("CANDIDATE B")[0]]
        assert server.count == 6 and len(asked_second_first) == 2
    # Votes per item: "a" (the answer), "a" (simulated), "b" (swapped, read back): 2 of 3 agree.
    assert [a.confidence for a in Annotation.objects.filter(annotator=judge.annotator)] == [pytest.approx(2 / 3)] * 2


@pytest.mark.django_db
def test_an_imported_machine_answer_keeps_its_confidence_and_a_bad_one_imports_nothing() -> None:
    task, _, _ = make_task("classification", 2)
    lines = [{"item": "[m01]", "annotator": "gpt-imported", "annotator_agent": "llm", "value": "positive",
              "confidence": 0.82},
             {"item": "[m02]", "annotator": "gpt-imported", "annotator_agent": "llm", "value": "negative"}]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    import_annotations(io.BytesIO(data), "answers.jsonl", task)
    assert sorted(Annotation.objects.filter(item__task=task).values_list("item__external_id", "confidence")) == [
        ("[m01]", 0.82), ("[m02]", None)]
    for bad, problem in (({"confidence": 1.5}, "must be a number from 0 to 1, got 1.5"),
                         ({"confidence": "high"}, "must be a number from 0 to 1, got 'high'"),
                         ({"annotator": "alice-h", "annotator_agent": "human", "confidence": 0.5},
                          "only a machine answer")):
        record = {"item": "[m02]", "annotator": "gpt-other", "annotator_agent": "llm", "value": "positive", **bad}
        with pytest.raises(ImportFailed) as failed:
            import_annotations(io.BytesIO(json.dumps(record).encode()), "bad.jsonl", task)
        assert "confidence" in str(failed.value) and problem in str(failed.value)
    assert Annotation.objects.filter(item__task=task).count() == 2
