"""Simulated annotators: K more requests per item whose answer has no log-prob confidence (docs/escalation.md).

After "Trust or Escalate" (arXiv 2407.18370, §3.1): each simulated annotator sees the same prompt with a few
worked examples taken from one human annotator's answers to other items of the task (a different annotator per
simulated annotator, so the examples differ in style and in their disagreements), and for pairwise items each is
asked a second time with A and B swapped (position bias is a known source of unfounded certainty). The share of
all the answers that agree with the stored one is the confidence (`confidence.vote_share`).

`run_examples` reads the examples once per executor slice in the main thread (the only thread that touches the
database); `simulated_answers` makes the requests on the event loop. A simulated request is asked once (no
re-ask); a failed or invalid one is left out of the vote and kept in the raw outputs, and every request counts
toward the tokens and cost of the run as usual. A retrieval pool's pointwise pairs (docs/retrieval.md) keep the
study's own prompt and reply format, so their simulated annotators are asked without examples.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.core.models import Annotation, Annotator
from annotation.llm.prompting import AnswerProblem, answer_from_reply, build_messages, has_own_format, prompt_for
from hume.lib.http_client import ChatClient, EndpointError, ProtocolError
from tasks_app.models import Task

EXAMPLES_PER_ANNOTATOR = 3
Example = tuple[dict[str, Any], Any]  # (an item's payload, a human annotator's answer to it)


def run_examples(task: Task, k: int) -> list[list[Example]]:
    """Up to K example sets, one per human annotator of the task (those with the most answers first), each with
    one example more than used, so that the item being asked can be left out of its own examples."""
    if k <= 0:
        return []
    answers = (Annotation.objects.counted()
               .filter(item__task=task, skipped=False, annotator__agent=Annotator.Agent.HUMAN)
               .order_by("annotator_id", "item_id").values_list("annotator_id", "item__payload", "value"))
    by_annotator: dict[int, list[Example]] = {}
    for annotator_id, payload, value in answers.iterator(chunk_size=2000):
        examples = by_annotator.setdefault(annotator_id, [])
        if len(examples) <= EXAMPLES_PER_ANNOTATOR:
            examples.append((payload, value))
    ranked = sorted(by_annotator.values(), key=len, reverse=True)
    return [ranked[i % len(ranked)] for i in range(k)] if ranked else [[] for _ in range(k)]


def example_messages(task: Task, payload: dict[str, Any], examples: list[Example]) -> list[dict[str, str]]:
    """The item's messages with worked examples (user: an item; assistant: the human's answer) before it."""
    system, *item = build_messages(task, payload)
    if has_own_format(task, payload):  # the kind's own prompt and reply format: no JSON examples to show
        return [system, *item]
    shots: list[dict[str, str]] = []
    for example_payload, value in [e for e in examples if e[0] != payload][:EXAMPLES_PER_ANNOTATOR]:
        shots.extend(build_messages(task, example_payload)[1:])
        shots.append({"role": "assistant",
                      "content": json.dumps({"reasoning": "An annotator's answer.", "answer": value},
                                            ensure_ascii=False)})
    return [system, *shots, *item]


@dataclass
class Votes:
    answers: list[Any] = field(default_factory=list)
    raw_outputs: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def simulated_answers(client: ChatClient, body_for: Callable[[list[dict[str, str]]], dict[str, Any]],
                            task: Task, payload: dict[str, Any], example_sets: list[list[Example]]) -> Votes:
    """Ask once per simulated annotator (and for pairwise once more with A and B swapped); the valid answers."""
    votes = Votes()
    prompt = prompt_for(task.kind)
    other_order = prompt.swapped(payload)  # the kind's prompt says whether its options can be swapped
    for examples in example_sets:
        versions = [(payload, False)] + ([(other_order, True)] if other_order is not None else [])
        for asked, swapped in versions:
            try:
                reply = await client.complete_async(body_for(example_messages(task, asked, examples)))
            except (EndpointError, ProtocolError) as exc:
                votes.attempts += exc.attempts
                votes.raw_outputs.append({"simulated": True, "error": str(exc)})
                continue
            votes.attempts += reply.attempts
            votes.prompt_tokens += reply.prompt_tokens
            votes.completion_tokens += reply.completion_tokens
            votes.raw_outputs.append({"simulated": True, "swapped": swapped, "content": reply.content})
            try:
                value, _ = answer_from_reply(task, asked, reply.content)
            except AnswerProblem as problem:
                votes.raw_outputs[-1]["problem"] = str(problem)
                continue
            votes.answers.append(prompt.unswap(value) if swapped else value)
    return votes
