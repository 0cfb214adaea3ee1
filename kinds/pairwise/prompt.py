"""The LLM prompt of the pairwise kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

from typing import Any

from kinds.prompt_frame import KindPrompt, PromptTask, fenced


class PairwisePrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        return 'Given the context, say which candidate is better: "a", "b", or "tie" if neither is better.'

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return "\n".join([fenced("CONTEXT", payload["context"]), fenced("CANDIDATE A", payload["a"]),
                          fenced("CANDIDATE B", payload["b"])])

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return '"a" or "b" or "tie"'

    def swapped(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The pair with its two candidates in the other order."""
        return {**payload, "a": payload["b"], "b": payload["a"]}

    def unswap(self, answer: Any) -> Any:
        """The answer to a swapped pair, read in the original order ("a" ↔ "b"; "tie" stays)."""
        return {"a": "b", "b": "a"}.get(answer, answer) if isinstance(answer, str) else answer
