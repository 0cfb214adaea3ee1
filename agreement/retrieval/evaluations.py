"""Stored evaluations of a collection: queue, claim, compute, store; and the leaderboard read from them.

A Celery task computes (``tasks.evaluate_collection``); it claims the row with a conditional UPDATE
(queued → running) so a duplicated message does nothing, and skips the arithmetic when the digest of what
it would read (rankings, qrels, answers) matches the stored one. Queueing never falls back to computing inline.
Pages only read the stored rows and arrange them (``table``).
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, Max, Sum

from agreement.retrieval.evaluation_inputs import evaluate_collection, pool_scores
from agreement.retrieval.models import Collection, Evaluation, Qrel, Ranking
from annotation.models import Annotation
from hume import jobs
from hume.jobs import control
from hume.jobs.lease import claim
from measures.retrieval.judge_leaderboard import deltas, two_stage_average
from measures.retrieval.judges import summary as judge_summary
from measures.trec_scoring import K_VALUES

AVERAGE = "average of judges"
Status = Evaluation.Status


def digest(collection: Collection, thresholds: Mapping[str, float]) -> str:
    rankings = list(Ranking.objects.filter(collection=collection).order_by("pk").values_list("pk", "depth")
                .annotate(n=Count("entries")))
    qrels = Qrel.objects.filter(subset__collection=collection).aggregate(n=Count("pk"), s=Sum("relevance"))
    # The answers that count (an exclusion changes them without touching a row: the annotator ids say who counts).
    answers = Annotation.objects.counted().filter(item__retrieval_unit__pool__subset__collection=collection).aggregate(
        n=Count("pk"), last=Max("updated_at"), who=Sum("annotator_id"))
    state = [rankings, qrels, [answers["n"], str(answers["last"]), answers["who"]], sorted(thresholds.items())]
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def request_evaluation(collection: Collection, thresholds: Mapping[str, float] | None = None) -> Evaluation:
    """Mark the collection's evaluation queued and send it after commit through the job layer's outbox;
    `hume.jobs.BrokerDown` when the broker is down (the evaluation stays queued and is sent when it is back)."""
    evaluation, _ = Evaluation.objects.get_or_create(collection=collection)
    # A new request: its own attempts; a run in progress loses its claim (it read the old inputs) and stores nothing
    asked = {} if thresholds is None else {"thresholds": dict(thresholds)}
    control.submit(Evaluation.objects.filter(pk=evaluation.pk), superseding=True, **asked)
    jobs.enqueue_on_commit("retrieval.evaluate_collection", collection.pk)
    evaluation.refresh_from_db()
    return evaluation


def run_evaluation(collection_id: int, claimed_by: str) -> str:
    """Claim (the job layer's lease, renewed while it computes), compute unless the digest is unchanged, store
    through the lease (a worker that lost it stores nothing); returns what happened."""
    lease = claim(Evaluation.objects.filter(collection_id=collection_id), claimed_by=claimed_by,
                  max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "not claimed"
    evaluation = Evaluation.objects.select_related("collection").get(collection_id=collection_id)
    with lease.kept():
        try:
            state = digest(evaluation.collection, evaluation.thresholds)
            if state == evaluation.digest and evaluation.rows:
                verdict, rows, agreement = "unchanged", evaluation.rows, evaluation.judges
            else:
                found = evaluate_collection(evaluation.collection, thresholds=evaluation.thresholds, ks=K_VALUES)
                verdict, rows = "computed", [row.as_dict(K_VALUES) for row in found]
                agreement = judge_agreement(evaluation.collection)
            if not lease.finish(rows=rows, judges=agreement, digest=state):
                return "discarded: the claim was taken over"
        except Exception as exc:
            lease.fail(f"{type(exc).__name__}: {exc}")
            raise
    return verdict


def judge_agreement(collection: Collection) -> dict[str, Any]:
    """Per subset with a judged pool: every judge and human against every other, α, score distributions."""
    out = {}
    for subset in collection.subsets.all():
        judges, humans = pool_scores(subset)
        if judges or humans:
            out[subset.name] = judge_summary({**judges, **humans})
    return out


def table(rows: Sequence[Mapping[str, Any]], *, metric: str = "ndcg@10", baseline: str | None = None,
          subset: str | None = None, method: str | None = None) -> dict[str, Any]:
    """The leaderboard: rankings × references (subsets averaged, or one subset), plus the two-stage average of
    the judges, sorted by `metric` on that average (else the first reference), with deltas to `baseline`."""
    chosen = [r for r in rows
              if (subset is None or r["subset"] == subset) and (method is None or r["method"] == method)]
    by_ref: dict[str, dict[str, dict[str, np.ndarray]]] = defaultdict(lambda: defaultdict(dict))
    for r in chosen:
        by_ref[r["reference"]][r["ranking"]][r["subset"]] = np.array([r[f"ndcg@{k}"] for k in K_VALUES] +
                                                                 [r[f"recall@{k}"] for k in K_VALUES] + [r["map"]])
    references = sorted(by_ref)
    rankings = sorted({r["ranking"] for r in chosen})
    curves: dict[str, dict[str, np.ndarray]] = {ref: {ranking: np.mean(list(by_ref[ref][ranking].values()), axis=0)
                                                      for ranking in by_ref[ref]} for ref in references}
    judges = [ref for ref in references if ref.startswith("judge:")]
    if len(judges) > 1:
        curves[AVERAGE] = {name: two_stage_average({j: by_ref[j][name] for j in judges if name in by_ref[j]})[1]
                           for name in rankings if all(name in by_ref[j] for j in judges)}
        references.insert(0, AVERAGE)
    column = _column(metric)
    lead = references[0] if references else None
    values = {ref: {ranking: float(c[column]) for ranking, c in curves[ref].items()} for ref in references}
    order = sorted(rankings, key=lambda ranking: -values[lead].get(ranking, -1.0)) if lead else rankings
    delta = {ref: deltas(values[ref], baseline) for ref in references
             if baseline and baseline in values[ref]}
    return {"references": references, "rankings": order, "values": values, "deltas": delta, "metric": metric,
            "curves": {ref: {ranking: c[:200].tolist() for ranking, c in curves[ref].items()} for ref in references}}


def _column(metric: str) -> int:
    if metric == "map":
        return 200
    name, _, k = metric.partition("@")
    if name not in ("ndcg", "recall") or not k.isdigit() or not 1 <= int(k) <= 100:
        raise ValueError(f"unknown metric {metric!r}: use ndcg@k, recall@k (k = 1…100) or map")
    return (0 if name == "ndcg" else 100) + int(k) - 1
