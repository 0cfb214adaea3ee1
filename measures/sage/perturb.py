"""SAGE's perturbations (SAGE, arXiv:2509.21310, Appendix A.3, A.4, A.6): pure functions `(text, seed) -> text`.

Every function is pure: the same text and seed give the same output on any machine (the random ones draw
from their own `random.Random(seed)`, never the global state). The deterministic ones take the seed too,
so the study runner can treat all of them alike.

Where the paper leaves a detail open, the choice made here is stated in the function's docstring:
- "tokens" are whitespace-separated words. The paper counted tiktoken tokens; tiktoken fetches its BPE
  table at run time, which this project never does, and words keep every example hand-checkable.
- Counts are rounded half up (`floor(x + 0.5)`), never Python's banker's rounding.
"""
from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

Perturbation = Callable[[str, int], str]

CAPITALIZATION_RATE = 0.25  # A.3: "25% of characters randomly capitalized (not case-switched)"
DELETION_PERIOD = 10  # A.3: "every 10th character removed"
NUMERIZATION = str.maketrans({"e": "3", "i": "1", "a": "4", "o": "0"})  # A.3: e→3, i→1, a→4, o→0
NEEDLE_PROPORTIONS = (0.15, 0.5, 1.0)  # A.4: 15%, 50%, 100% of the document's token length
REMOVAL_PROPORTIONS = (0.15, 0.5, 0.9)  # A.4: 15%, 50%, 90% of the document's tokens
POSITIONS = (0.0, 0.5, 1.0)  # A.4: beginning, middle, end
RETRIEVAL_PROPORTIONS = (0.15, 0.5)  # A.6: needles and removals at 15% and 50% only

# The standard Lorem Ipsum passage of lipsum.com (A.4's "content source"); repeated when a needle is longer.
LOREM_IPSUM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
    "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex "
    "ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu "
    "fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt "
    "mollit anim id est laborum."
).split()


def derive_seed(seed: int, *parts: object) -> int:
    """A seed for one (document, perturbation) from the study seed: stable across runs, orders and machines."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _half_up(value: float) -> int:
    return math.floor(round(value, 9) + 0.5)


# ---------------------------------------------------------------------------------------------
# Superficial perturbations (meaning kept), A.3

def random_capitalization(text: str, seed: int) -> str:
    """Upper-case 25% of the characters, chosen at random (A.3).

    "Not case-switched": a chosen character is upper-cased, so an already upper-case letter stays as it is
    and a space or digit is unchanged. round-half-up(0.25 · len(text)) positions are drawn without replacement.
    """
    chars = list(text)
    count = _half_up(CAPITALIZATION_RATE * len(chars))
    for index in random.Random(seed).sample(range(len(chars)), count):
        chars[index] = chars[index].upper()
    return "".join(chars)


def character_deletion(text: str, seed: int = 0) -> str:
    """Delete every 10th character (the 10th, 20th, ... of the original), except whitespace (A.3).

    The paper's "special handling for spaces to preserve word boundaries": a 10th character that is
    whitespace is kept, so two words never merge. Deterministic; the seed is unused.
    """
    chunks = (text[start:start + DELETION_PERIOD] for start in range(0, len(text), DELETION_PERIOD))
    return "".join(c if len(c) < DELETION_PERIOD or c[-1].isspace() else c[:-1] for c in chunks)


def numerization(text: str, seed: int = 0) -> str:
    """Replace e→3, i→1, a→4, o→0 (A.3), lower-case letters only as the paper lists them. Deterministic."""
    return text.translate(NUMERIZATION)


# ---------------------------------------------------------------------------------------------
# Semantic alterations (meaning changed), A.3 and A.6

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentence_shuffle(text: str, seed: int) -> str:
    """A random permutation of the sentences (A.3), split after '.', '!' or '?' and joined by one space."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    random.Random(seed).shuffle(sentences)
    return " ".join(sentences)


def word_shuffle(text: str, seed: int) -> str:
    """A random permutation of all whitespace-separated words of the whole text (A.3), joined by one space."""
    words = text.split()
    random.Random(seed).shuffle(words)
    return " ".join(words)


_AUX = "am|is|are|was|were|can|could|will|would|shall|should|may|might|must|does|do|did|has|have|had"
_CONTRACTED = (r"cannot|can[’']t|won[’']t|shan[’']t"
               r"|(?:is|are|was|were|could|would|should|might|must|does|do|did|has|have|had)n[’']t")
