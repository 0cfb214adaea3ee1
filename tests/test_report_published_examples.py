"""Published worked examples reproduced through the whole report path.

Each test imports a task and its annotations with the real `import_task` and `import_annotations` commands,
queues the report,
lets a REAL Celery worker compute and store it, and reads the stored report back with
`python manage.py report TASK --format json`. Values are the published ones, to their printed precision.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.report_builders import answers_from_columns, import_study, report_via_worker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

# Fleiss (1971) Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses; the same data as statsmodels'
# stats/tests/test_inter_rater.py `diagnoses` (rows = patients, values = category codes 1..5).
FLEISS_DIAGNOSES = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]
DIAGNOSES = {1: "depression", 2: "personality disorder", 3: "schizophrenia", 4: "neurosis", 5: "other"}

# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", the 4 observers × 12 units example
# with missing values (None); published α: nominal 0.743, ordinal 0.815, interval 0.849.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def test_fleiss_1971_diagnoses_give_kappa_0_430(start_worker, tmp_path) -> None:
    start_worker()
    raters = {f"psychiatrist{r + 1}": [DIAGNOSES[row[r]] for row in FLEISS_DIAGNOSES] for r in range(6)}
    task = import_study(tmp_path, "classification", "Fleiss1971", [{"text": f"patient {i + 1}"} for i in range(30)],
                        answers_from_columns(raters), labels=",".join(DIAGNOSES.values()))

    doc = report_via_worker(task)

    assert doc["task"] == "Fleiss1971" and doc["kind"] == "classification" and doc["language"] == "eng-Latn"
    assert doc["n_items"] == 30 and doc["n_annotators"] == 6 and doc["n_answers"] == 180
    assert round(doc["agreement"]["fleiss_kappa"], 3) == 0.430
    assert doc["agreement_bands"]["fleiss_kappa"] == "moderate"
    assert doc["flags"]["low_agreement"] is False  # 0.430 is just above HUME's 0.4 threshold


def krippendorff_task(folder: Path, kind: str, name: str) -> dict:
    """The Krippendorff (2011) data as a task of `kind` (values wrapped as the kind's answer format)."""
    options: dict[str, str] = {}
    if kind == "classification":
        records, wrap = [{"text": f"unit {u}"} for u in range(1, 13)], str
        options["labels"] = "1,2,3,4,5"
    elif kind == "likert":
        records, wrap = [{"context": f"unit {u}", "text": "t"} for u in range(1, 13)], lambda v: {"overall": v}
        options |= {"axes": "overall", "scale": "1,5", "step": "1"}
    else:
        records, wrap = [{"sentence1": f"unit {u}", "sentence2": "s"} for u in range(1, 13)], float
    columns = {who: [None if v is None else wrap(v) for v in values] for who, values in KRIPPENDORFF_2011.items()}
    task = import_study(folder, kind, name, records, answers_from_columns(columns), **options)
    return report_via_worker(task)


def test_krippendorff_2011_example_at_three_levels_of_measurement(start_worker, tmp_path) -> None:
    start_worker()
    nominal = krippendorff_task(tmp_path, "classification", "Kripp-nominal")
    ordinal = krippendorff_task(tmp_path, "likert", "Kripp-ordinal")
    interval = krippendorff_task(tmp_path, "sts", "Kripp-interval")

    assert round(nominal["agreement"]["krippendorff_alpha"], 3) == 0.743
    assert round(ordinal["agreement"]["krippendorff_alpha_overall"], 3) == 0.815
    assert round(interval["agreement"]["krippendorff_alpha"], 3) == 0.849
    assert nominal["n_answers"] == ordinal["n_answers"] == interval["n_answers"] == 41


def test_textbook_cohen_kappa_of_fleiss_levin_paik_table_18_1(start_worker, tmp_path) -> None:
    """Fleiss, Levin & Paik (2003), Statistical Methods for Rates and Proportions, 3rd ed., §18.1: two raters
    diagnose 100 subjects; p_o = 0.89, p_e = 0.66, κ = 0.68 (0.23 / 0.34 = 0.676)."""
    start_worker()
    cells = {("psychotic", "psychotic"): 75, ("psychotic", "neurotic"): 1, ("psychotic", "organic"): 4,
             ("neurotic", "psychotic"): 5, ("neurotic", "neurotic"): 4, ("neurotic", "organic"): 1,
             ("organic", "organic"): 10}
    pairs = [pair for pair, count in cells.items() for _ in range(count)]
    raters = {"rater_a": [a for a, _ in pairs], "rater_b": [b for _, b in pairs]}
    subjects = [{"text": f"subject {i}"} for i in range(1, 101)]
    task = import_study(tmp_path, "classification", "FleissLevinPaik", subjects, answers_from_columns(raters),
                        labels="psychotic,neurotic,organic")

    doc = report_via_worker(task)

    assert round(doc["agreement"]["cohen_kappa_mean"], 3) == 0.676
    assert doc["agreement"]["percent_agreement"] == pytest.approx(0.89)
    assert doc["agreement_bands"]["cohen_kappa_mean"] == "substantial"


def test_wilson_interval_of_newcombe_1998_example_81_of_263(start_worker, tmp_path) -> None:
    """Newcombe (1998) Stat Med 17:857–872, Table I, example (a): 81/263 → Wilson score 0.2553–0.3662."""
    start_worker()
    answers = ["yes"] * 81 + ["no"] * 182
    items = [{"text": f"item {i}", "label": "yes"} for i in range(1, 264)]
    task = import_study(tmp_path, "classification", "Newcombe", items,
                        answers_from_columns({"ann1": answers, "ann2": answers}), labels="no,yes")

    doc = report_via_worker(task)

    human = doc["human"]
    assert human["main_metric"] == "accuracy" and human["ci_method"] == "wilson"
    assert human["main_score"] == pytest.approx(81 / 263)
    assert (round(human["ci_low"], 4), round(human["ci_high"], 4)) == (0.2553, 0.3662)


# pytrec_eval's examples/simple.py (trec_eval semantics): qrels and a run over two queries; trec_eval gives
# ndcg q1 = 0.5, q2 = 0.6934 (and map 0.3333, 0.5833 for a strict ranking, which 0/1 judgments cannot express).
TREC_QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d1": 0, "d2": 1, "d3": 1}}  # q2's d1 is unjudged: 0
TREC_RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}


