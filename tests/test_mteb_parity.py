"""Models run here score what MTEB's own task classes score, to 1e-5 (mteb 2.20.0, a test-only requirement).

For every kind MTEB has, a small task is scored twice with the shipped all-MiniLM-L6-v2: by this app
(`run_models --wait`, or an embedding run of a retrieval collection and `evaluate_collection`) and by MTEB's
own task class (`AbsTaskSTS`, `AbsTaskClassification` with cross-validation, `AbsTaskClusteringLegacy`,
`AbsTaskRetrieval` with top-ranked candidates for reranking and graded relevance, and over a whole corpus for
a collection) on the same data, the model wrapped as MTEB wraps a SentenceTransformer, offline. The data
exercise what MTEB does its own way: a classification with more than `samples_per_label` (8) items per label
and folds of unequal size, reranking queries with instructions and one with no relevant candidate, a graded
query with no positive grade, and a collection whose queries carry instructions (and one whose judgments
are all 0). MTEB rounds its retrieval figures (not MRR) to 5 decimals: the tolerance is 1e-5.
Pairwise and Likert are SAGE's kinds; MTEB has none (docs/models-in-app.md). mteb is imported inside the
fixtures: its import takes seconds and must not slow the collection of the rest of the suite."""
from __future__ import annotations

import io
import json
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from sklearn.model_selection import KFold

from agreement.retrieval.collection_import import import_collection
from agreement.retrieval.evaluation_inputs import evaluate_collection
from agreement.retrieval.models import Collection
from tests import model_data as data
from tests.report_builders import build_task

