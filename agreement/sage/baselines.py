"""SAGE's classical metrics (SAGE, arXiv:2509.21310, A.7.1) as study scorers: every classical metric the model
registry has (measures/model_runs/classical.py), one implementation for the models page and for SAGE.

- Levenshtein ratio is `classical.levenshtein` ((|x| + |y| − d_indel) / (|x| + |y|)).
- Jaccard is `classical.jaccard` over `classical.cased_tokens` (words and punctuation marks, case kept),
  because the paper tokenises with tiktoken, which keeps case, and lower-casing would hide the
  capitalisation perturbation of A.3 from Jaccard.
- ROUGE-L F1 and TF-IDF cosine are the registry's own, already on 0-1.
- BM25 (the registry's Lucene variant, text a as the query against text b) is unbounded, while SAGE's
  formulas read a similarity on 0-1 (clustering's distance 1 − s, sensitivity's target 1 − p/(1 + p)). SAGE
  here maps it with s / (1 + s), which keeps BM25's order within every comparison and puts it on [0, 1); this
  mapping is HUME's choice (the paper does not say how it scales BM25), so BM25's Sensitivity is read with
  that in mind (docs/sage.md).

An empty text is refused (classical.EmptyText), as everywhere else.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from agreement.sage.study import Scorer
from measures.model_runs import classical


def _squashed(function: Callable[..., np.ndarray]) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    """s / (1 + s) of an unbounded non-negative score."""
    def squashed(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        values = np.asarray(function(a, b), dtype=float)
        return values / (1.0 + values)

    return squashed


BASELINE_METRICS = {
    "levenshtein": Scorer("Levenshtein Ratio", classical.levenshtein, cross=classical.levenshtein_cross),
    "jaccard": Scorer("Jaccard Similarity", functools.partial(classical.jaccard, tokenize=classical.cased_tokens),
                      cross=functools.partial(classical.jaccard_cross, tokenize=classical.cased_tokens)),
    "rouge": Scorer("ROUGE-L", classical.rouge),
    "tfidf": Scorer("TF-IDF Cosine", classical.tfidf, cross=classical.tfidf_cross),
    "bm25": Scorer("BM25", _squashed(classical.bm25), cross=_squashed(classical.bm25_cross)),
}
