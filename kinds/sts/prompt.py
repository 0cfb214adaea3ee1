"""The LLM prompt of the sts kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

from typing import Any

from kinds.prompt_frame import KindPrompt, PromptTask, fenced


class STSPrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        lo, hi, step = task.scale
        steps = f", in steps of {step:g}" if step else ""
        return (f"Rate how similar in meaning the two sentences are, from {lo:g} (completely different) "
                f"to {hi:g} (equivalent){steps}.")

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return fenced("SENTENCE 1", payload["sentence1"]) + "\n" + fenced("SENTENCE 2", payload["sentence2"])

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        lo, hi, _ = task.scale
        return f"<a number from {lo:g} to {hi:g}>"
