"""A human scores a retrieval pool in the ordinary browser loop: one query and one document per screen,
a 0–10 score typed on the task's step, and the answers become the "humans" reference of every run."""
from __future__ import annotations

import pytest

from agreement.retrieval.evaluation_inputs import evaluate_collection
from agreement.retrieval.models import Collection, PoolUnit, Ranking, Subset
from agreement.retrieval.pooling import build_pool
from annotation.core.batches import BatchSpec, create_batch
from tests.browser.helpers import enter_and_wait, open_batch, stored
from tests.retrieval_helpers import load_minifact, load_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_human_scores_each_pair_and_becomes_a_reference(logged_in_page, live_server, alice, screenshot):
    load_minifact()
    load_run()
    build_pool(Subset.objects.get(name="en"), list(Ranking.objects.all()), depth=1)
    task = Subset.objects.get(name="en").pools.get().task
    batch, _ = create_batch(BatchSpec(task=task, overlap=1, name="humans"), annotators=[alice])
    page = logged_in_page("alice")
    current = open_batch(page, live_server.url, batch)
    typed = {}
    while current is not None:
        unit = PoolUnit.objects.select_related("query", "document").get(item_id=current)
        text = page.inner_text("#loop")
        assert unit.query.text in text and unit.document.text in text
        assert page.locator("ol.documents > li").count() == 1  # pointwise: one document per screen
        score = 7.5 if unit.document.doc_id in ("31715", "5836") else 1.2
        page.fill("ol.documents input[type=number]", str(score))
        if not typed:
            screenshot(page, "retrieval_pool_unit")
        typed[current] = {unit.document.doc_id: score}
        current = enter_and_wait(page)
    assert stored(alice, batch) == typed and len(typed) == 4
    humans = [r for r in evaluate_collection(Collection.objects.get(), ks=[1])
              if r.reference == "humans" and r.subset == "en"]
    # Each query's only judged document is its run's first, with a positive score: nDCG@1 is 1 for all four;
    # Recall@1 at the judges' default threshold 7 is 1 where alice gave 7.5, else 0 (no relevant document).
    relevant = sum(1 for v in typed.values() if next(iter(v.values())) >= 7)
    assert humans[0].scores.queries == 4 and humans[0].scores.at("ndcg", 1) == 1.0
    assert humans[0].scores.at("recall", 1) == relevant / 4
