"""`export_mteb` writes one `annotator_<id>/` folder per human annotator beside the aggregate (the layout
of the published `baseline__Human`), and an exported study re-imported with `import_results` gives the
same scores and the same HUME Table 8 CIs (Appendix E.1: range for two annotators, Wilson with N = texts
for one, Fisher z for STS) as the reports it came from."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from agreement.core.mteb_export import annotator_folder
from agreement.core.reports import report_in_process
from agreement.results.compare import build
from tests.report_builders import answers_from_columns, build_task, import_answers
from tests.test_table8_own_annotators import GOLD_TOPICS, RHO_0676, V_0418, V_0663, V_0760

pytestmark = pytest.mark.django_db

SIB = "HUMESIB200ClusteringS2S"


@pytest.fixture
def study() -> dict[str, object]:
    tasks = {}
    for language, subset, columns in (("eng-Latn", "eng_Latn", {"alice": V_0418, "carl": V_0663}),
                                      ("ara-Arab", "arb_Arab", {"bob": V_0760})):
        task = build_task("clustering", f"sib-{subset}", [{"sentences": [f"t{i}" for i in range(30)],
                                                           "labels": GOLD_TOPICS}],
                          language=language, mteb_task_name=SIB, mteb_subset=subset)
        import_answers(task, answers_from_columns({n: [[str(c) for c in v]] for n, v in columns.items()}))
        tasks[(SIB, language)] = task
    records = [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": round(i * 0.1, 1)} for i in range(1, 31)]
    sts = build_task("sts", "sts22-ar", records, language="ara-Arab", scale_min=0, scale_max=5, scale_step=0.05,
                     mteb_task_name="HUMESTS22", mteb_subset="ar")
    import_answers(sts, answers_from_columns({"bob": [round(p * 0.1, 1) for p in RHO_0676]}))
    tasks[("HUMESTS22", "ara-Arab")] = sts
    return tasks


def export(out: Path, *tasks: str) -> list[Path]:
    stdout = io.StringIO()
    call_command("export_mteb", *tasks, "--out", str(out), "--revision", "2025_10_01", stdout=stdout)
    return [Path(p) for p in stdout.getvalue().split()]


def test_each_human_annotator_gets_an_annotator_folder_with_their_own_scores(study, tmp_path) -> None:
    export(tmp_path, "sib-eng_Latn", "sib-arb_Arab", "sts22-ar")

    root = tmp_path / "hume__Human"
    assert sorted(p.name for p in root.iterdir()) == sorted(
        ["2025_10_01", *(annotator_folder(n) for n in ("alice", "bob", "carl"))])
    bob = root / annotator_folder("bob")
    assert sorted(p.name for p in bob.iterdir()) == [f"{SIB}.json", "HUMESTS22.json", "model_meta.json"]
    (entry,) = json.loads((bob / f"{SIB}.json").read_text())["scores"]["test"]
    assert entry["hf_subset"] == "arb_Arab" and entry["main_score"] == pytest.approx(0.7600, abs=1e-4)
    assert "agreement" not in entry and "scores_per_experiment" not in entry  # as the published files
    meta = json.loads((bob / "model_meta.json").read_text())
    assert meta["revision"] == annotator_folder("bob")
    aggregate = json.loads((root / "2025_10_01" / f"{SIB}.json").read_text())["scores"]["test"]
    # N = texts (30), never sets (1); Tot = N × K, as HUME Table 8 counts
    assert [(e["agreement"]["n_items"], e["agreement"]["total_annotations"]) for e in aggregate] == [(30, 60), (30, 30)]


def test_a_re_imported_export_gives_the_same_scores_and_cis(study, tmp_path) -> None:
    export(tmp_path, "sib-eng_Latn", "sib-arb_Arab", "sts22-ar")
    call_command("import_results", str(tmp_path), stdout=io.StringIO())

    comparison = build(with_project=False)

    assert comparison.entries["hume/Human"].agent == "human"
    imported = comparison.humans["hume/Human"]
    scores = {(s.task, s.language): s.score for s in comparison.scores if s.name == "hume/Human"}
    assert set(scores) == set(study)
    for key, task in study.items():
        human = report_in_process(task)[0]["human"]
        assert scores[key] == pytest.approx(human["main_score"])
        assert imported[key].ci == pytest.approx((human["ci_low"], human["ci_high"]))
    assert imported[(SIB, "eng-Latn")].ci_method == "annotator range (K = 2)"
    assert imported[(SIB, "ara-Arab")].ci_method == "Wilson (n = 30)"