def test_trec_eval_ndcg_of_pytrec_eval_example_via_graded_relevance(start_worker, tmp_path) -> None:
    start_worker()
    records = [{"id": q, "query": f"query {q}",
                "documents": [{"id": d, "text": d, "score": rel} for d, rel in docs.items()]}
               for q, docs in TREC_QRELS.items()]
    # The run's scores, mapped onto the 0–10 scale in the same order (only the ranking counts).
    on_scale = {"q1": {"d1": 2, "d2": 0, "d3": 3}, "q2": {"d1": 3, "d2": 1, "d3": 2}}
    task = import_study(tmp_path, "graded_relevance", "TrecNdcg", records,
                        [{"item": q, "annotator": "judge", "value": v} for q, v in on_scale.items()])

    doc = report_via_worker(task)

    assert doc["human"]["main_metric"] == "ndcg_at_10"
    assert round(doc["human"]["main_score"], 4) == round((0.5 + 0.6934264036172708) / 2, 4)
    assert doc["annotators"][0]["scores"]["ndcg_at_10"] == pytest.approx(doc["human"]["main_score"])


def test_trec_eval_map_and_mrr_on_a_qrels_file_of_candidate_pairs(start_worker, tmp_path) -> None:
    """With 0/1 judgments (HUME's reranking protocol) a ranking is strict only for two candidates, where
    trec_eval's map and recip_rank are unambiguous: q1 (relevant doc ranked 2nd) AP = RR = 0.5, q2 and
    q3 AP = RR = 1 → map = 0.8333, recip_rank = 0.8333 (trec_eval -m map -m recip_rank)."""
    start_worker()
    qrels = {"q1": {"c1": 1, "c2": 0}, "q2": {"c1": 0, "c2": 1}, "q3": {"c1": 1, "c2": 1}}
    records = [{"id": q, "query": f"query {q}",
                "candidates": [{"id": c, "text": c, "relevant": r} for c, r in rel.items()]}
               for q, rel in qrels.items()]
    judged = {"q1": {"c1": 0, "c2": 1}, "q2": {"c1": 0, "c2": 1}, "q3": {"c1": 1, "c2": 0}}
    task = import_study(tmp_path, "reranking", "TrecMap", records,
                        [{"item": q, "annotator": "judge", "value": v} for q, v in judged.items()])

    doc = report_via_worker(task)

    assert doc["human"]["main_metric"] == "map"
    assert round(doc["human"]["main_score"], 4) == 0.8333
    assert round(doc["human"]["scores"]["mrr_at_10"], 4) == 0.8333
