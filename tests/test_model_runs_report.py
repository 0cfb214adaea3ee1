"""Model rows wherever humans meet models: the report JSON, the report page, the API, and the paired test."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from statsmodels.stats.contingency_tables import mcnemar

from agreement.model_runs import evaluate
from hume.roles import ensure_role_groups
from measures import significance
from tests import model_data as data

pytestmark = pytest.mark.django_db


def test_mcnemar_counts_the_discordant_items() -> None:
    # humans right on 1, 2, 3; the model on 3, 4: one item only humans got, one only the model → p = 1.
    result = significance.mcnemar_exact([True, True, True, False], [False, True, True, True])
    assert (result["humans_only_right"], result["model_only_right"]) == (1, 1)
    assert result["p_value"] == pytest.approx(mcnemar([[2, 1], [1, 0]], exact=True).pvalue) == pytest.approx(1.0)


def _jaccard_on_pairwise() -> tuple:
    call_command("add_model", "jaccard", "--backend", "classical", "--metric", "jaccard", stdout=io.StringIO())
    task = data.build_model_task("pairwise")
    call_command("run_models", task.name, "--models", "jaccard", "--wait", stdout=io.StringIO())
    return task


def test_report_json_carries_the_model_rows_with_their_paired_test() -> None:
    task = _jaccard_on_pairwise()
    out = io.StringIO()
    call_command("report", task.name, "--format", "json", stdout=out, stderr=io.StringIO())
    rows = json.loads(out.getvalue())["model_runs"]
    assert [r["model"]["name"] for r in rows] == ["jaccard"]
    row = rows[0]
    assert row["status"] == "done" and row["gold"]["main_metric"] == "accuracy"
    assert row["significance"]["test"] == "McNemar exact"
    assert row["significance"]["n"] == 5
    assert (row["protocol"], row["protocol_note"]) == ("mteb", "SAGE's protocol (MTEB has no such task)")


def test_the_report_says_which_classification_protocol_scored_the_run(client, dave) -> None:
    """MTEB's protocol by default; the pooled option is named wherever the row is shown (docs/models-in-app.md)."""
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task = data.build_model_task("classification")

    def latest_row(*options: str) -> dict:
        call_command("run_models", task.name, "--models", "minilm", "--wait", *options, stdout=io.StringIO())
        out = io.StringIO()
        call_command("report", task.name, "--format", "json", stdout=out, stderr=io.StringIO())
        (row,) = json.loads(out.getvalue())["model_runs"]
        return row

    row = latest_row("--protocol", "pooled")
    assert (row["protocol"], row["gold"]["protocol"]) == ("pooled", "pooled")
    assert row["protocol_note"] == ("pooled (not MTEB's): 5-fold cross-validation, seed 42, whole training folds, "
                                    "pooled out-of-fold predictions")
    ensure_role_groups()
    client.force_login(dave)
    assert "pooled (not MTEB&#x27;s)" in client.get(f"/reports/task/{task.pk}/").content.decode()
    row = latest_row()
    assert row["protocol"] == "mteb"
    assert row["protocol_note"] == ("MTEB's protocol: 5-fold cross-validation, seed 42, 8 training items per label, "
                                    "mean of the folds")


def test_the_report_page_shows_model_rows_and_the_api_lists_them(client, dave, carol) -> None:
    task = _jaccard_on_pairwise()
    ensure_role_groups()
    client.force_login(dave)
    page = client.get(f"/reports/task/{task.pk}/").content.decode()
    assert 'id="model-rows"' in page and "jaccard" in page and "McNemar exact" in page
    assert "Run all registered models" not in page  # researchers read; admins run
    api = client.get(f"/api/v1/models/tasks/{task.pk}/").json()
    assert api["models"][0]["model"]["backend"] == "classical"
    assert api["models"][0]["significance"]["test"] == "McNemar exact"
    from agreement.model_runs.models import EmbeddingModel

    EmbeddingModel.objects.filter(name="jaccard").update(researchers_may_run=False)  # an admin turned it off
    refused = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["jaccard"]}, content_type="application/json")
    assert refused.status_code == 403 and "only an admin may start jaccard" in refused.json()["detail"]
    client.force_login(carol)
    assert "Run all registered models" in client.get(f"/reports/task/{task.pk}/").content.decode()


def test_a_model_run_exports_as_task_results_the_mteb_importer_loads(tmp_path) -> None:
    from agreement.model_runs.models import ModelRun
    from agreement.results.mteb_loading import load_results_dir

    task = _jaccard_on_pairwise()
    task.mteb_task_name, task.mteb_subset = "SummPreference", "en"
    task.save()
    call_command("export_model_runs", "jaccard", task.name, "--out", str(tmp_path), stdout=io.StringIO())
    (row,) = load_results_dir(tmp_path)
    gold = ModelRun.objects.get().scores["gold"]
    assert (row.model_name, row.mteb_task_name, row.hf_subset) == ("hume-inapp/jaccard", "SummPreference", "en")
    assert row.main_score == pytest.approx(gold["accuracy"]) and row.metrics["f1"] == pytest.approx(gold["f1"])


