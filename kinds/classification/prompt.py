"""The LLM prompt of the classification kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

import json
from typing import Any

from kinds.prompt_frame import KindPrompt, PromptTask, fenced


class ClassificationPrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        return "Choose exactly one label for the text. The labels are: " + json.dumps(task.labels, ensure_ascii=False)

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return fenced("TEXT", payload["text"])

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return '"<one of the labels, written exactly as listed>"'
