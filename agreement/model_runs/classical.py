"""SAGE's classical similarity metrics as pair scorers: pairs of texts in, one similarity per pair out.

Pure (no Django). Tokens are Unicode word runs, lower-cased, so Arabic and Danish text tokenise like English
(rouge-score's own tokenizer keeps only [a-z0-9] and would empty a non-Latin text). An empty text has no
similarity to anything: it is refused with the pair's position rather than scored 0.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import numpy as np

TOKEN = re.compile(r"\w+", re.UNICODE)


class EmptyText(ValueError):
    """A classical metric was given an empty (or whitespace-only) text."""


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def check_pairs(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"pair lists differ in length: {len(a)} texts a, {len(b)} texts b")
    for side, texts in (("a", a), ("b", b)):
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise EmptyText(f"pair {i}: text {side} is empty; a similarity metric cannot score it")


class _Tokenizer:
    """rouge-score's tokenizer protocol (an object with .tokenize)."""

    def tokenize(self, text: str) -> list[str]:
        return tokens(text)


def levenshtein(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """python-Levenshtein's ratio: 1 − indel distance / (len a + len b), via rapidfuzz."""
    from rapidfuzz.distance import Indel

    check_pairs(a, b)
    return np.array([Indel.normalized_similarity(x, y) for x, y in zip(a, b, strict=True)], dtype=float)


def rouge(a: Sequence[str], b: Sequence[str], variant: str = "rougeL") -> np.ndarray:
    """ROUGE F1 (rouge-score; ROUGE-L by default), b as the reference."""
    from rouge_score import rouge_scorer

    check_pairs(a, b)
    scorer = rouge_scorer.RougeScorer([variant], tokenizer=_Tokenizer())
    return np.array([scorer.score(y, x)[variant].fmeasure for x, y in zip(a, b, strict=True)], dtype=float)


def jaccard(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """|A ∩ B| / |A ∪ B| over the two texts' token sets."""
    check_pairs(a, b)
    out = []
    for x, y in zip(a, b, strict=True):
        sx, sy = set(tokens(x)), set(tokens(y))
        union = sx | sy
        out.append(len(sx & sy) / len(union) if union else 0.0)
    return np.array(out, dtype=float)


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


METRICS = {"levenshtein": levenshtein, "rouge": rouge, "jaccard": jaccard, "bm25": bm25, "tfidf": tfidf}
