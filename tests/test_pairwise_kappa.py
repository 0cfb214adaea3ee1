"""Cohen's κ per annotator pair with the items they share; pairs under the minimum are excluded from the mean.

The worked example is Wikipedia's "Cohen's kappa" (section "Simple example"): 50 grant proposals read by
A and B, yes/yes 20, A yes/B no 5, A no/B yes 10, no/no 15 → p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5,
κ = (0.7 − 0.5)/(1 − 0.5) = 0.4. The same proportions on 20 items (8, 2, 4, 6) give κ = 0.4 too.
"""
from __future__ import annotations

import pytest
from django.test import override_settings

from agreement.core.report_exports import report_rows
from agreement.core.reports import report_in_process
from agreement.core.scoring import score_task
from measures import pairwise_kappa as pk
from tests.report_builders import answers_from_columns, build_task, import_answers

A_50 = ["yes"] * 25 + ["no"] * 25
B_50 = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
A_20 = ["yes"] * 10 + ["no"] * 10
B_20 = ["yes"] * 8 + ["no"] * 2 + ["yes"] * 4 + ["no"] * 6
C_4 = ["yes", "no", "yes", "no"]  # C answers items 1–4 only, where A and B say yes: κ = 0 with each


def columns(*raters: list[str]) -> dict[int, dict[str, str]]:
    answers: dict[int, dict[str, str]] = {}
    for name, values in zip("ABC", raters, strict=False):
        for item, value in enumerate(values):
            answers.setdefault(item, {})[name] = value
    return answers


def test_the_wikipedia_example_gives_kappa_0_4_on_50_shared_items() -> None:
    report = score_task("classification", columns(A_50, B_50), {i: "yes" for i in range(50)})

    assert report["agreement"]["cohen_kappa_mean"] == pytest.approx(0.4, abs=1e-12)
    block = report["agreement_pairs"]["cohen_kappa"]
    assert block["pairs"] == [{"a": "A", "b": "B", "n_shared": 50, "kappa": pytest.approx(0.4, abs=1e-12),
                               "excluded": False, "reason": None}]
    assert (block["min_shared"], block["unit"], block["n_pairs_included"], block["n_pairs_excluded"]) == (
        10, "items", 1, 0)
    assert report["agreement_notes"]["cohen_kappa_mean"] == "mean over 1 annotator pair sharing 10 or more items"


def test_pairs_sharing_fewer_than_the_minimum_are_listed_but_left_out_of_the_mean() -> None:
    report = score_task("classification", columns(A_20, B_20, C_4), {i: "yes" for i in range(20)})

    pairs = {(p["a"], p["b"]): p for p in report["agreement_pairs"]["cohen_kappa"]["pairs"]}
    assert pairs[("A", "B")]["n_shared"] == 20 and pairs[("A", "B")]["kappa"] == pytest.approx(0.4)
    # A on items 1–4: yes yes yes yes; C: yes no yes no → A constant, p_o = p_e = 0.5 → κ = 0.
    assert pairs[("A", "C")] == {"a": "A", "b": "C", "n_shared": 4, "kappa": 0.0, "excluded": True,
                                 "reason": "excluded: 4 shared items, fewer than 10"}
    assert pairs[("B", "C")]["n_shared"] == 4 and pairs[("B", "C")]["excluded"] is True
    assert report["agreement"]["cohen_kappa_mean"] == pytest.approx(0.4)  # A–B only, not (0.4 + 0 + 0)/3
    assert report["agreement_notes"]["cohen_kappa_mean"] == (
        "mean over 1 annotator pair sharing 10 or more items; 2 pairs with fewer excluded")


def test_a_lower_minimum_lets_the_small_pairs_in() -> None:
    report = score_task("classification", columns(A_20, B_20, C_4), {i: "yes" for i in range(20)},
                        kappa_min_shared=4)
    assert report["agreement"]["cohen_kappa_mean"] == pytest.approx((0.4 + 0.0 + 0.0) / 3)
    assert report["agreement_pairs"]["cohen_kappa"]["n_pairs_excluded"] == 0


def test_when_every_pair_is_excluded_the_mean_is_undefined_and_says_why() -> None:
    report = score_task("classification", columns(A_20, B_20, C_4), {i: "yes" for i in range(20)},
                        kappa_min_shared=50)
    assert report["agreement"]["cohen_kappa_mean"] is None
    assert report["agreement_notes"]["cohen_kappa_mean"] == (
        "n/a: no annotator pair shares 50 or more items (3 pairs excluded)")


def test_annotators_who_share_no_item_are_counted_not_listed() -> None:
    codes = [[0, 1, -1], [1, 0, -1], [-1, -1, 1]]
    (value, _), block = pk.summary(codes, ["A", "B", "C"], 1)
    assert [(p["a"], p["b"]) for p in block["pairs"]] == [("A", "B")]
    assert block["n_pairs_without_shared"] == 2
    assert value == pytest.approx(-1.0)  # A and B disagree on both items, each 50/50: κ = (0 − 0.5)/0.5


def test_reranking_counts_shared_candidate_judgments() -> None:
    answers = {f"q{q}": {"A": {f"c{c}": int(c < 2) for c in range(5)}, "B": {f"c{c}": int(c < 3) for c in range(5)}}
               for q in range(2)}
    gold = {f"q{q}": {f"c{c}": int(c < 2) for c in range(5)} for q in range(2)}
    block = score_task("reranking", answers, gold)["agreement_pairs"]["cohen_kappa"]
    # 10 judgments each: A relevant 4, B relevant 6; they differ on c2 of each query → p_o = 0.8,
    # p_e = 0.4·0.6 + 0.6·0.4 = 0.48 → κ = 0.32/0.52 = 8/13.
    assert (block["unit"], block["pairs"][0]["n_shared"]) == ("judgments", 10)
    assert block["pairs"][0]["kappa"] == pytest.approx(8 / 13)


@pytest.mark.django_db
def test_the_stored_report_uses_the_setting_and_a_new_minimum_recomputes_it() -> None:
    task = build_task("classification", "kappa-pairs", [{"text": f"t{i}", "label": "yes"} for i in range(20)],
                      labels=["no", "yes"])
    import_answers(task, answers_from_columns({"A": A_20, "B": B_20, "C": C_4}))

    doc, _ = report_in_process(task)
    assert doc["agreement"]["cohen_kappa_mean"] == pytest.approx(0.4)
    assert doc["agreement_pairs"]["cohen_kappa"]["n_pairs_excluded"] == 2
    with override_settings(KAPPA_MIN_SHARED_ITEMS=4):
        doc, how = report_in_process(task)
    assert how == "computed"  # the minimum is part of the inputs digest
    assert doc["agreement"]["cohen_kappa_mean"] == pytest.approx(0.4 / 3)
    assert doc["agreement_pairs"]["cohen_kappa"]["min_shared"] == 4


def test_the_report_csv_has_one_row_per_pair_with_its_shared_items() -> None:
    report = score_task("classification", columns(A_20, B_20, C_4), {i: "yes" for i in range(20)})
    doc = {"task": "t", "language": "eng-Latn", **report}
    rows = [r for r in report_rows(doc) if r["section"] == "agreement_pair"]
    assert [(r["annotator"], r["metric"], r["value"], r["note"]) for r in rows] == [
        ("A | B", "cohen_kappa", pytest.approx(0.4), "20 shared items"),
        ("A | C", "cohen_kappa", 0.0, "4 shared items; excluded: 4 shared items, fewer than 10"),
        ("B | C", "cohen_kappa", 0.0, "4 shared items; excluded: 4 shared items, fewer than 10"),
    ]