def test_an_in_app_run_joins_the_comparison_as_a_model_next_to_the_humans() -> None:
    from agreement.model_runs.models import ModelRun
    from agreement.results.compare import build

    task = _jaccard_on_pairwise()
    task.mteb_task_name = "SummPreference"
    task.save()
    comparison = build()
    entry = comparison.entries["jaccard (run here)"]
    assert (entry.agent, entry.origin) == ("model", "this project")
    (score,) = [s for s in comparison.scores if s.name == "jaccard (run here)"]
    assert (score.task, score.language) == ("SummPreference", "eng-Latn")
    assert score.score == pytest.approx(ModelRun.objects.get().scores["gold"]["main_score"])


def test_an_admin_starts_runs_through_the_api_and_they_are_queued(client, carol) -> None:
    from agreement.model_runs.models import ModelRun

    call_command("add_model", "rouge", "--backend", "classical", "--metric", "rouge", stdout=io.StringIO())
    task = data.build_model_task("sts")
    ensure_role_groups()
    client.force_login(carol)
    response = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["rouge", "nope"]},
                           content_type="application/json")
    assert response.status_code == 400 and "nope" in response.json()["models"][0]
    assert not ModelRun.objects.exists()
    response = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["rouge"]}, content_type="application/json")
    assert response.status_code == 202
    assert ModelRun.objects.get().status == "queued"  # queued for a worker, not run inline
    response = client.post(f"/api/v1/models/tasks/{task.pk}/", {"models": ["rouge"], "protocol": "pooled"},
                           content_type="application/json")
    assert response.status_code == 400  # pooled is classification's option: an STS task has MTEB's protocol only
    assert "protocol 'pooled'" in response.json()["models"][0] and ModelRun.objects.count() == 1
    assert client.get(f"/api/v1/models/tasks/{task.pk}/").json()["models"][0]["protocol"] == "mteb"


def test_the_paired_bootstrap_spearman_matches_scipy_on_every_resample() -> None:
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 12)), rng.normal(size=(5, 12))
    a[:, :3] = a[:, [0]]  # ties
    expected = [stats.spearmanr(x, y).statistic for x, y in zip(a, b, strict=True)]
    assert significance._row_spearman(a, b) == pytest.approx(expected)
    result = significance.paired_bootstrap_spearman(range(10), [0, 2, 1, 3, 4, 5, 7, 6, 8, 9], range(10))
    assert result["difference"] < 0 and 0 <= result["p_value"] <= 1


def test_likert_significance_is_a_paired_bootstrap_of_the_sage_score_difference() -> None:
    import numpy as np
    from scipy import stats

    # Humans rate exactly like gold (r = 1 on both axes, SAGE's 0.5·(r + 1) = 1); the model's similarity
    # falls as coverage rises (r = −1, score 0) and as fluency falls (r = 1, score 1): difference =
    # mean(1 − 0, 1 − 1) = 0.5 in every resample.
    gold = {"coverage": [1, 2, 3, 4, 5, 6], "fluency": [6, 5, 4, 3, 2, 1]}
    humans = {"coverage": [1, 2, 3, 4, 5, 6], "fluency": [6, 5, 4, 3, 2, 1]}
    model = [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    result = significance.paired_bootstrap_likert(gold, humans, model)
    assert result["test"] == "paired bootstrap of the SAGE Likert score difference"
    assert result["difference"] == pytest.approx(0.5) and result["axes"] == ["coverage", "fluency"]
    assert result["p_value"] <= 0.01  # every resample has the humans ahead
    rows = np.array([[1, 3, 2, 5.0], [2, 2, 1, 0.0]]), np.array([[2, 1, 4, 3.0], [1, 5, 2, 2.0]])
    expected = [stats.pearsonr(x, y).statistic for x, y in zip(*rows, strict=True)]
    assert significance._row_pearson(*rows) == pytest.approx(expected)
    # Through compare(): a Likert task's gold, the humans' means and the model's similarity per item.
    payloads = {i: {} for i in range(6)}
    via_compare = evaluate.compare(
        "likert", payloads, {i: {a: gold[a][i] for a in gold} for i in range(6)},
        {i: {a: humans[a][i] for a in humans} for i in range(6)}, dict(enumerate(model)))
    assert via_compare == result


def test_the_model_rows_poll_live_while_a_run_is_queued_and_stop_when_it_is_done(client, dave, alice) -> None:
    from agreement.model_runs.execution import start_run
    from agreement.model_runs.models import EmbeddingModel

    call_command("add_model", "jaccard", "--backend", "classical", "--metric", "jaccard", stdout=io.StringIO())
    task = data.build_model_task("pairwise")
    start_run(task, EmbeddingModel.objects.get(name="jaccard"))  # stored, its chunks queued: no worker yet
    ensure_role_groups()
    client.force_login(dave)
    poll = f'hx-get="/models/{task.pk}/rows/" hx-trigger="every 2s"'
    assert poll in client.get(f"/reports/task/{task.pk}/").content.decode()
    part = client.get(f"/models/{task.pk}/rows/").content.decode()
    assert poll in part and "<progress" in part and "</progress> queued</td>" in part and "<h1" not in part
    call_command("run_models", task.name, "--models", "jaccard", "--wait", stdout=io.StringIO())
    part = client.get(f"/models/{task.pk}/rows/").content.decode()
    assert "hx-trigger" not in part and "McNemar exact" in part and "<progress" not in part
    client.force_login(alice.user)
    assert client.get(f"/models/{task.pk}/rows/").status_code == 403
