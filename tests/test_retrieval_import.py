"""Importing retrieval collections (BEIR layout) and TREC runs: counts, order, and errors that name the line."""
from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agreement.retrieval.models import Collection, Document, Qrel, Query, Ranking, RankingEntry, Subset
from agreement.retrieval.rankings import import_ranking
from hume.lib.import_reader import ImportFailed
from tests.retrieval_helpers import MINIFACT, RUN_FILE, load_minifact, load_run, spoiled_copy

pytestmark = pytest.mark.django_db


def test_it_imports_two_subsets_of_one_collection_with_the_cli() -> None:
    out = StringIO()
    call_command("import_collection", str(MINIFACT / "en"), "--name", "MiniFact", "--language", "eng-Latn",
                 "--subset", "en", stdout=out)
    call_command("import_collection", str(MINIFACT / "da"), "--name", "MiniFact", "--language", "dan-Latn",
                 "--subset", "da", stdout=out)
    assert "documents: 10" in out.getvalue() and "qrels: test: 4" in out.getvalue()
    collection = Collection.objects.get(name="MiniFact")
    assert sorted(collection.subsets.values_list("name", "language")) == [("da", "dan-Latn"), ("en", "eng-Latn")]
    assert Document.objects.filter(subset__name="en").count() == 10
    assert Query.objects.get(query_id="q101").instruction == "Find dokumenter om børn."
    statins = Document.objects.get(doc_id="32587")
    assert (statins.title, statins.line) == ("", 10)
    assert dict(Qrel.objects.filter(subset__name="da").values_list("document__doc_id", "relevance")) == {
        "d1": 2.0, "d2": 1.0, "d4": 2.0, "d3": 1.0}


def test_a_corpus_line_without_id_is_refused_with_its_line_and_nothing_is_stored(tmp_path: Path) -> None:
    folder = spoiled_copy(tmp_path, "en", "corpus.jsonl", '{"_id": "7912", ', '{')
    with pytest.raises(ImportFailed) as failed:
        load_from(folder)
    assert str(failed.value) == 'corpus.jsonl line 3, field "_id": is missing'
    assert not Collection.objects.exists() and not Document.objects.exists()


def test_a_qrels_line_naming_an_unknown_query_or_document_is_refused(tmp_path: Path) -> None:
    folder = spoiled_copy(tmp_path, "en", "qrels/test.tsv", "3\t22038", "9\t22038")
    spoiled = (folder / "qrels" / "test.tsv").read_text().replace("7\t30195", "7\tnope")
    (folder / "qrels" / "test.tsv").write_text(spoiled)
    with pytest.raises(ImportFailed) as failed:
        load_from(folder)
    assert [str(p) for p in failed.value.problems] == [
        "qrels/test.tsv line 4, field \"query-id\": unknown query '9': not in queries.jsonl",
        "qrels/test.tsv line 6, field \"corpus-id\": unknown document 'nope': not in corpus.jsonl"]
    assert not Subset.objects.exists() and not Query.objects.exists()


def test_a_duplicate_document_id_names_the_first_line(tmp_path: Path) -> None:
    folder = spoiled_copy(tmp_path, "en", "corpus.jsonl", '"_id": "7912"', '"_id": "4983"')
    with pytest.raises(ImportFailed, match=r"line 3, field \"_id\": duplicate document id '4983' \(first on line 1\)"):
        load_from(folder)


def test_a_second_import_of_the_same_subset_is_refused() -> None:
    load_minifact()
    with pytest.raises(CommandError, match="already has a subset 'en'"):
        call_command("import_collection", str(MINIFACT / "en"), "--name", "MiniFact", "--language", "eng-Latn",
                     "--subset", "en")
    assert Document.objects.count() == 16


