"""Where a campaign stands, as the JSON the `campaign status` command and the API give, and as text
(docs/campaigns.md, "The JSON")."""
from __future__ import annotations

from typing import Any

from agreement.campaigns.judge_runs import judge_run_data
from agreement.campaigns.models import Campaign
from agreement.campaigns.study_links import link_data
from annotation.models import Annotation, Annotator, BatchItem


def batch_rows(campaign: Campaign) -> list[dict[str, Any]]:
    """Each batch: its name, items, items with their `overlap` answers, whether it is open (hands out items)."""
    rows = []
    for batch in campaign.batches.order_by("created_at", "pk"):
        items = list(BatchItem.objects.filter(batch=batch).values_list("item_id", flat=True))
        answers = (Annotation.objects.counted().filter(item_id__in=items, annotator__agent=Annotator.Agent.HUMAN)
                   .values_list("item_id", flat=True))
        per_item: dict[int, int] = {}
        for item_id in answers:
            per_item[item_id] = per_item.get(item_id, 0) + 1
        rows.append({"id": batch.pk, "name": batch.name, "items": len(items), "open": batch.is_open and batch.hands_out,
                     "answered_items": sum(1 for n in per_item.values() if n >= campaign.overlap)})
    return rows


def status(campaign: Campaign) -> dict[str, Any]:
    """The campaign as JSON: its settings, state and reason, the last review's numbers (None before one)."""
    review, plan = campaign.review or {}, campaign.plan or {}
    labels_used = review.get("labels_used", 0)
    price = campaign.price_per_label
    return {
        "name": campaign.name, "task": campaign.task.name, "judge": campaign.judge.name,
        "estimand": campaign.estimand, "level": campaign.level, "target_half_width": campaign.target_half_width,
        "state": campaign.state, "reason": campaign.reason, "problem": campaign.problem,
        "judge_run": judge_run_data(campaign.judge_run),
        "estimate": review.get("estimate"), "ci_low": review.get("ci_low"), "ci_high": review.get("ci_high"),
        "half_width": review.get("half_width"),
        "labels_used": labels_used, "labels_received": review.get("labels_received", 0),
        "labels_planned": plan.get("planned_items", 0) * campaign.overlap,
        "labels_budget": campaign.budget_labels,
        "people_only_labels": review.get("people_only_labels", plan.get("people_only_labels")),
        "rho": review.get("rho"), "lam": review.get("lam"), "judge_mean_error": review.get("judge_mean_error"),
        "cost": None if price is None else float(price * labels_used),
        "overlap": campaign.overlap, "sampling": campaign.sampling, "seed": campaign.seed, "t_star": campaign.t_star,
        "people": sorted(campaign.people.values_list("user__username", flat=True)),
        "batches": batch_rows(campaign),
        "study_link": link_data(campaign),
    }


def status_text(data: dict[str, Any]) -> str:
    """The status in a few lines, ending with the final statement once done."""
    lines = [f"campaign {data['name']}: task {data['task']}, judge {data['judge']}, {data['estimand']}, "
             f"target ±{data['target_half_width']:g} at {data['level']:.0%}",
             f"state: {data['state']}" + (f" ({data['reason']})" if data["reason"] else "")]
    if data["problem"]:
        lines.append(f"problem: {data['problem']}")
    run = data["judge_run"]
    if run and data["state"] == Campaign.State.WAITING_FOR_THE_JUDGE:
        lines.append(f"the judge's run {run['id']}: {run['state']}, {run['total_items']} items")
    if data["estimate"] is not None:
        lines.append(f"estimate {data['estimate']:.4g} [{data['ci_low']:.4g}, {data['ci_high']:.4g}] "
                     f"±{data['half_width']:.4g}; {data['labels_used']} human labels used "
                     f"(budget {data['labels_budget'] or 'the pool'}); people alone would need "
                     f"{data['people_only_labels']}")
    link = data["study_link"]
    if link:
        lines.append(f"study link {link['url']}: {link['participants']} participants ({link['completed']} "
                     f"completed), {link['answers']} answers")
    for batch in data["batches"]:
        lines.append(f"  {batch['name']}: {batch['answered_items']}/{batch['items']} items answered, "
                     f"{'open' if batch['open'] else 'closed'}")
    statement = final_statement(data)
    if statement:
        lines.append(statement)
    return "\n".join(lines)


def final_statement(data: dict[str, Any]) -> str:
    """Once done, the campaign in one line ("HUME-STS en: 3.41 ± 0.10 (95%), 212 human labels; people alone
    would need 463"); '' before."""
    if data["state"] != Campaign.State.DONE or data["estimate"] is None:
        return ""
    return (f"{data['task']}: {data['estimate']:.3g} ± {data['half_width']:.2g} ({data['level']:.0%}), "
            f"{data['labels_used']} human labels; people alone would need {data['people_only_labels']}")
