"""Loading rankings and judgments from the database for the pure scorer (``scoring``), one subset at a time.

References a ranking is scored against, each a name and a set of judgments:
- ``qrels:<split>`` — the collection's original judgments (binary or graded);
- ``judge:<name>`` — one LLM judge's 0–10 scores of the pool; ``judges:mean`` — the mean of the LLM judges per
  pair (over the judges that scored it); ``humans`` — the mean of the human annotators per pair.
Codes are the database keys of queries and documents, so nothing is re-encoded. Every query of a ranking is
loaded with one ``values_list`` query; nothing here computes a metric.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
from django.db.models import Sum

from agreement.retrieval.collection_import import chunks, iter_qrels
from agreement.retrieval.models import Collection, PoolUnit, Qrel, Ranking, RankingEntry, Subset
from agreement.retrieval.rankings import Resolver
from annotation.llm.models import LLMAnnotatorConfig, LLMRequest
from annotation.models import Annotation, Annotator
from hume.lib.import_reader import ProblemLog
from measures.trec_scoring import K_VALUES, Judgments, Prepared, Scores, evaluate

DEFAULT_JUDGE_THRESHOLD = 7.0  # the study's flat alternative to per-judge thresholds
DEFAULT_QRELS_THRESHOLD = 1.0  # trec_eval's relevance_level


@dataclass(frozen=True)
class Row:
    ranking: str
    ranking_method: str
    subset: str
    reference: str
    threshold: float
    scores: Scores

    def as_dict(self, ks: Sequence[int]) -> dict[str, Any]:
        out: dict[str, Any] = {"ranking": self.ranking, "method": self.ranking_method, "subset": self.subset,
                               "reference": self.reference, "threshold": self.threshold,
                               "queries": self.scores.queries, "map": round(self.scores.map, 6)}
        out |= {f"ndcg@{k}": round(self.scores.at("ndcg", k), 6) for k in ks}
        out |= {f"recall@{k}": round(self.scores.at("recall", k), 6) for k in ks}
        return out


def as_judgments(pairs: Mapping[tuple[int, int], float]) -> Judgments:
    if not pairs:
        return Judgments.of([], [], [])
    (queries, docs), gains = zip(*pairs.keys(), strict=True), list(pairs.values())
    return Judgments.of(queries, docs, gains)


def mean_pairs(per_annotator: Iterable[Mapping[tuple[int, int], float]]) -> dict[tuple[int, int], float]:
    sums: dict[tuple[int, int], list[float]] = defaultdict(list)
    for pairs in per_annotator:
        for pair, score in pairs.items():
            sums[pair].append(score)
    return {pair: float(np.mean(scores)) for pair, scores in sums.items()}


Pairs = dict[tuple[int, int], float]


def pool_scores(subset: Subset, task: str | None = None) -> tuple[dict[str, Pairs], dict[str, Pairs]]:
    """({LLM judge: {(query pk, doc pk): score}}, {human: ...}) for every answered unit of the subset's pools
    (of the pool whose task is named `task`, when given)."""
    answers = Annotation.objects.counted().filter(item__retrieval_unit__pool__subset=subset, skipped=False)
    if task:
        answers = answers.filter(item__task__name=task)
    rows = answers.values_list(
        "annotator__user__username", "annotator__agent", "item__retrieval_unit__query_id",
        "item__retrieval_unit__document_id", "value")
    judges: dict[str, dict[tuple[int, int], float]] = defaultdict(dict)
    humans: dict[str, dict[tuple[int, int], float]] = defaultdict(dict)
    for name, agent, query, doc, value in rows:
        if isinstance(value, dict) and len(value) == 1:
            target = judges if agent == Annotator.Agent.LLM else humans
            target[name][query, doc] = float(next(iter(value.values())))
    return dict(judges), dict(humans)


def references(subset: Subset, *, split: str = "test", task: str | None = None) -> dict[str, Judgments]:
    """Every reference of the subset that has judgments, in a stable order; with `task`, only its judges."""
    out: dict[str, Judgments] = {}
    qrels = {(q, d): r for q, d, r in Qrel.objects.filter(subset=subset, split=split).values_list(
        "query_id", "document_id", "relevance")}
    if qrels and not task:
        out[f"qrels:{split}"] = as_judgments(qrels)
    judges, humans = pool_scores(subset, task)
    for name in sorted(judges):
        out[f"judge:{name}"] = as_judgments(judges[name])
    if len(judges) > 1:
        out["judges:mean"] = as_judgments(mean_pairs(judges.values()))
    if humans:
        out["humans"] = as_judgments(mean_pairs(humans.values()))
    return out


def ranked_matrix(ranking: Ranking, subset: Subset) -> tuple[np.ndarray, np.ndarray]:
    """(queries, depth) matrix of document pks in rank order (−1 past a query's last document), query pks."""
    rows = np.array(RankingEntry.objects.filter(ranking=ranking, query__subset=subset).order_by().values_list(
        "query_id", "document_id", "rank"), dtype=np.int64).reshape(-1, 3)
    if not len(rows):
        return np.full((0, 1), -1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    queries, row = np.unique(rows[:, 0], return_inverse=True)
    matrix = np.full((len(queries), int(rows[:, 2].max())), -1, dtype=np.int64)
    matrix[row, rows[:, 2] - 1] = rows[:, 1]
    return matrix, queries


def threshold_for(reference: str, thresholds: Mapping[str, float]) -> float:
    if reference in thresholds:
        return thresholds[reference]
    name = reference.split(":", 1)[-1]
    if name in thresholds:
        return thresholds[name]
    return DEFAULT_QRELS_THRESHOLD if reference.startswith("qrels:") else thresholds.get("*", DEFAULT_JUDGE_THRESHOLD)


def evaluate_collection(collection: Collection, *, split: str = "test", rankings: Sequence[Ranking] | None = None,
                        thresholds: Mapping[str, float] | None = None, task: str | None = None,
                        external: Mapping[int, dict[str, Judgments]] | None = None,
                        ks: Sequence[int] = K_VALUES) -> list[Row]:
    """Every ranking × subset × reference; `external` ({subset pk: references}) replaces the stored references
    (a graded qrels file), `task` keeps only the judges of that pool task. By default every finished ranking: one
    still queued, running or failed (started from the page, ``actions.py``) has no ranking to score yet."""
    thresholds = thresholds or {}
    rankings = list(rankings if rankings is not None else collection.rankings.filter(status=Ranking.Status.DONE))
    rows = []
    for subset in collection.subsets.all():
        refs = external.get(subset.pk, {}) if external is not None else references(subset, split=split, task=task)
        matrices = {ranking.pk: ranked_matrix(ranking, subset) for ranking in rankings}
        for reference, judgments in refs.items():
            threshold = threshold_for(reference, thresholds)
            prepared = Prepared(judgments, threshold=threshold, k_max=max(ks))
            for ranking in rankings:
                matrix, queries = matrices[ranking.pk]
                if len(queries):
                    scores = evaluate(matrix, queries, prepared, ks)
                    if scores.queries:
                        rows.append(Row(ranking.name, ranking.method, subset.name, reference, threshold, scores))
    return rows


def qrels_file(collection: Collection, stream: BinaryIO, filename: str) -> dict[int, dict[str, Judgments]]:
    """A (graded) qrels file as references per subset; a query or document the collection lacks is an error."""
    log, pairs = ProblemLog(filename), defaultdict(dict)
    resolver = Resolver(collection, None)
    for batch in chunks(iter_qrels(stream, log)):
        queries, docs = resolver.queries({r[1] for r in batch}), resolver.documents({r[2] for r in batch})
        for line, qid, did, relevance in batch:
            hits = queries.get(qid, [])
            if len(hits) != 1:
                log.add(line, "query-id", f"unknown query {qid!r}" if not hits else f"query {qid!r} is in several "
                                                                                   "subsets")
            elif (doc := docs.get((hits[0][1], did))) is None:
                log.add(line, "corpus-id", f"unknown document {did!r} for query {qid!r}")
            else:
                pairs[hits[0][1]][hits[0][0], doc] = relevance
    log.raise_if_any()
    return {subset: {f"qrels:{filename}": as_judgments(found)} for subset, found in pairs.items()}


def judge_usage(subset: Subset) -> list[dict[str, Any]]:
    """Requests, tokens and (when the judge has prices) cost each LLM judge spent on the subset's pools."""
    items = PoolUnit.objects.filter(pool__subset=subset).values("item_id")
    usage = (LLMRequest.objects.filter(item_id__in=items).values("annotator_id", "annotator__user__username", "model")
             .annotate(prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), requests=Sum("attempts"))
             .order_by("annotator__user__username"))
    configs = LLMAnnotatorConfig.objects.in_bulk([u["annotator_id"] for u in usage], field_name="annotator_id")
    return [{"judge": u["annotator__user__username"], "model": u["model"], "requests": u["requests"] or 0,
             "prompt_tokens": u["prompt"] or 0, "completion_tokens": u["completion"] or 0,
             "cost": configs[u["annotator_id"]].cost(u["prompt"] or 0, u["completion"] or 0)
             if u["annotator_id"] in configs else None} for u in usage]
