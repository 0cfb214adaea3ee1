"""The LLM prompt of the reranking kind: what to ask, how an item is shown, how the answer maps to its
value (kinds/prompt_frame.py has the frame every kind's prompt shares)."""
from __future__ import annotations

import json
from typing import Any

from kinds.prompt_frame import KindPrompt, PromptTask, fenced


class RerankingPrompt(KindPrompt):
    def task_part(self, task: PromptTask) -> str:
        return "Judge every candidate: 1 if it is relevant to the query, 0 if it is not."

    def item_part(self, task: PromptTask, payload: dict[str, Any]) -> str:
        parts = [fenced("QUERY", payload["query"])]
        if payload.get("instruction"):
            parts.append(fenced("INSTRUCTION", payload["instruction"]))
        parts += [fenced(f"CANDIDATE {c['id']}", c["text"]) for c in payload["candidates"]]
        return "\n".join(parts)

    def answer_shape(self, task: PromptTask, payload: dict[str, Any]) -> str:
        ids = [c["id"] for c in payload["candidates"]]
        return "{" + ", ".join(f"{json.dumps(i)}: 0 or 1" for i in ids) + "} (every candidate id once)"
