"""The LLM prompt of the graded relevance kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

import json
from typing import Any

from kinds.base import ValidationProblem
from kinds.prompt_frame import FENCE, AnswerProblem, KindPrompt, PromptTask, fenced, parse_reply

GRADED_RUBRIC = """Score each document on its own, with a number from {lo:g} to {hi:g} (steps of {step:g}):
- 10: Near-perfect match. The document directly and comprehensively answers the query.
- 9: Extremely relevant. Substantial, directly useful information, missing only minor details.
- 8: Highly relevant. Significant related content that would meaningfully help answer the query.
- 6-7: Moderately relevant. Clear connection with some useful information, but much is tangential.
- 4-5: Borderline to weakly relevant. Shares a general subject area but unclear if it helps.
- 2-3: Barely relevant. Only superficial or incidental connection (e.g., shared keywords, different context).
- 0-1: Irrelevant. No meaningful connection to the query.
Most documents should score below 7. Scores of 9-10 should be rare and reserved for truly exceptional
matches. Do not inflate scores."""


# ------------------------------------------------------------------ pointwise relevance pairs ("Beyond Binary")

POINTWISE_PROMPT = """You are a search relevance judge. You will be given a query and a
single document. Your task is to evaluate how relevant the document
is to the query.

Score the document using a floating point number between 0 and 10:

- 10: Near-perfect match. The document directly and comprehensively
      answers the query.
- 9:  Extremely relevant. Substantial, directly useful information,
      missing only minor details.
- 8:  Highly relevant. Significant related content that would
      meaningfully help answer the query.
- 6-7: Moderately relevant. Clear connection with some useful
       information, but much is tangential.
- 4-5: Borderline to weakly relevant. Shares a general subject
       area but unclear if it helps.
- 2-3: Barely relevant. Only superficial or incidental connection
       (e.g., shared keywords, different context).
- 0-1: Irrelevant. No meaningful connection to the query.

Important:
- Most documents should score below 7.
- Scores of 9-10 should be rare and reserved for truly exceptional
  matches.
- Do not inflate scores.

Respond with JSON: {"reasoning": <string>, "score": <float>}

It is very important that you output your reasoning FIRST and the
score LAST. Think through why the document is or isn't relevant
before committing to a number."""


def is_pointwise_pair(task: PromptTask, payload: dict[str, Any]) -> bool:
    """A retrieval pool's judging unit (agreement.retrieval.pooling): one query id, one document, 0–10."""
    return ("query_id" in payload and len(payload.get("documents", ())) == 1
            and tuple(task.scale[:2]) == (0, 10))


def pointwise_messages(payload: dict[str, Any]) -> list[dict[str, str]]:
    """The study's prompt: rubric and query in the system message (the prefix a provider caches, shared by
    every document of the query), the one document in the user message."""
    system = POINTWISE_PROMPT + "\n\n" + fenced("QUERY", payload["query"])
    return [{"role": "system", "content": system},
            {"role": "user", "content": fenced("DOCUMENT", payload["documents"][0]["text"])}]


def pointwise_answer(task: PromptTask, payload: dict[str, Any], content: str) -> tuple[Any, str]:
    """{doc id: score} from {"reasoning": ..., "score": <float>}; the float is rounded to the task's step
    (the grid humans answer on), then validated like a human's answer."""
    reasoning, score = "", None
    try:
        reasoning, score = parse_reply(content)
    except AnswerProblem:
        text = content.strip()
        match = FENCE.match(text)
        try:
            data = json.loads(match.group(1) if match else text[text.find("{"):text.rfind("}") + 1])
        except ValueError:
            data = None
        if not isinstance(data, dict) or "score" not in data:
            raise AnswerProblem('the reply is not a JSON object {"reasoning": ..., "score": <float>}') from None
        reasoning, score = data.get("reasoning") if isinstance(data.get("reasoning"), str) else "", data["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise AnswerProblem(f"the score must be a number from 0 to 10, got {json.dumps(score)}")
    lo, _, step = task.scale
    if step:
        score = round(lo + round((score - lo) / step) * step, 10)
    value = {payload["documents"][0]["id"]: score}
    try:
        return task.validate_answer(value, payload), reasoning
    except ValidationProblem as problem:
        raise AnswerProblem(f"score: {problem.message}") from None


class GradedRelevancePrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        lo, hi, step = task.scale
        if (lo, hi) == (0, 10):
            return GRADED_RUBRIC.format(lo=lo, hi=hi, step=step or 1)
        return (f"Score how relevant each document is to the query, from {lo:g} (irrelevant) to {hi:g} "
                f"(a perfect answer){f', in steps of {step:g}' if step else ''}. Do not inflate scores.")

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        parts = [fenced("QUERY", payload["query"])]
        parts += [fenced(f"DOCUMENT {d['id']}", d["text"]) for d in payload["documents"]]
        return "\n".join(parts)

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        ids = [d["id"] for d in payload["documents"]]
        return "{" + ", ".join(f"{json.dumps(i)}: <score>" for i in ids) + "} (every document id once)"

    def own_format(self, task: PromptTask, payload: dict[str, Any]) -> bool:
        return is_pointwise_pair(task, payload)

    def own_messages(self, task: PromptTask, payload: dict[str, Any]) -> list[dict[str, str]]:
        return pointwise_messages(payload)

    def own_answer(self, task: PromptTask, payload: dict[str, Any], content: str) -> tuple[Any, str]:
        return pointwise_answer(task, payload, content)
