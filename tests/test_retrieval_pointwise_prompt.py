"""The study's pointwise judge prompt for pool units: rubric and query first, the document alone, a float last."""
from __future__ import annotations

import pytest

from agreement.retrieval.models import Ranking, Subset
from agreement.retrieval.pooling import build_pool
from annotation.llm.prompting import AnswerProblem, answer_from_reply, build_messages
from kinds.graded_relevance.prompt import POINTWISE_PROMPT
from tasks_app.models import Item, Task
from tests.retrieval_helpers import load_minifact, load_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def unit() -> Item:
    load_minifact()
    load_run()
    build_pool(Subset.objects.get(name="da"), list(Ranking.objects.all()), depth=2)
    return Item.objects.filter(task__retrieval_pool__isnull=False, payload__query_id="q101").order_by("position")[0]


def test_the_rubric_and_query_are_the_system_prefix_and_the_document_is_alone(unit: Item) -> None:
    system, user = build_messages(unit.task, unit.payload)
    assert system["content"] == POINTWISE_PROMPT + "\n\n<<<QUERY\nMindsker D-vitamin luftvejsinfektioner hos " \
                                                   "børn?\nFind dokumenter om børn.\n>>>"
    assert user == {"role": "user", "content": f"<<<DOCUMENT\n{unit.payload['documents'][0]['text']}\n>>>"}
    assert "Most documents should score below 7." in POINTWISE_PROMPT
    assert POINTWISE_PROMPT.rstrip().endswith("before committing to a number.")


def test_the_float_comes_last_and_is_put_on_the_tasks_step(unit: Item) -> None:
    doc = unit.payload["documents"][0]["id"]
    value, reasoning = answer_from_reply(unit.task, unit.payload, '{"reasoning": "Same topic.", "score": 7.26}')
    assert value == {doc: 7.3} and reasoning == "Same topic."
    fenced = '```json\n{"reasoning": "No link.", "score": 0}\n```'
    assert answer_from_reply(unit.task, unit.payload, fenced) == ({doc: 0}, "No link.")


@pytest.mark.parametrize(("reply", "problem"), [
    ('{"reasoning": "x", "score": 11}', "score: 11 is outside the scale 0–10"),
    ('{"reasoning": "x", "score": "high"}', 'the score must be a number from 0 to 10, got "high"'),
    ('{"reasoning": "x"}', 'the reply is not a JSON object {"reasoning": ..., "score": <float>}'),
    ("I think 7", 'the reply is not a JSON object {"reasoning": ..., "score": <float>}'),
])
def test_unusable_replies_say_what_is_wrong(unit: Item, reply: str, problem: str) -> None:
    with pytest.raises(AnswerProblem) as raised:
        answer_from_reply(unit.task, unit.payload, reply)
    assert str(raised.value) == problem


def test_a_listwise_graded_item_keeps_the_listwise_prompt(db: None) -> None:
    task = Task.objects.create(name="listwise", kind="graded_relevance", language="eng-Latn")
    payload = {"query": "q", "documents": [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]}
    system, _ = build_messages(task, payload)
    assert not system["content"].startswith(POINTWISE_PROMPT) and '"answer"' in system["content"]
