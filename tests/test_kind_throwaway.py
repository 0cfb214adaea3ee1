"""Issue 21, done when: a task kind is one folder. A copy of the STS folder under a new name, registered by one
line (`register`, as a line of kinds/kind_registry.py `PACKAGES` does), passes the completeness check and works in
import, the annotator's loop, the crowd's item page, the report, the models page and a model run, with no file
outside the copy touched: its templates, its static files (the slider) and its samples come with the folder. The
copy only renames its own template and script names (kinds/sts/... -> kinds/sts_copy/...), as a new kind's author
would.

The copy scores exactly as STS does, so the expected figures are computed here from the data (Spearman's ρ of
the humans' mean rating and of the Jaccard similarity against gold, scipy.stats)."""
from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.template import engines
from django.template.loader import get_template
from django.test import Client
from scipy import stats

from agreement.core.scoring import aggregated_kinds
from agreement.ppi.estimands import OffScale, estimand_names, numbers
from agreement.ppi.ppi_loading import task_scale
from annotation.models import Annotation
from kinds import kind_registry
from measures.model_runs import classical
from tasks_app.kind_parts import missing_parts
from tasks_app.models import ItemGold, Task
from tasks_app.serializers import KindField
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, make_study
from tests.import_samples import cli_import, jsonl, write
from tests.loop_data import make_batch
from tests.report_builders import answers_from_columns, cli_report, import_answers

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parent.parent
HTMX = {"HTTP_HX_REQUEST": "true"}
PAIRS = [("a cat sits on the mat", "a cat is sitting on a mat", 4.5),
         ("a man plays a guitar", "a man plays music", 3.5), ("the sky is blue", "stock prices fell today", 0.0),
         ("a dog runs in a park", "a dog is running outside", 4.0),
         ("she reads a book", "she is reading a novel", 3.0), ("rain falls on the city", "a cat sleeps", 0.5)]
ALICE = [4.0, 3.5, 0.5, 4.5, 2.5, 0.0]  # what alice answers in the loop, item by item
BOB = [5.0, 3.0, 0.0, 4.0, 3.5, 1.0]


def reset_template_caches() -> None:
    for engine in engines.all():
        for loader in engine.engine.template_loaders:
            loader.reset()


@pytest.fixture
def sts_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "throwaway_kinds"
    shutil.copytree(REPO / "kinds" / "sts", package / "sts_copy", ignore=shutil.ignore_patterns("__pycache__"))
    (package / "__init__.py").write_text("")
    for path in (package / "sts_copy").glob("*.py"):
        path.write_text(path.read_text().replace("kinds/sts/", "kinds/sts_copy/"))
    monkeypatch.syspath_prepend(str(tmp_path))
    reset_template_caches()
    kind = kind_registry.register("throwaway_kinds.sts_copy")  # the one registry line
    yield kind
    del kind_registry.KINDS["sts_copy"]
    for name in [name for name in sys.modules if name.startswith("throwaway_kinds")]:
        del sys.modules[name]
    reset_template_caches()


def import_pairs(tmp_path: Path) -> Task:
    records = [{"id": f"p{i}", "sentence1": a, "sentence2": b, "score": s} for i, (a, b, s) in enumerate(PAIRS)]
    cli_import(write(tmp_path / "pairs.jsonl", jsonl(records)), "copied kind", "sts_copy")
    return Task.objects.get(name="copied kind")


def test_the_copy_is_complete_and_brings_its_own_templates(sts_copy, tmp_path: Path) -> None:
    assert sts_copy.name == "sts_copy" and "sts_copy" in dict(kind_registry.kind_choices())
    assert missing_parts(["sts_copy"]) == [] and missing_parts() == []
    copied = tmp_path / "throwaway_kinds" / "sts_copy" / "templates"
    for part in (sts_copy.payload_template, sts_copy.answer_form.template, sts_copy.keys_help_template):
        assert Path(get_template(part).origin.name).parent == copied



def test_what_the_apps_ask_of_a_kind_comes_with_the_copy(sts_copy, tmp_path: Path) -> None:
    """PPI's estimands, the labels-only aggregation, SAGE's human row and the import API read the kind's own
    declarations through the registry, so the copy gets them without a line elsewhere."""
    task = import_pairs(tmp_path)
    scale = task_scale(task)  # STS's default scale, 0–5
    assert (scale.lo, scale.hi, scale.threshold) == (0.0, 5.0, None)
    assert estimand_names(scale) == ["similarity"] and numbers(4.5, scale) == {"similarity": 4.5}
    with pytest.raises(OffScale, match="value: 6 is not on the task's scale 0–5"):
        numbers(6, scale)
    assert "sts_copy" not in aggregated_kinds() and "sts" not in aggregated_kinds()  # the copy rates, like STS
    assert task.kind_definition.sentence_pairs and not task.kind_definition.aggregates_labels
    assert KindField().to_internal_value("sts_copy") == "sts_copy"

