"""The campaign pages (/campaigns/, docs/campaigns.md "The pages"): the list, and a page per campaign with its
numbers, its sequence drawn over labels, its batches and, once done, its final statement. Researchers and admins
read them; only admins start a campaign (the list's form) and stop one (the page's button), through the same
code as `manage.py campaign` and the API (starting.py `start_campaign`, reviewing.py `stop_campaign`).

While a campaign is collecting or waiting for its judge, its numbers poll themselves every few seconds (htmx, the
`numbers` partial).
"""
from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from agreement.campaigns.campaign_chart import sequence_looks, sequence_svg
from agreement.campaigns.campaign_numbers import CampaignError
from agreement.campaigns.campaign_status import final_statement, status
from agreement.campaigns.models import Campaign
from agreement.campaigns.reviewing import stop_campaign
from agreement.campaigns.starting import start_campaign
from agreement.campaigns.study_links import read_wanted
from annotation.models import Annotator
from hume.lib.htmx import page_or_partial
from hume.roles import ADMIN, RESEARCHER, is_admin, require_role, role_required
from kinds.forms import excerpt
from tasks_app.task_access import visible_tasks

START_FIELDS = ("name", "task", "judge", "target_half_width", "budget_labels", "price_per_label", "annotators",
                "study_link", "study_quota", "study_minutes", "completion_code", "overlap", "seed")
READERS = "Only researchers and admins read campaigns."


def _number(posted: dict[str, str], field: str, kind: type = float, *, least: float | None = None) -> Any:
    """The posted number (None when blank), or CampaignError naming the field and quoting the value."""
    value = posted.get(field, "").strip()
    if not value:
        return None
    try:
        number = kind(value)
    except (ValueError, InvalidOperation):
        raise CampaignError(f"{field}: must be {'a whole' if kind is int else 'a'} number, got "
                            f"{excerpt(value)!r}") from None
    if not math.isfinite(number) or (least is not None and number < least):
        raise CampaignError(f"{field}: must be a finite number of at least {least}, got {excerpt(value)!r}")
    return number


def start_from_form(posted: dict[str, str], user: Any) -> Campaign:
    """Start the campaign the form asks for; CampaignError names the field (nothing written)."""
    target = _number(posted, "target_half_width")
    if target is None or target <= 0:
        raise CampaignError("target_half_width: give the half-width to reach, a number above 0 (e.g. 0.1)")
    names = [name.strip() for name in posted.get("annotators", "").split(",") if name.strip()]
    if any("\x00" in text for text in posted.values()):
        raise CampaignError("a field holds a NUL character")
    link = read_wanted(posted.get("study_link", "").strip() or None,
                       quota=_number(posted, "study_quota", int, least=1),
                       minutes=_number(posted, "study_minutes", int, least=1),
                       completion_code=posted.get("completion_code", "").strip() or None)
    return start_campaign(posted.get("name", "").strip(), posted.get("task", ""), posted.get("judge", "").strip(),
                          target, budget_labels=_number(posted, "budget_labels", int, least=1),
                          price_per_label=_number(posted, "price_per_label", Decimal, least=0),
                          annotators=names or None, overlap=_number(posted, "overlap", int, least=1) or 1,
                          seed=_number(posted, "seed", int) or 0, created_by=user, study_link=link)


@role_required(RESEARCHER, READERS)
def campaign_list(request: HttpRequest) -> HttpResponse:
    """Every campaign, newest first; for admins, the start form (a POST starts one)."""
    problem, posted, code = "", {field: "" for field in START_FIELDS}, 200
    if request.method == "POST":
        require_role(request.user, ADMIN, "Only admins start campaigns.")
        posted = {field: request.POST.get(field, "") for field in START_FIELDS}
        try:
            campaign = start_from_form(posted, request.user)
        except CampaignError as refusal:
            problem, code = str(refusal), 400
        else:
            if campaign.state == Campaign.State.WAITING_FOR_THE_JUDGE:
                messages.success(request, f"Campaign {campaign.name} started: its judge is labelling the task "
                                          "first; the first batch goes to its people when the run finishes.")
            else:
                messages.success(request, f"Campaign {campaign.name} started: its first batch is with its people.")
            return redirect("campaigns:detail", name=campaign.name)
    rows = [status(campaign) for campaign in Campaign.objects.select_related("task", "judge__user", "judge_run")]
    context = {"rows": rows, "can_start": is_admin(request.user), "problem": problem, "posted": posted,
               "tasks": visible_tasks(request.user).order_by("name").values_list("name", flat=True),
               "judges": Annotator.objects.exclude(agent=Annotator.Agent.HUMAN).order_by("user__username")
               .values_list("user__username", flat=True)}
    return render(request, "agreement/campaigns/list.html", context, status=code)


@role_required(RESEARCHER, READERS)
def campaign_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The campaign's page; its `numbers` part alone for htmx (the poll while it runs)."""
    campaign = get_object_or_404(Campaign.objects.select_related("task", "judge__user", "judge_run"), name=name)
    data = status(campaign)
    looks = sequence_looks(campaign)
    chart = sequence_svg(looks, campaign.target_half_width,
                         f"{campaign.name}: the estimate and its {campaign.level:.0%} interval over human labels")
    context = {"campaign": campaign, "data": data, "statement": final_statement(data), "chart": chart,
               "running": campaign.state in (Campaign.State.COLLECTING, Campaign.State.WAITING_FOR_THE_JUDGE),
               "can_stop": is_admin(request.user),
               "people_saved": _saved(data)}
    return page_or_partial(request, "agreement/campaigns/detail.html", "agreement/campaigns/_numbers.html",
                           context)


def _saved(data: dict[str, Any]) -> str:
    """The share of labels the people-only study would need that the campaign saved ('' when unknown)."""
    need, used = data.get("people_only_labels"), data.get("labels_used")
    if not need or used is None:
        return ""
    return f"{1 - used / need:.0%}"


@require_POST
@role_required(ADMIN, "Only admins stop campaigns.")
def campaign_stop(request: HttpRequest, name: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, name=name)
    campaign = stop_campaign(campaign)
    messages.success(request, f"Campaign {campaign.name}: {campaign.state} ({campaign.reason}).")
    return redirect("campaigns:detail", name=campaign.name)
