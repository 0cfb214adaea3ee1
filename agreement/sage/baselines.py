"""SAGE's classical metrics (SAGE, arXiv:2509.21310, A.7.1) as study scorers, taken from the model registry.

The metric code is the registry's own (agreement/model_runs/classical.py): one implementation for the
models page and for SAGE. Levenshtein ratio is `classical.levenshtein` ((|x| + |y| − d_indel) / (|x| + |y|));
Jaccard is `classical.jaccard` over `classical.cased_tokens` (words and punctuation marks, case kept),
because the paper tokenises with tiktoken, which keeps case, and lower-casing would hide the capitalisation
perturbation of A.3 from Jaccard. An empty text is refused (classical.EmptyText), as everywhere else.
"""
from __future__ import annotations

import functools

from agreement.model_runs import classical
from agreement.sage.study import Scorer

SCORERS = {
    "levenshtein": Scorer("Levenshtein Ratio", classical.levenshtein, cross=classical.levenshtein_cross),
    "jaccard": Scorer("Jaccard Similarity", functools.partial(classical.jaccard, tokenize=classical.cased_tokens),
                      cross=functools.partial(classical.jaccard_cross, tokenize=classical.cased_tokens)),
}
