"""SAGE's perturbations on hand-computed examples (SAGE, arXiv:2509.21310, Appendix A.3, A.4, A.6)."""
from __future__ import annotations

import pytest

from measures.sage import perturb
from measures.sage.perturb import (
    character_deletion,
    derive_seed,
    lorem_needle,
    needle_insertion,
    negation_toggle,
    numerization,
    random_capitalization,
    sentence_shuffle,
    token_removal,
    word_shuffle,
)

TWENTY = " ".join(f"t{i}" for i in range(1, 21))
TEN = " ".join(f"t{i}" for i in range(1, 11))


def words(*numbers: int) -> str:
    return " ".join(f"t{i}" for i in numbers)


# A.3 superficial perturbations

def test_character_deletion_removes_every_tenth_character():
    # A.3 "Every 10th character removed": the 10th (j) and the 20th (t) go.
    assert character_deletion("abcdefghijklmnopqrstu") == "abcdefghiklmnopqrsu"
    assert character_deletion("the cat sat on a mat") == "the cat st on a ma"


def test_character_deletion_keeps_a_tenth_character_that_is_a_space():
    # A.3 "with special handling for spaces to preserve word boundaries": the 10th and 20th are spaces.
    assert character_deletion("123456789 abcdefghi j") == "123456789 abcdefghi j"


def test_numerization_replaces_e_i_a_o_by_digits():
    # A.3: 'e' → '3', 'i' → '1', 'a' → '4', 'o' → '0'; the paper lists lower-case letters only.
    assert numerization("Hello radio AEIO") == "H3ll0 r4d10 AEIO"


def test_random_capitalization_upper_cases_a_quarter_of_the_characters():
    # A.3: 25% of 20 characters = 5 upper-cased, nothing else changes.
    out = random_capitalization("abcdefghijklmnopqrst", seed=7)
    assert sum(c.isupper() for c in out) == 5
    assert out.lower() == "abcdefghijklmnopqrst"


def test_random_capitalization_does_not_switch_case():
    # A.3 "(not case-switched)": an upper-case letter drawn stays upper-case.
    assert random_capitalization("ABCDEFGH", seed=3) == "ABCDEFGH"


def test_random_perturbations_repeat_with_the_same_seed_and_change_with_another():
    text = "The first sentence. A second one! Is this the third? The fourth and last."
    for function in (random_capitalization, sentence_shuffle, word_shuffle):
        assert function(text, 11) == function(text, 11)
        assert len({function(text, seed) for seed in range(6)}) > 1


# A.3 / A.6 semantic alterations

def test_sentence_shuffle_permutes_whole_sentences():
    text = "One. Two! Three? Four."
    out = sentence_shuffle(text, 1)
    assert sorted(out.split(" ")) == sorted(["One.", "Two!", "Three?", "Four."])
    assert out != text


def test_word_shuffle_permutes_all_words_of_the_text():
    out = word_shuffle(TWENTY, 5)
    assert sorted(out.split()) == sorted(TWENTY.split()) and out != TWENTY


def test_negation_toggle_negates_and_unnegates_auxiliaries():
    # A.6 names "negation toggling" as the third meaning-changing perturbation.
    assert negation_toggle("The drug is safe and you can't stop it.") == "The drug is not safe and you can stop it."
    assert negation_toggle("They do not agree. Isn't it? It Cannot fail.") == "They do agree. Is it? It Can fail."
    assert negation_toggle("She won't go.") == "She will go."


def test_negation_toggle_twice_restores_an_uncontracted_text():
    text = "The bill was passed and it will take effect."
    assert negation_toggle(text) == "The bill was not passed and it will not take effect."
    assert negation_toggle(negation_toggle(text)) == text


# A.4 needle insertion

