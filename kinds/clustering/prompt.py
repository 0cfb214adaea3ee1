"""The LLM prompt of the clustering kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

from typing import Any

from kinds.prompt_frame import AnswerProblem, KindPrompt, PromptTask, fenced


class ClusteringPrompt(KindPrompt):
    """Id-per-text answer: {"1": "A", "2": "B", ...}; an object keyed by id keeps long lists aligned."""

    def task_part(self, task: PromptTask) -> str:
        return ("Group the numbered texts into clusters of texts on the same topic. Choose as many clusters as "
                "you see fit and give each a short name; only which texts share a cluster matters.")

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        return "\n".join(fenced(f"TEXT {i}", text) for i, text in enumerate(payload["sentences"], start=1))

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        n = len(payload["sentences"])
        return f'{{"1": "<cluster name>", "2": "<cluster name>", ..., "{n}": "<cluster name>"}} (every text id once)'

    def decode(self, answer: Any, task: PromptTask, payload: dict[str, Any]) -> Any:
        n = len(payload["sentences"])
        if isinstance(answer, list):
            return answer
        if not isinstance(answer, dict):
            raise AnswerProblem(f"answer must be an object mapping each text id 1..{n} to a cluster name")
        ids = [str(i) for i in range(1, n + 1)]
        missing = [i for i in ids if i not in answer]
        unknown = [k for k in answer if k not in ids]
        if missing or unknown:
            raise AnswerProblem(f"answer must cover text ids 1..{n} exactly once; missing {missing}, unknown {unknown}")
        return [answer[i] for i in ids]
