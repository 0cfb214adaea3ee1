"""A campaign's batches: the next one drawn uniformly from the pool items no person has answered
(measures/campaign/engine.py `draw_batch`, seeded by the campaign's seed and the batch's number), written as PPI's
human batches are (agreement/ppi/human_batch.py `write_batch`) and handed to the campaign's people in draw order,
a campaign's study link made with the first and moved on to the next (study_links.py `attach`); and stopping
them when the campaign is done: nothing more is handed out, while an item a person holds can still be answered
and is stored (docs/batches.md, "Stopping a batch")."""
from __future__ import annotations

import numpy as np

from agreement.campaigns.campaign_numbers import CampaignError, labelled_by_people
from agreement.campaigns.models import Campaign
from agreement.campaigns.study_links import attach
from agreement.ppi.human_batch import write_batch
from agreement.ppi.ppi_loading import pool_items
from annotation.core.batches import AssignmentProblem
from annotation.models import Batch, BatchItem
from measures.campaign import engine


def drawn_items(campaign: Campaign) -> list[int]:
    """The items of the campaign's batches in the order they were drawn (batch by batch, position by position)."""
    return list(BatchItem.objects.filter(batch__campaigns=campaign)
                .order_by("batch__created_at", "batch_id", "position").values_list("item_id", flat=True))


def draw_next_batch(campaign: Campaign, n_items: int, *, move_link: bool = True) -> Batch:
    """Draw and hand out `n_items` items no person has answered and no batch of the campaign holds; call it in a
    transaction holding the campaign's row. A study link as the people is pointed at it unless `move_link` is
    false (a batch drawn ahead waits until the link's batch runs dry, study_links.py)."""
    item_ids = [row[0] for row in pool_items(campaign.task)]
    taken = labelled_by_people(campaign.task) | set(drawn_items(campaign))
    number = campaign.batches.count() + 1
    rng = np.random.default_rng([campaign.seed, number])
    try:
        rows = engine.draw_batch(np.array([pk in taken for pk in item_ids], dtype=bool), n_items, rng)
    except ValueError as problem:
        raise CampaignError(f"batch {number}: {problem}") from None
    name = f"{campaign.name} · batch {number}"
    if Batch.objects.filter(task=campaign.task, name=name).exists():
        raise CampaignError(f"batch {number}: task {campaign.task.name!r} already has a batch named {name!r}")
    try:
        batch = write_batch(campaign.task, name, [item_ids[row] for row in rows],
                            overlap=campaign.overlap, annotators=campaign.people.all(),
                            created_by=campaign.created_by)
    except AssignmentProblem as problem:
        raise CampaignError(f"{problem.field}: {problem.message}") from None
    campaign.batches.add(batch)
    attach(campaign, batch, move_link=move_link)
    return batch


def stop_batches(campaign: Campaign) -> int:
    """Stop the campaign's batches: no new item is handed out; the holds stay, so an answer already on someone's
    screen is still stored (after the stopping point: the stored final estimate does not change). Returns the
    batches stopped."""
    return Batch.objects.filter(campaigns=campaign, hands_out=True).update(hands_out=False)
