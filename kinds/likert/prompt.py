"""The LLM prompt of the likert kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

import json
from typing import Any

from kinds.prompt_frame import KindPrompt, PromptTask, fenced


class LikertPrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        lo, hi, _ = task.scale
        return (f"Rate the text on each axis with a whole number from {lo:g} (worst) to {hi:g} (best). "
                "The axes are: " + json.dumps(task.axes, ensure_ascii=False))

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return fenced("CONTEXT", payload["context"]) + "\n" + fenced("TEXT", payload["text"])

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{json.dumps(a, ensure_ascii=False)}: <score>" for a in task.axes) + "}"