_NEGATION = re.compile(rf"\b(?:(?P<contracted>{_CONTRACTED})|(?P<aux>{_AUX})(?P<neg>\s+not)?)\b", re.IGNORECASE)
_IRREGULAR = {"cannot": "can", "can't": "can", "won't": "will", "shan't": "shall"}


def _keep_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _toggle(match: re.Match[str]) -> str:
    if match["contracted"]:
        word = match["contracted"]
        plain = word.lower().replace("’", "'")
        return _keep_case(word, _IRREGULAR.get(plain, plain[:-3]))
    return match["aux"] if match["neg"] else f"{match['aux']} not"


def negation_toggle(text: str, seed: int = 0) -> str:
    """Toggle the negation of every auxiliary verb: "is" ↔ "is not", "can't"/"cannot" → "can" (A.6).

    The third meaning-changing perturbation, named in A.6 ("negation toggling"). A lexical rule over the
    auxiliaries (am, is, are, was, were, can, could, will, would, shall, should, may, might, must, do, does,
    did, has, have, had): a negated one loses its negation, any other gains " not". Deterministic.
    """
    return _NEGATION.sub(_toggle, text)


# ---------------------------------------------------------------------------------------------
# Information sensitivity, A.4

def lorem_needle(n_words: int) -> str:
    """The first n words of Lorem Ipsum, cycling through the passage when n is larger."""
    return " ".join((LOREM_IPSUM * (n_words // len(LOREM_IPSUM) + 1))[:n_words])


def needle_insertion(text: str, proportion: float, position: float, seed: int = 0) -> str:
    """Insert Lorem Ipsum of `proportion` × the text's token length at character `position · len(text)` (A.4).

    Needle length: round-half-up(proportion · words), at least one word. The insertion point is the exact
    character `floor(position · len(text))` as in the paper (it may fall inside a word); the needle is set
    off by one space on each side that has text. Deterministic; the seed is unused.
    """
    needle = lorem_needle(max(1, _half_up(proportion * len(text.split()))))
    at = math.floor(round(position * len(text), 9))
    return " ".join(part for part in (text[:at], needle, text[at:]) if part)


def token_removal(text: str, proportion: float, position: float, seed: int = 0) -> str:
    """Remove a contiguous run of `proportion` of the tokens, starting at the position-adjusted index (A.4).

    Run length k = round-half-up(proportion · n); start = floor(position · (1 − proportion) · n), the
    paper's "position * (1 - removal_size)" so that position 1.0 removes the last k tokens and 0.5 a
    centred run. Tokens are whitespace words, re-joined by one space. Deterministic; the seed is unused.
    """
    tokens = text.split()
    n = len(tokens)
    k = _half_up(proportion * n)
    start = min(math.floor(round(position * (1 - proportion) * n, 9)), n - k)
    return " ".join(tokens[:start] + tokens[start + k:])


# ---------------------------------------------------------------------------------------------
# The named variants each category uses

@dataclass(frozen=True)
class Variant:
    """One named perturbation; `proportion` is A.4's p (the amount of text inserted or removed), if any."""

    name: str
    apply: Perturbation
    proportion: float | None = None


def _needle(p: float, pos: float) -> Variant:
    return Variant(f"needle_{round(p * 100)}_at_{pos}", lambda t, s: needle_insertion(t, p, pos, s), p)


def _removal(p: float, pos: float) -> Variant:
    return Variant(f"removal_{round(p * 100)}_at_{pos}", lambda t, s: token_removal(t, p, pos, s), p)


SUPERFICIAL = (
    Variant("random_capitalization", random_capitalization),
    Variant("character_deletion", character_deletion),
    Variant("numerization", numerization),
)
SEMANTIC = (
    Variant("sentence_shuffle", sentence_shuffle),
    Variant("word_shuffle", word_shuffle),
    Variant("negation_toggle", negation_toggle),
)
SENSITIVITY_INSERTION = tuple(_needle(p, pos) for p in NEEDLE_PROPORTIONS for pos in POSITIONS)
SENSITIVITY_REMOVAL = tuple(_removal(p, pos) for p in REMOVAL_PROPORTIONS for pos in POSITIONS)
# A.6: "18 perturbed versions of each document": 6 transformations, 6 needles and 6 removals.
RETRIEVAL = (
    *SEMANTIC,
    *SUPERFICIAL,
    *(_needle(p, pos) for p in RETRIEVAL_PROPORTIONS for pos in POSITIONS),
    *(_removal(p, pos) for p in RETRIEVAL_PROPORTIONS for pos in POSITIONS),
)
