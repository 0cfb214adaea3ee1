"""SAGE's classical similarity metrics as pair scorers: pairs of texts in, one similarity per pair out.

Pure (no Django). Tokens are Unicode word runs, lower-cased, so Arabic and Danish text tokenise like English
(rouge-score's own tokenizer keeps only [a-z0-9] and would empty a non-Latin text). An empty text has no
similarity to anything: it is refused with the pair's position rather than scored 0.

SAGE (agreement/sage/baselines.py) uses these same functions, with two additions: `*_cross` variants that
score every a against every b (its clustering and retrieval matrices), and `cased_tokens` for Jaccard. The
paper (SAGE, arXiv:2509.21310, A.7.1) tokenises with tiktoken, which keeps case and punctuation; lower-cased word
tokens would make Jaccard blind to SAGE's capitalisation perturbation (A.3), so SAGE passes `cased_tokens`.
"""
from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence

import numpy as np

TOKEN = re.compile(r"\w+", re.UNICODE)
CASED_TOKEN = re.compile(r"\w+|[^\w\s]")  # words and single punctuation marks, case kept (SAGE)


class EmptyText(ValueError):
    """A classical metric was given an empty (or whitespace-only) text."""


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def cased_tokens(text: str) -> list[str]:
    return CASED_TOKEN.findall(text)


def check_texts(a: Sequence[str], b: Sequence[str], what: str = "pair") -> None:
    for side, texts in (("a", a), ("b", b)):
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise EmptyText(f"{what} {i}: text {side} is empty; a similarity metric cannot score it")


def check_pairs(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"pair lists differ in length: {len(a)} texts a, {len(b)} texts b")
    check_texts(a, b)


class _Tokenizer:
    """rouge-score's tokenizer protocol (an object with .tokenize)."""

    def tokenize(self, text: str) -> list[str]:
        return tokens(text)


def levenshtein(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """python-Levenshtein's ratio: 1 − indel distance / (len a + len b), via rapidfuzz."""
    from rapidfuzz.distance import Indel

    check_pairs(a, b)
    return np.array([Indel.normalized_similarity(x, y) for x, y in zip(a, b, strict=True)], dtype=float)


def levenshtein_cross(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """The |a| × |b| matrix of `levenshtein`, all pairs at once (rapidfuzz's cdist)."""
    from rapidfuzz import process
    from rapidfuzz.distance import Indel

    check_texts(a, b, what="text")
    return process.cdist(list(a), list(b), scorer=Indel.normalized_similarity, dtype=np.float64, workers=1)


def rouge(a: Sequence[str], b: Sequence[str], variant: str = "rougeL") -> np.ndarray:
    """ROUGE F1 (rouge-score; ROUGE-L by default), b as the reference."""
    from rouge_score import rouge_scorer

    check_pairs(a, b)
    scorer = rouge_scorer.RougeScorer([variant], tokenizer=_Tokenizer())
    return np.array([scorer.score(y, x)[variant].fmeasure for x, y in zip(a, b, strict=True)], dtype=float)


# SAGE compares an original with each of its perturbations, one after the other: a small cache catches
# those repeats; 100,000 long texts with their token sets held 2 GB (bench/bench_sage.py, Jaccard).
@functools.lru_cache(maxsize=4096)
def token_set(text: str, tokenize: Callable[[str], list[str]] = tokens) -> frozenset[str]:
    return frozenset(tokenize(text))


def _jaccard_sets(x: frozenset[str], y: frozenset[str]) -> float:
    union = len(x | y)
    return len(x & y) / union if union else 0.0


def jaccard(a: Sequence[str], b: Sequence[str], tokenize: Callable[[str], list[str]] = tokens) -> np.ndarray:
    """|A ∩ B| / |A ∪ B| over the two texts' token sets."""
    check_pairs(a, b)
    pairs = zip(a, b, strict=True)
    return np.array([_jaccard_sets(token_set(x, tokenize), token_set(y, tokenize)) for x, y in pairs], dtype=float)


def jaccard_cross(a: Sequence[str], b: Sequence[str], tokenize: Callable[[str], list[str]] = tokens) -> np.ndarray:
    """The |a| × |b| matrix of `jaccard`."""
    check_texts(a, b, what="text")
    left, right = [token_set(x, tokenize) for x in a], [token_set(y, tokenize) for y in b]
    return np.array([[_jaccard_sets(x, y) for y in right] for x in left], dtype=float).reshape(len(a), len(b))


def tfidf(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Cosine of TF-IDF vectors (scikit-learn), the vocabulary and idf fitted on all texts of the call."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    check_pairs(a, b)
    vectorizer = TfidfVectorizer(tokenizer=tokens, lowercase=False, token_pattern=None)
    matrix = vectorizer.fit_transform([*a, *b])  # rows are L2-normalised: the dot product is the cosine
    n = len(a)
    return np.asarray(matrix[:n].multiply(matrix[n:]).sum(axis=1)).ravel().astype(float)


def bm25(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) of text a as the query against text b as the document.

    The index holds the distinct b texts of the call (the corpus the queries are asked against), so idf
    reflects the task's own documents. Raw scores, not normalised: only their order within a task counts.
    """
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG to stderr
    check_pairs(a, b)
    docs = list(dict.fromkeys(b))
    index = {doc: i for i, doc in enumerate(docs)}
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index([tokens(doc) for doc in docs], show_progress=False)
    out = np.empty(len(a), dtype=float)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        out[i] = float(retriever.get_scores(tokens(x))[index[y]])
    return out


def tfidf_cross(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """The |a| × |b| matrix of `tfidf`: one vocabulary and idf fitted on all texts of the call."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    check_texts(a, b, what="text")
    vectorizer = TfidfVectorizer(tokenizer=tokens, lowercase=False, token_pattern=None)
    matrix = vectorizer.fit_transform([*a, *b])
    n = len(a)
    return np.asarray((matrix[:n] @ matrix[n:].T).todense(), dtype=float).reshape(len(a), len(b))


def bm25_cross(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """The |a| × |b| matrix of `bm25`: the distinct b texts indexed once, every a asked against them."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    check_texts(a, b, what="text")
    docs = list(dict.fromkeys(b))
    where = {doc: i for i, doc in enumerate(docs)}
    columns = [where[doc] for doc in b]
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index([tokens(doc) for doc in docs], show_progress=False)
    rows = [np.asarray(retriever.get_scores(tokens(x)), dtype=float)[columns] for x in a]
    return np.array(rows, dtype=float).reshape(len(a), len(b))


METRICS = {"levenshtein": levenshtein, "rouge": rouge, "jaccard": jaccard, "bm25": bm25, "tfidf": tfidf}