def test_needle_length_is_the_proportion_of_the_token_length():
    # A.4: 15%, 50%, 100% of 20 tokens = 3, 10, 20 words of Lorem Ipsum, here at position 0.
    assert needle_insertion(TWENTY, 0.15, 0.0) == "Lorem ipsum dolor " + TWENTY
    assert needle_insertion(TWENTY, 0.5, 1.0) == TWENTY + " " + lorem_needle(10)
    assert len(needle_insertion(TWENTY, 1.0, 0.0).split()) == 40


def test_needle_goes_at_the_exact_character_position():
    # A.4 "Inserts needle text at exact character position calculated as position * len(text)":
    # len("one two three four") = 18, position 0.5 → character 9, inside "three".
    assert needle_insertion("one two three four", 0.5, 0.5) == "one two t Lorem ipsum hree four"


def test_a_long_needle_cycles_through_lorem_ipsum():
    assert len(perturb.LOREM_IPSUM) == 69
    needle = lorem_needle(70).split()
    assert needle[68] == "laborum." and needle[69] == "Lorem"


# A.4 token removal with the position adjustment

@pytest.mark.parametrize(("proportion", "position", "expected"), [
    (0.5, 0.0, words(*range(11, 21))),                      # start 0
    (0.5, 0.5, words(*range(1, 6), *range(16, 21))),        # start = 0.5 · (1 − 0.5) · 20 = 5
    (0.5, 1.0, words(*range(1, 11))),                       # start = 1.0 · 0.5 · 20 = 10: the last half
    (0.15, 0.5, words(*range(1, 9), *range(12, 21))),       # k = 3, start = floor(0.5 · 0.85 · 20) = 8
])
def test_token_removal_starts_at_position_times_one_minus_size(proportion, position, expected):
    assert token_removal(TWENTY, proportion, position) == expected


def test_token_removal_of_ninety_percent_keeps_one_token_in_ten():
    # A.4: 90% of 10 tokens = 9; start = position · 0.1 · 10 → 0 (middle: floor 0.5) or 1 (end).
    assert token_removal(TEN, 0.9, 0.0) == "t10"
    assert token_removal(TEN, 0.9, 0.5) == "t10"
    assert token_removal(TEN, 0.9, 1.0) == "t1"


# The variants each category uses

def test_the_variant_lists_follow_the_appendix():
    assert [v.name for v in perturb.SUPERFICIAL] == ["random_capitalization", "character_deletion", "numerization"]
    assert [v.name for v in perturb.SEMANTIC] == ["sentence_shuffle", "word_shuffle", "negation_toggle"]
    # A.4: 3 proportions × 3 positions, for insertion and for removal.
    assert sorted({v.proportion for v in perturb.SENSITIVITY_INSERTION}) == [0.15, 0.5, 1.0]
    assert sorted({v.proportion for v in perturb.SENSITIVITY_REMOVAL}) == [0.15, 0.5, 0.9]
    assert len(perturb.SENSITIVITY_INSERTION) == len(perturb.SENSITIVITY_REMOVAL) == 9
    # A.6: 18 perturbed versions: 6 transformations, needles and removals at 15%/50% × 3 positions.
    assert len(perturb.RETRIEVAL) == len({v.name for v in perturb.RETRIEVAL}) == 18
    assert {v.proportion for v in perturb.RETRIEVAL} == {None, 0.15, 0.5}


def test_every_variant_is_pure_given_its_seed():
    text = "The council is sure. It can't wait! Bus fares will rise next year."
    for variant in (*perturb.SUPERFICIAL, *perturb.SEMANTIC, *perturb.RETRIEVAL):
        assert variant.apply(text, 42) == variant.apply(text, 42)


def test_derived_seeds_are_stable_and_distinct():
    assert derive_seed(0, "robustness/news", "doc1", "word_shuffle") == derive_seed(
        0, "robustness/news", "doc1", "word_shuffle")
    assert derive_seed(0, "doc1") != derive_seed(1, "doc1") != derive_seed(0, "doc2")
