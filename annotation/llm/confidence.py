"""An LLM answer's confidence in [0, 1], for calibrated escalation (docs/escalation.md; "Trust or Escalate",
arXiv 2407.18370, §3.1, where a judge's confidence comes from its token probabilities or from "simulated
annotators").

Two sources, in this order:

- **token log-probabilities**, when the endpoint returns them (`logprobs: true`): the probability the model gave
  the answer it wrote, exp(Σ logprob) over the tokens that spell the answer value (after `"answer":` in the
  reply's JSON; quotes and spaces around it count too, and weigh almost nothing). The reasoning text before the
  answer does not count: the question is how sure the model was of the label, given what it had written.
- **simulated annotators**, otherwise, when the LLM annotator asks for K of them: K more requests, each with a
  few worked examples taken from a different human annotator's answers on other items (for pairwise items each
  also with A and B swapped, the answer mapped back); the confidence is the share of all the answers (the
  stored one included) equal to the stored answer.

Neither: no confidence (None). The functions here are pure; the requests are made in `annotation/llm/asking.py`.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from tasks_app.core.kinds import canonical_json

_ANSWER_KEY = re.compile(r'"answer"\s*:\s*')


def answer_probability(content: str, token_logprobs: Sequence[tuple[str, float]] | None) -> float | None:
    """exp(Σ logprob) of the tokens that overlap the answer value in `content`; None when the tokens do not spell
    the content, or the content has no `"answer":` followed by a JSON value."""
    if not token_logprobs or "".join(token for token, _ in token_logprobs) != content:
        return None
    span = _answer_span(content)
    if span is None:
        return None
    start, end = span
    total, position = 0.0, 0
    for token, logprob in token_logprobs:
        token_end = position + len(token)
        if token_end > start and position < end:
            total += logprob
        position = token_end
    return min(1.0, max(0.0, math.exp(total)))


def _answer_span(content: str) -> tuple[int, int] | None:
    """Character span of the value after the last `"answer":` key that decodes as JSON."""
    for match in reversed(list(_ANSWER_KEY.finditer(content))):
        try:
            _, end = json.JSONDecoder().raw_decode(content, match.end())
        except ValueError:
            continue
        return match.end(), end
    return None


def vote_share(chosen: Any, answers: Sequence[Any]) -> float | None:
    """The share of `answers` equal to `chosen` (compared as canonical JSON); None without answers."""
    if not answers:
        return None
    key = canonical_json(chosen)
    return sum(canonical_json(answer) == key for answer in answers) / len(answers)