pytestmark = [pytest.mark.django_db,  # mteb 2.20.0 imports a sentence-transformers module its 6.x renamed
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def mteb_model() -> Any:
    """The shipped MiniLM as MTEB wraps a SentenceTransformer (nothing downloaded: HF_HUB_OFFLINE=1)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
        from sentence_transformers import SentenceTransformer

        from agreement.model_runs.shipped import minilm_folder

        model = SentenceTransformer(str(minilm_folder()), device="cpu", local_files_only=True)
        yield SentenceTransformerEncoderWrapper(model)


def metadata(name: str, task_type: str, main_score: str) -> Any:
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(name=name, description="HUME parity probe", type=task_type, eval_splits=["test"],
                        eval_langs=["eng-Latn"], main_score=main_score,
                        dataset={"path": "hume/parity-probe", "revision": "1"})


def mteb_scores(task_class: type, dataset: Any, model: Any) -> dict[str, Any]:
    """MTEB's own evaluation of an in-memory dataset (no loading), the "default" subset's scores."""
    task = task_class()
    task.dataset, task.data_loaded = dataset, True
    return task.evaluate(model, split="test", encode_kwargs={"batch_size": 32})["default"]


def app_scores(kind: str, records: list[dict[str, Any]], *options: str, **fields: Any) -> dict[str, Any]:
    """This app's run of the shipped MiniLM on a task of `records`: its scores against gold."""
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task = build_task(kind, f"parity-{kind}", records, **fields)
    out = io.StringIO()
    call_command("run_models", task.name, "--models", "minilm", "--wait", *options, stdout=out)
    return json.loads(out.getvalue())["models"]["minilm"]["gold"]


def assert_same(app: dict[str, Any], mteb: dict[str, Any], names: tuple[str, ...]) -> None:
    for name in names:
        assert app[name] == pytest.approx(mteb[name], abs=TOLERANCE), name
    assert app["main_score"] == pytest.approx(mteb["main_score"], abs=TOLERANCE)


def test_sts_equals_mteb_abstasksts(mteb_model: Any) -> None:
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.sts import AbsTaskSTS

    class Probe(AbsTaskSTS):
        metadata = metadata("HUMEParitySTS", "STS", "cosine_spearman")
        min_score, max_score = 0, 5

    rows = {"sentence1": [a for a, _, _ in data.STS], "sentence2": [b for _, b, _ in data.STS],
            "score": [s for _, _, s in data.STS]}
    mteb = mteb_scores(Probe, DatasetDict({"test": Dataset.from_dict(rows)}), mteb_model)
    app = app_scores("sts", [{"sentence1": a, "sentence2": b, "score": s} for a, b, s in data.STS])
    assert_same(app, mteb, ("cosine_spearman", "cosine_pearson"))


# 46 items (folds of 10 and 9), 15 or 16 per label: more than MTEB's 8 in every training fold, so undersampling
# drops items. Every third text carries the next topic's label: a noisy task, on which MTEB's protocol and the
# pooled option give different scores (the test of the option checks that they do).
_SPORT = [f"{who} {what}." for who, what in product(
    ("The striker", "Our team", "The goalkeeper", "The coach", "The captain", "The referee"),
    ("won the cup final", "trained in the rain", "missed a penalty"))][:16]
_FOOD = [f"{what} {how}." for what, how in product(
    ("Fry the onions", "Bake the bread", "Boil the pasta", "Roast the chicken"),
    ("until golden", "with fresh herbs", "in a hot oven", "for ten minutes"))][:15]
_WEATHER = [f"{what} {when}." for what, when in product(
    ("Heavy rain is expected", "A cold wind will blow", "Snow will fall", "The sun will shine", "Fog will linger"),
    ("this afternoon", "over the weekend", "tomorrow morning"))][:15]
_TOPICS = ("sport", "food", "weather")
CLASSIFICATION = [(text, _TOPICS[(topic + (n % 3 == 2)) % 3])
                  for topic, texts in enumerate((_SPORT, _FOOD, _WEATHER)) for n, text in enumerate(texts)]
CLASSIFICATION = sorted(CLASSIFICATION, key=lambda r: len(r[0]) % 7)


def _mteb_classification(mteb_model: Any) -> dict[str, Any]:
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.classification import AbsTaskClassification

    class Probe(AbsTaskClassification):
        metadata = metadata("HUMEParityClassification", "Classification", "accuracy")
        is_cross_validation, train_split = True, "test"  # a study has no train split: MTEB's cross-validation

    codes = {label: n for n, label in enumerate(sorted({label for _, label in CLASSIFICATION}))}
    rows = {"text": [t for t, _ in CLASSIFICATION], "label": [codes[label] for _, label in CLASSIFICATION]}
    return mteb_scores(Probe, DatasetDict({"test": Dataset.from_dict(rows)}), mteb_model)


def test_classification_equals_mteb_cross_validation_with_undersampling(mteb_model: Any) -> None:
    labels = np.array([label for _, label in CLASSIFICATION])
    for train, _ in KFold(n_splits=5, shuffle=True, random_state=42).split(labels):
        assert min(np.unique(labels[train], return_counts=True)[1]) > 8  # undersampling drops items in every fold
    mteb = _mteb_classification(mteb_model)
    app = app_scores("classification", [{"text": t, "label": label} for t, label in CLASSIFICATION],
                     labels=["food", "sport", "weather"])
    assert_same(app, mteb, ("accuracy", "f1", "f1_weighted", "precision", "precision_weighted", "recall",
                            "recall_weighted"))
    assert (app["protocol"], app["cv_folds"], app["seed"], app["samples_per_label"]) == ("mteb", 5, 42, 8)


def test_the_pooled_classification_option_is_another_protocol_and_says_so(mteb_model: Any) -> None:
    """--protocol pooled (whole training folds, pooled predictions) is named on the scores and, on this task,
    is not MTEB's number: it is an option, never the default."""
    mteb = _mteb_classification(mteb_model)
    app = app_scores("classification", [{"text": t, "label": label} for t, label in CLASSIFICATION],
                     "--protocol", "pooled", labels=["food", "sport", "weather"])
    assert (app["protocol"], app["averaging"]) == ("pooled", "pooled out-of-fold predictions")
    assert abs(app["accuracy"] - mteb["accuracy"]) > 0.01


def test_clustering_equals_mteb_legacy_clustering(mteb_model: Any) -> None:
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy

    class Probe(AbsTaskClusteringLegacy):
        metadata = metadata("HUMEParityClustering", "Clustering", "v_measure")

    sets = {"sentences": [s["sentences"] for s in data.CLUSTERING],
            "labels": [[sorted(set(s["labels"])).index(x) for x in s["labels"]] for s in data.CLUSTERING]}
    mteb = mteb_scores(Probe, DatasetDict({"test": Dataset.from_dict(sets)}), mteb_model)
    app = app_scores("clustering", data.CLUSTERING)
    assert_same(app, mteb, ("v_measure",))


# Candidate ids are unique over the task, as MTEB's corpus is one; q3 has no relevant candidate.
RERANKING = [
    {"id": "q1", "query": "how to bake bread at home", "instruction": "Find step-by-step recipes.",
     "candidates": [{"id": "q1c1", "text": "Knead the dough, let it rise and bake it at 220 degrees.", "relevant": 1},
                    {"id": "q1c2", "text": "The football season starts in August.", "relevant": 0},
                    {"id": "q1c3", "text": "A homemade loaf needs flour, water, yeast and salt.", "relevant": 1},
                    {"id": "q1c4", "text": "Bread prices rose after the harvest failed.", "relevant": 0}]},
    {"id": "q2", "query": "symptoms of the flu", "instruction": "Answers a doctor would give.",
     "candidates": [{"id": "q2c1", "text": "Parliament passed the new budget.", "relevant": 0},
                    {"id": "q2c2", "text": "Influenza causes fever, cough and muscle aches.", "relevant": 1},
                    {"id": "q2c3", "text": "Flu season peaks in winter.", "relevant": 0},
                    {"id": "q2c4", "text": "Guitar strings should be changed regularly.", "relevant": 0}]},
    {"id": "q3", "query": "best way to learn a language",
     "candidates": [{"id": "q3c1", "text": "The river flooded the village.", "relevant": 0},
                    {"id": "q3c2", "text": "Mount Everest is the highest mountain.", "relevant": 0},
                    {"id": "q3c3", "text": "The bakery opens at seven.", "relevant": 0}]},
    {"id": "q4", "query": "renewable energy", "instruction": "Prefer news about power generation.",
     "candidates": [{"id": "q4c1", "text": "Wind turbines generate clean power.", "relevant": 1},
                    {"id": "q4c2", "text": "Coal plants emit carbon dioxide.", "relevant": 0},
                    {"id": "q4c3", "text": "Solar panels turn sunlight into electricity.", "relevant": 1}]},
]


def _mteb_ranking_task(records: list[dict[str, Any]], field: str, grade: str, main_score: str,
                       mteb_model: Any) -> dict[str, Any]:
    """AbsTaskRetrieval over each query's own candidates (top_ranked), as MTEB 2.x runs reranking tasks. MTEB's
    batches take no None: a query without instruction has "" (MTEB embeds "query ", the same tokens)."""
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    class Probe(AbsTaskRetrieval):
        metadata = metadata(f"HUMEParity{main_score}", "Reranking", main_score)

    docs = [d for r in records for d in r[field]]
    corpus = Dataset.from_dict({"id": [d["id"] for d in docs], "text": [d["text"] for d in docs],
                                "title": [""] * len(docs)})
    queries = Dataset.from_dict({"id": [r["id"] for r in records], "text": [r["query"] for r in records],
                                 "instruction": [r.get("instruction") or "" for r in records]})
    split = {"corpus": corpus, "queries": queries,
             "relevant_docs": {r["id"]: {d["id"]: int(d[grade]) for d in r[field]} for r in records},
             "top_ranked": {r["id"]: [d["id"] for d in r[field]] for r in records}}
    return mteb_scores(Probe, {"default": {"test": split}}, mteb_model)


def test_reranking_with_instructions_and_a_query_without_relevant_candidate_equals_mteb(mteb_model: Any) -> None:
    mteb = _mteb_ranking_task(RERANKING, "candidates", "relevant", "map_at_1000", mteb_model)
    app = app_scores("reranking", RERANKING)
    assert_same(app, mteb, ("map_at_1000", "mrr_at_10", "ndcg_at_10"))
    assert (app["n"], app["n_queries_without_relevant"]) == (4, 1)


def test_query_and_document_texts_are_the_ones_mteb_writes() -> None:
    """The texts a model embeds, from MTEB's own dataloader code: the instruction after the query
    (`_combine_queries_with_instruction_text`), title + text (`_corpus_to_dict`)."""
    from datasets import Dataset
    from mteb._create_dataloaders import _combine_queries_with_instruction_text, _corpus_to_dict

    from kinds.evaluation import query_of
    from measures.mteb_texts import document_text

    with_instruction = [r for r in RERANKING if r.get("instruction")]
    queries = Dataset.from_dict({"id": [r["id"] for r in with_instruction],
                                 "text": [r["query"] for r in with_instruction],
                                 "instruction": [r["instruction"] for r in with_instruction]})
    assert [query_of(r) for r in with_instruction] == _combine_queries_with_instruction_text(queries)["text"]
    assert query_of(RERANKING[2]) == RERANKING[2]["query"]  # no instruction: the query alone
    for doc_id, title, text in COLLECTION["corpus"]:
        assert document_text(title, text) == _corpus_to_dict({"id": doc_id, "title": title, "text": text})["text"]


GRADED = [
    {"id": "g1", "query": "training for a marathon", "documents": [
        {"id": "g1d1", "text": "Long slow runs build endurance for 42 kilometres.", "score": 10},
        {"id": "g1d2", "text": "Stretching helps runners avoid injuries.", "score": 6},
        {"id": "g1d3", "text": "The museum opens at nine.", "score": 0},
        {"id": "g1d4", "text": "Good running shoes matter.", "score": 5}]},
    {"id": "g2", "query": "renewable energy sources", "documents": [
        {"id": "g2d1", "text": "Coal plants emit carbon dioxide.", "score": 3},
        {"id": "g2d2", "text": "Wind turbines generate clean power.", "score": 8},
        {"id": "g2d3", "text": "The recipe needs two eggs.", "score": 0},
        {"id": "g2d4", "text": "Solar panels turn sunlight into electricity.", "score": 9}]},
    {"id": "g3", "query": "the history of jazz", "documents": [
        {"id": "g3d1", "text": "The tram line was extended.", "score": 0},
        {"id": "g3d2", "text": "Tomatoes grow best in full sun.", "score": 0}]},
]


def test_graded_relevance_with_a_query_without_positive_grade_equals_mteb(mteb_model: Any) -> None:
    mteb = _mteb_ranking_task(GRADED, "documents", "score", "ndcg_at_10", mteb_model)
    app = app_scores("graded_relevance", GRADED)
    assert_same(app, mteb, ("ndcg_at_10", "recall_at_10"))
    assert app["n_queries_without_relevant"] == 1


COLLECTION = {
    "corpus": [("d1", "Vitamin D", "Vitamin D supplements reduce respiratory infections in children."),
               ("d2", "", "Aspirin taken daily lowers the risk of colorectal cancer."),
               ("d3", "Sleep", "Adults who sleep less than six hours have more heart disease."),
               ("d4", "Coffee", "Drinking coffee is linked to a lower risk of liver disease."),
               ("d5", "", "Regular exercise improves memory in older adults."),
               ("d6", "Salt", "A diet high in salt raises blood pressure."),
               ("d7", "Vaccines", "Measles vaccination prevents outbreaks in schools.")],
    "queries": [("q1", "Does vitamin D prevent colds?", "Retrieve medical studies."),
                ("q2", "aspirin and cancer", ""),
                ("q3", "effects of poor sleep", "Find evidence about the heart."),
                ("q4", "salt and hypertension", "Prefer dietary studies.")],
    "qrels": [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1), ("q3", "d5", 1), ("q4", "d7", 0)],
}


