"""Prompts for LLM annotators: the messages for an item and the answer from a reply, from the kind's prompt.

A prompt is built from what a human annotator gets and nothing else: the task's own instructions and the
item's payload (`Item.payload`). Gold lives in `ItemGold` and is never read here. Each kind's prompt is
kinds/<name>/prompt.py (looked up in the registry); the frame they share (preamble, output rules, the reply
parser) is kinds/prompt_frame.py. The answer is decoded into the kind's value format and goes through the same
`Task.validate_answer` as a human submit.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kinds.kind_registry import Parts
from kinds.prompt_frame import OUTPUT_RULES, PREAMBLE, AnswerProblem, KindPrompt, parse_reply
from tasks_app.core.kinds import ValidationProblem
from tasks_app.models import Task

__all__ = ["PROMPTS", "PROMPT_VERSIONS", "AnswerProblem", "answer_from_reply", "build_messages",
           "correction_message", "has_own_format", "parse_reply", "prompt_for"]

PROMPTS: Parts[KindPrompt] = Parts("prompt")  # {kind name: its prompt}, from the registry


class PromptVersions(Mapping[str, str]):
    """{kind name: "<kind>-v<revision>"} of every kind with a prompt: part of every request key."""

    def __getitem__(self, kind: str) -> str:
        return f"{kind}-v{PROMPTS[kind].revision}"

    def __iter__(self) -> Iterator[str]:
        return iter(PROMPTS)

    def __len__(self) -> int:
        return len(PROMPTS)


PROMPT_VERSIONS = PromptVersions()


def prompt_for(kind: str) -> KindPrompt:
    return PROMPTS[kind]


def has_own_format(task: Task, payload: dict[str, Any]) -> bool:
    """Whether the kind asks this item in a format of its own (a retrieval pool's pointwise pair)."""
    return prompt_for(task.kind).own_format(task, payload)


def build_messages(task: Task, payload: dict[str, Any]) -> list[dict[str, str]]:
    """System: preamble, the task's own instructions, what to answer and the output format. User: the item."""
    template = prompt_for(task.kind)
    if template.own_format(task, payload):
        return template.own_messages(task, payload)
    system = "\n\n".join([
        PREAMBLE,
        "## Instructions for this task\n" + (task.instructions.strip() or "(no further instructions)"),
        "## What to do\n" + template.task_part(task),
        "## Output format\n" + OUTPUT_RULES.format(shape=template.answer_shape(task, payload)),
    ])
    return [{"role": "system", "content": system}, {"role": "user", "content": template.item_part(task, payload)}]


def correction_message(problem: str) -> dict[str, str]:
    return {"role": "user", "content": f"Your reply could not be used: {problem}. Reply again with one JSON "
                                       'object {"reasoning": "...", "answer": ...} following the output format.'}


def answer_from_reply(task: Task, payload: dict[str, Any], content: str) -> tuple[Any, str]:
    """The validated answer value and the reasoning, or AnswerProblem saying what is wrong."""
    template = prompt_for(task.kind)
    if template.own_format(task, payload):
        return template.own_answer(task, payload, content)
    reasoning, answer = parse_reply(content)
    value = template.decode(answer, task, payload)
    try:
        return task.validate_answer(value, payload), reasoning
    except ValidationProblem as problem:
        raise AnswerProblem(str(problem).replace("value", "answer", 1)) from None