def test_a_run_is_ranked_like_trec_eval_score_down_then_doc_id_down() -> None:
    load_minifact()
    out = StringIO()
    call_command("import_run", str(RUN_FILE), "--collection", "MiniFact", "--name", "elsewhere", stdout=out)
    assert out.getvalue().strip() == "ranking elsewhere on collection MiniFact: 7 queries, 42 ranked documents, depth 6"
    ranking = Ranking.objects.get(name="elsewhere")
    ranked = list(RankingEntry.objects.filter(ranking=ranking, query__query_id="1").order_by("rank")
                  .values_list("document__doc_id", "score"))
    # 18670 and 5836 tie at 9.0: trec_eval puts the larger id in byte order ("5836" > "18670") first.
    assert ranked[:3] == [("31715", 9.5), ("5836", 9.0), ("18670", 9.0)]
    assert (ranking.tag, ranking.depth, ranking.method) == ("bm25-elsewhere", 6, "imported")


def test_import_run_takes_the_method_and_still_its_old_spelling() -> None:
    load_minifact()
    call_command("import_run", str(RUN_FILE), "--collection", "MiniFact", "--name", "a", "--method", "bm25")
    call_command("import_run", str(RUN_FILE), "--collection", "MiniFact", "--name", "b", "--kind", "embedding")
    assert dict(Ranking.objects.values_list("name", "method")) == {"a": "bm25", "b": "embedding"}


def test_a_run_ranking_one_document_twice_is_refused(tmp_path: Path) -> None:
    load_minifact()
    path = tmp_path / "dup.trec"
    path.write_text("1 Q0 31715 1 9.5 x\n1 Q0 5836 2 9.0 x\n1 Q0 31715 3 8.0 x\n")
    with pytest.raises(ImportFailed) as failed, path.open("rb") as stream:
        import_ranking(stream, "dup.trec", collection="MiniFact", name="dup")
    assert str(failed.value) == ("dup.trec line 3, field \"docid\": document '31715' is ranked twice for "
                                 "query '1' (first on line 1)")
    assert not Ranking.objects.exists() and not RankingEntry.objects.exists()


def test_a_run_of_another_collection_is_refused_as_such(tmp_path: Path) -> None:
    load_minifact()
    load_minifact("Other")
    path = tmp_path / "other.trec"
    path.write_text("PLAIN-1 Q0 MED-10 1 9.5 x\nPLAIN-2 Q0 MED-14 1 9.0 x\n")
    with pytest.raises(CommandError) as failed:
        call_command("import_run", str(path), "--collection", "MiniFact", "--name", "nf")
    lines = str(failed.value).splitlines()
    assert lines[1] == ("other.trec: 2 of 2 lines name queries that collection 'MiniFact' does not have: "
                        "is this a ranking of another collection?")
    assert lines[2] == "other.trec line 1, field \"qid\": unknown query 'PLAIN-1': not a query of collection 'MiniFact'"
    assert not Ranking.objects.exists()


def test_a_run_over_two_subsets_ranks_each_query_in_its_own_subset() -> None:
    load_minifact()
    load_run()
    assert RankingEntry.objects.filter(query__subset__name="da").count() == 18


def test_bad_run_lines_name_the_field(tmp_path: Path) -> None:
    load_minifact()
    path = tmp_path / "bad.trec"
    path.write_text("1 Q0 31715 1 nan x\n1 Q0 5836 two 9.0 x\n1 Q0 5836 2 9.0\n")
    with pytest.raises(ImportFailed) as failed, path.open("rb") as stream:
        import_ranking(stream, "bad.trec", collection="MiniFact", name="bad")
    assert [str(p) for p in failed.value.problems] == [
        "bad.trec line 1, field \"score\": 'nan' is not a finite number",
        "bad.trec line 2, field \"rank\": 'two' is not a whole number",
        "bad.trec line 3: has 5 columns; a run line is: qid Q0 docid rank score tag"]


def load_from(folder: Path) -> None:
    from agreement.retrieval.collection_import import import_collection
    import_collection(folder, name="MiniFact", language="eng-Latn", subset="en")