def _write_collection(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "qrels").mkdir()
    lines = [json.dumps({"_id": i, "title": title, "text": text}) for i, title, text in COLLECTION["corpus"]]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [json.dumps({"_id": i, "text": text, **({"instruction": ins} if ins else {})})
             for i, text, ins in COLLECTION["queries"]]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in COLLECTION["qrels"])]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def test_a_collection_with_instructions_scores_as_mteb_retrieval(mteb_model: Any, tmp_path: Path) -> None:
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    class Probe(AbsTaskRetrieval):
        metadata = metadata("HUMEParityRetrieval", "Retrieval", "ndcg_at_10")

    corpus = Dataset.from_dict({"id": [d[0] for d in COLLECTION["corpus"]],
                                "title": [d[1] for d in COLLECTION["corpus"]],
                                "text": [d[2] for d in COLLECTION["corpus"]]})
    queries = Dataset.from_dict({"id": [q[0] for q in COLLECTION["queries"]],
                                 "text": [q[1] for q in COLLECTION["queries"]],
                                 "instruction": [q[2] for q in COLLECTION["queries"]]})
    qrels: dict[str, dict[str, int]] = {}
    for q, d, s in COLLECTION["qrels"]:
        qrels.setdefault(q, {})[d] = s
    split = {"corpus": corpus, "queries": queries, "relevant_docs": qrels, "top_ranked": None}
    mteb = mteb_scores(Probe, {"default": {"test": split}}, mteb_model)

    import_collection(_write_collection(tmp_path / "parity"), name="Parity", language="eng-Latn", subset="en")
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    call_command("embedding_run", "Parity", "--model", "minilm", "--k", "100", stdout=io.StringIO())
    (row,) = [r for r in evaluate_collection(Collection.objects.get(name="Parity")) if r.reference == "qrels:test"]
    scores = row.scores
    assert scores.queries == 4 and scores.queries_without_relevant == 1  # q4: judged, all 0 → scored 0
    for name, mine in (("ndcg_at_10", scores.at("ndcg", 10)), ("recall_at_10", scores.at("recall", 10)),
                       ("mrr_at_10", scores.at("mrr", 10)), ("map_at_100", scores.map),
                       ("ndcg_at_1", scores.at("ndcg", 1))):
        assert mine == pytest.approx(mteb[name], abs=TOLERANCE), name
    assert np.isfinite(mteb["main_score"])