def test_the_copy_imports_is_annotated_in_the_loop_reported_and_run_by_a_model(
        sts_copy, tmp_path: Path, alice) -> None:
    task = import_pairs(tmp_path)
    assert task.kind == "sts_copy" and task.items.count() == 6
    assert sorted(ItemGold.objects.filter(item__task=task).values_list("value", flat=True)) == sorted(
        s for *_, s in PAIRS)

    # the loop: alice answers every item on the page the copy's templates render
    batch = make_batch(task, [alice], list(task.items.order_by("pk")))
    client = Client()
    assert client.login(username=alice.user.username, password=PASSWORD)
    page = client.get(f"/annotate/b/{batch.pk}/").content.decode()
    assert "not set" in page and "move the slider one step" in page  # the copy's answer partial and keys help
    answered = 0
    while True:
        fragment = client.get(f"/annotate/b/{batch.pk}/", **HTMX).content.decode()
        if 'data-item="' not in fragment:
            break
        item_id = int(fragment.split('data-item="')[1].split('"')[0])
        score = ALICE[int(task.items.get(pk=item_id).external_id[1:])]
        response = client.post(f"/annotate/b/{batch.pk}/items/{item_id}/answer/", {"score": str(score)}, **HTMX)
        assert response.status_code == 200
        answered += 1
    assert answered == 6
    stored = {a.item.external_id: a.value for a in Annotation.objects.filter(item__task=task)}
    assert stored == {f"p{i}": score for i, score in enumerate(ALICE)}

    # the report: the humans' mean rating per pair against gold, as STS scores it
    import_answers(task, answers_from_columns({"bob": BOB}, [f"p{i}" for i in range(6)]))
    doc = cli_report(task)
    gold = [s for *_, s in PAIRS]
    expected = stats.spearmanr(gold, np.mean([ALICE, BOB], axis=0)).statistic
    assert doc["kind"] == "sts_copy"
    assert doc["human"]["main_metric"] == "spearman" and doc["human"]["main_score"] == pytest.approx(expected)
    assert doc["charts"]["scatter_gold"]["n_points"] == 12

    # a model run: Jaccard similarity of the two sentences against gold, as MTEB's STS evaluator ranks it
    call_command("add_model", "jaccard", "--backend", "classical", "--metric", "jaccard", stdout=io.StringIO())
    out = io.StringIO()
    call_command("run_models", task.name, "--models", "jaccard", "--wait", stdout=out)
    scores = json.loads(out.getvalue())["models"]["jaccard"]
    sims = [len(set(classical.tokens(a)) & set(classical.tokens(b))) / len(set(classical.tokens(a))
            | set(classical.tokens(b))) for a, b, _ in PAIRS]
    assert scores["gold"]["cosine_spearman"] == pytest.approx(stats.spearmanr(gold, sims).statistic)
    assert scores["gold"]["main_metric"] == "cosine_spearman"


def test_the_crowd_page_and_the_models_page_serve_the_copy_with_its_own_script(sts_copy, tmp_path: Path, dave) -> None:
    task = import_pairs(tmp_path)
    script = "/static/kinds/sts_copy/slider.js"  # the copy's static/slider.js, found through the registry
    person = Person(make_study(task), 1)
    person.start()
    page = person.page().content.decode()
    assert "How similar are they?" in page and "not set" in page  # the copy's answer partial
    assert f'src="{script}"' in page
    assert '<link rel="stylesheet" href="/static/kinds/sts_copy/slider.css">' in page  # and its style sheet
    served = Client().get(script)
    copied = tmp_path / "throwaway_kinds" / "sts_copy" / "static" / "slider.js"
    assert served.status_code == 200 and b"".join(served.streaming_content) == copied.read_bytes()
    assert sts_copy.samples.records == kind_registry.KINDS["sts"].samples.records  # its samples came along
    demo = tmp_path / "throwaway_kinds" / "sts_copy" / "demo"  # and its demo's files, where its samples say
    assert all((demo / spec.file).is_file() and (demo / spec.instructions).is_file() for spec in sts_copy.samples.demo)

    client = Client()
    assert client.login(username=dave.username, password=PASSWORD)
    models = client.get(f"/models/{task.pk}/")
    assert models.status_code == 200
    body = models.content.decode()
    assert "Models on copied kind" in body and "(sts_copy)" in body
    assert 'name="protocol"' not in body  # one protocol (MTEB's), as STS: nothing to choose

