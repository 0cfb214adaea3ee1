"""Classical similarity metrics of SAGE (papers/001_*, Appendix A.7.1) as study scorers.

Stand-ins until the model registry (`agreement.model_runs`) serves every model and metric by name; the
study only ever sees the `Scorer` interface, so swapping them changes no formula.
- Levenshtein ratio: rapidfuzz's `fuzz.ratio` / 100, which is python-Levenshtein's `ratio` of A.7.1,
  (|x| + |y| − d_indel) / (|x| + |y|).
- Jaccard: |A ∩ B| / |A ∪ B| on the sets of tokens (words and punctuation marks, case kept; the paper's
  tiktoken tokens need a download at run time). Two empty texts are identical (1); one empty text shares
  nothing (0).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np
from rapidfuzz import fuzz, process

from agreement.sage.study import Scorer

_TOKEN = re.compile(r"\w+|[^\w\s]")


def levenshtein_ratio(a_texts: Sequence[str], b_texts: Sequence[str]) -> np.ndarray:
    return np.array([fuzz.ratio(a, b) / 100.0 for a, b in zip(a_texts, b_texts, strict=True)])


def levenshtein_cross(a_texts: Sequence[str], b_texts: Sequence[str]) -> np.ndarray:
    return process.cdist(a_texts, b_texts, scorer=fuzz.ratio, dtype=np.float64, workers=1) / 100.0


@functools.lru_cache(maxsize=100_000)  # an original is compared with each of its perturbations
def tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN.findall(text))


def jaccard_sets(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return 1.0 if union == 0 else len(a & b) / union


def jaccard(a_texts: Sequence[str], b_texts: Sequence[str]) -> np.ndarray:
    return np.array([jaccard_sets(tokens(a), tokens(b)) for a, b in zip(a_texts, b_texts, strict=True)])


def jaccard_cross(a_texts: Sequence[str], b_texts: Sequence[str]) -> np.ndarray:
    left, right = [tokens(t) for t in a_texts], [tokens(t) for t in b_texts]
    return np.array([[jaccard_sets(x, y) for y in right] for x in left]).reshape(len(left), len(right))


SCORERS = {
    "levenshtein": Scorer("Levenshtein Ratio", levenshtein_ratio, cross=levenshtein_cross),
    "jaccard": Scorer("Jaccard Similarity", jaccard, cross=jaccard_cross),
}
