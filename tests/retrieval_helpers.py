"""The retrieval fixtures (tests/fixtures/retrieval) and ways to load or spoil them."""
from __future__ import annotations

import shutil
from pathlib import Path

from agreement.retrieval.collection_import import import_collection
from agreement.retrieval.models import PoolUnit, Ranking, Subset
from agreement.retrieval.pooling import build_pool
from agreement.retrieval.rankings import import_ranking
from annotation.models import Annotation
from tests.conftest import make_annotator

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "retrieval"
MINIFACT = FIXTURES / "minifact"
RUN_FILE = FIXTURES / "minifact-run.trec"


def load_minifact(name: str = "MiniFact") -> None:
    import_collection(MINIFACT / "en", name=name, language="eng-Latn", subset="en")
    import_collection(MINIFACT / "da", name=name, language="dan-Latn", subset="da")


def load_run(name: str = "elsewhere", collection: str = "MiniFact", path: Path = RUN_FILE) -> None:
    with path.open("rb") as stream:
        import_ranking(stream, path.name, collection=collection, name=name)


def spoiled_copy(tmp_path: Path, subset: str, filename: str, old: str, new: str) -> Path:
    """A copy of one fixture subset with `old` replaced by `new` in one of its files."""
    target = tmp_path / subset
    shutil.copytree(MINIFACT / subset, target)
    path = target / filename
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {filename}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


def judged_collection() -> None:
    """MiniFact, two runs, an English pool at depth 3, and two LLM judges who scored every pair."""
    load_minifact()
    load_run("elsewhere")
    load_run("second", path=FIXTURES / "minifact-run-2.trec")
    build_pool(Subset.objects.get(name="en"), list(Ranking.objects.all()), depth=3)
    for j, name in enumerate(("judge-a", "judge-b")):
        judge = make_annotator(name, {"eng-Latn": "native"}, agent="llm")
        Annotation.objects.bulk_create([
            Annotation(item=unit.item, annotator=judge, source="llm",
                       value={unit.document.doc_id: float((len(unit.document.text) + 3 * j) % 11)})
            for unit in PoolUnit.objects.select_related("item", "document")])
