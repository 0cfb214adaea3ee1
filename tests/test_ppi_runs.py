"""PPI estimates of pooled retrieval runs (agreement/ppi/ranking_estimates.py, `ppi_runs`): each run's relevance@k and
P@k over its own top-k pairs equal ppi-python's on those pairs; refusals name the problem."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from agreement.ppi.ppi_loading import load_numbers
from agreement.retrieval.models import Pool, PoolUnit, RankingEntry
from annotation.models import Annotation
from tests.report_builders import annotator_named
from tests.retrieval_helpers import judged_collection

pytestmark = pytest.mark.django_db


def labelled_pool() -> Pool:
    """MiniFact's English pool at depth 3 (two runs, judges judge-a and judge-b on every pair); alice grades
    every other pair, judge-a's grade minus one."""
    judged_collection()
    pool = Pool.objects.get()
    alice = annotator_named("alice")
    judge_a = {a.item_id: a.value for a in Annotation.objects.filter(annotator__user__username="judge-a")}
    units = list(PoolUnit.objects.filter(pool=pool).select_related("document").order_by("item__position"))
    Annotation.objects.bulk_create([
        Annotation(item_id=u.item_id, annotator=alice, source="import",
                   value={u.document.doc_id: max(0.0, judge_a[u.item_id][u.document.doc_id] - 1)})
        for u in units[::2]])
    return pool


def run_ppi_runs(*args: str) -> dict:
    out = io.StringIO()
    call_command("ppi_runs", *args, stdout=out)
    return json.loads(out.getvalue())


def test_each_runs_relevance_and_precision_match_ppi_python_on_its_pairs() -> None:
    pool = labelled_pool()
    doc = run_ppi_runs(pool.task.name, "--judge", "judge-a", "--k", "3", "--threshold", "5")
    numbers = load_numbers(pool.task, "judge-a", threshold=5)
    row_of = {pk: i for i, pk in enumerate(pool.task.items.in_pool().order_by("position", "pk")
                                           .values_list("pk", flat=True))}
    pair_row = {(u.query_id, u.document_id): row_of[u.item_id] for u in PoolUnit.objects.filter(pool=pool)}
    assert sorted(r["run"] for r in doc["runs"]) == ["elsewhere", "second"]
    assert doc["runs"][0]["metrics"][0]["estimate"] >= doc["runs"][1]["metrics"][0]["estimate"]  # best first
    for run in doc["runs"]:
        mask = np.zeros(len(numbers.items), dtype=bool)
        for pair in RankingEntry.objects.filter(ranking__name=run["run"], rank__lte=3,
                                            query_id__in={q for q, _d in pair_row}).values_list("query_id",
                                                                                                "document_id"):
            mask[pair_row[pair]] = True
        assert run["n_pairs"] == mask.sum() and run["n_pairs_unjudged"] == 0
        for column, metric in enumerate(run["metrics"]):
            labelled, unlabelled = mask & numbers.labelled, mask & ~numbers.labelled
            y, yhat = numbers.human[labelled, column], numbers.judge[labelled, column]
            yhat_u = numbers.judge[unlabelled, column]
            assert metric["metric"] == ("relevance@3", "P@3")[column]
            if np.ptp(yhat) == 0 and np.ptp(yhat_u) == 0:
                continue  # a constant judge: λ = 0 here, where ppi-python divides 0 by 0
            point = float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_u))[0])
            low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
            assert metric["estimate"] == pytest.approx(point, abs=1e-9)
            assert (metric["ci_low"], metric["ci_high"]) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
            assert (metric["classical_low"], metric["classical_high"]) == pytest.approx(
                classical_mean_ci(y, alpha=0.05), abs=1e-9)


def test_refusals_name_the_problem() -> None:
    pool = labelled_pool()
    with pytest.raises(CommandError, match="must be from 1 to the pool's depth 3"):
        run_ppi_runs(pool.task.name, "--judge", "judge-a", "--k", "10")
    with pytest.raises(CommandError, match="'alice' is a person"):
        run_ppi_runs(pool.task.name, "--judge", "alice", "--k", "3")
