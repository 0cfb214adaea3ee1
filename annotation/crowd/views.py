"""The participant's pages of a crowd study (under /study/<token>/): arrival, consent, instructions,
practice, the work loop, and the completion or return page.

A participant never logs in: their arrival stores their participant id and their browser's secret in the
(signed, server-side) session, under this study's link only, so the session reaches this one study and nothing
else; every other page of the app still sees an anonymous visitor. Only the browser whose secret matches acts as
the participant (annotation/crowd/identity.py); another arrival with the same platform id gets a page saying the
id has already started. Every page is a plain form post followed by a redirect, and carries the
tab token (annotation/crowd/studies.py, "One tab at a time"). An item is shown by the loop's own item page
(annotation/core/item_page.py) under the run's header; its forms post through htmx when the browser runs JavaScript,
and then the reply is the run's next page itself, one request per answer (`_onward`).
Gold never reaches these pages; a practice item's expected answer is shown only after the participant answered
it.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.core.assignment import AssignmentRefused
from annotation.core.item_page import (
    ItemPage,
    Notice,
    item_page_context,
    read_answer,
    read_side_box,
    spent_ms,
    with_policy,
)
from annotation.crowd import held, identity, item_actions, studies
from annotation.crowd.checks import canonical
from annotation.crowd.models import CheckResult, Participant, StudyLink
from hume.lib.htmx import vary, wants_partial
from hume.lockout import CACHE_ERRORS, client_address
from hume.sqlite_busy import retry_when_locked
from tasks_app import instructions
from tasks_app.core.kinds import ValidationProblem
from tasks_app.core.models import RTL_SCRIPTS, Item

SESSION_PREFIX = "crowd:"
ARRIVAL_WINDOW_SECONDS = 60
# the statuses whose page htmx shows in place of the item (the run's pages that say why it cannot go on), beside
# the item page's own 409 and 422 (templates/annotation/_item_head.html)
SWAP_ERRORS = "403|404|409|410|422|429"


def _language(link: StudyLink) -> dict[str, str]:
    code = link.batch.language
    return {"lang": code.split("-")[0], "dir": "rtl" if code.split("-")[-1] in RTL_SCRIPTS else "ltr"}


def _render(request: HttpRequest, link: StudyLink | None, template: str, context: dict[str, Any], *,
            status: int = 200) -> HttpResponse:
    base = {"link": link, "swap_errors": SWAP_ERRORS, **(_language(link) if link else {"lang": "en", "dir": "ltr"})}
    response = with_policy(render(request, f"crowd/{template}", {**base, **context}, status=status))
    response["Cache-Control"] = "no-store"
    return response


def _problem(request: HttpRequest, link: StudyLink | None, title: str, message: str, status: int) -> HttpResponse:
    return _render(request, link, "problem.html", {"title": title, "message": message}, status=status)


def _link(token: str) -> StudyLink | None:
    if not studies.PLATFORM_ID.fullmatch(token or ""):
        return None
    return held.link_of(token)


def _no_link(request: HttpRequest) -> HttpResponse:
    return _problem(request, None, "No such study", "This study link does not exist. Check the link on your "
                                                    "platform.", 404)


def _arrivals_exceeded(request: HttpRequest) -> bool:
    """Count this address's arrivals in the current window (THROTTLE_CACHE, Redis); fails open if it is down."""
    key = f"crowd-arrivals:{client_address(request)}"
    cache = caches[settings.THROTTLE_CACHE]
    try:
        cache.add(key, 0, timeout=ARRIVAL_WINDOW_SECONDS)
        return cache.incr(key) > settings.CROWD_ARRIVALS_PER_MINUTE
    except (*CACHE_ERRORS, ValueError):
        return False


def _busy(request: HttpRequest) -> HttpResponse:
    """The page for a moment SQLite stayed busy through every try (hume/sqlite_busy.py): it loads the
    participant's page again by itself (the same link for an arrival, the tab's run page after a form)."""
    if request.method == "GET":
        again = request.get_full_path()
    else:  # the page of the tab that sent the form (a run page without its tab would count as another tab)
        again = f"{request.path}?{urlencode({'tab': request.POST.get('tab', '')})}"
    response = _render(request, None, "busy.html", {"again": again})
    if wants_partial(request):  # htmx shows no <meta refresh>: the browser goes to the page itself
        response["HX-Redirect"] = again
    return vary(response)


@require_GET
@retry_when_locked(_busy)
def arrive(request: HttpRequest, token: str) -> HttpResponse:
    """The public link: check the link and the participant's ids, make or find the participant, remember them in
    this browser's session for this study, and go on to their page."""
    link = _link(token)
    if link is None:
        return _no_link(request)
    if _arrivals_exceeded(request):
        return _problem(request, link, "Too many arrivals", "Too many people opened this study from your network in "
                        "the last minute. Please wait a minute and open the link again.", 429)
    key = f"{SESSION_PREFIX}{link.pk}"
    try:
        arrival = studies.read_arrival(link, request.GET)
        admission = studies.arrive(link, arrival, secret=_held(request.session.get(key)).get("secret"))
    except studies.StudyProblem as problem:
        title = "This study is closed" if problem.status == 410 else "This link is incomplete"
        message = problem.message if problem.status == 410 else f"Parameter {problem.field}: {problem.message}."
        return _problem(request, link, title, message, problem.status)
    except identity.AlreadyStarted:
        return _render(request, link, "already_started.html", {}, status=409)
    participant = admission.participant
    # kept first: when a later write meets a busy SQLite, the view's next try (hume/sqlite_busy.py) finds the
    # browser's secret here and resumes the run it just made, instead of taking it for another browser
    request.session[key] = {"participant": participant.pk, "secret": admission.secret}
    if request.session.session_key:  # a fresh session id on each arrival (no fixation of a shared one); a
        request.session.cycle_key()  # browser without one gets a new id when the session is first saved
    if participant.stage in studies.RUNNING:  # straight to this tab's page: one redirect fewer per arrival
        fresh = admission.tab or studies.open_tab(participant)
        if fresh is not None:
            return redirect(_run_url(link, fresh))
    return redirect("crowd:run", token=link.token)


def _held(value: Any) -> dict[str, Any]:
    """What this browser's session keeps for a study: the participant's id and the browser's secret."""
    return value if isinstance(value, dict) else {}


def _held_participant(request: HttpRequest, token: str) -> Participant | None:
    """This browser's participant in the study of `token`, read with the link, its batch, task and annotator in
    one statement (annotation/crowd/held.py), when the browser holds the run (its secret matches); None for a
    browser that never arrived, or whose run an admin released to another device. The session keeps each study
    under its link's id: the participant found must belong to that link, and the link must be the one of
    `token`."""
    for key, value in request.session.items():
        kept = _held(value)
        link_id = key.removeprefix(SESSION_PREFIX)
        if not (key.startswith(SESSION_PREFIX) and link_id.isdigit() and isinstance(kept.get("participant"), int)):
            continue
        participant = held.participant_of(kept["participant"], int(link_id), token)
        if participant is not None:
            return participant if identity.holds(participant, kept.get("secret")) else None
    return None


def _no_session(request: HttpRequest, link: StudyLink) -> HttpResponse:
    return _problem(request, link, "Open the study from your platform", "This browser has not arrived through the "
                    "study link yet, or the study was moved to another browser. Open the study from the link your "
                    "platform gave you, in the browser where you started it.", 403)


def _link_and_participant(request: HttpRequest, token: str) -> tuple[StudyLink, Participant] | HttpResponse:
    """The study link and this browser's participant, or the page that says which one is missing."""
    if not studies.PLATFORM_ID.fullmatch(token or ""):
        return _no_link(request)
    participant = _held_participant(request, token)
    if participant is None:
        link = _link(token)
        return _no_link(request) if link is None else _no_session(request, link)
    return participant.link, participant


def _other_tab(request: HttpRequest, link: StudyLink, *, status: int = 409) -> HttpResponse:
    return _render(request, link, "other_tab.html", {}, status=status)


def _run_url(link: StudyLink, tab: str) -> str:
    return f"{reverse('crowd:run', args=[link.token])}?{urlencode({'tab': tab})}"


@require_http_methods(["GET", "POST"])
@retry_when_locked(_busy)
def run(request: HttpRequest, token: str) -> HttpResponse:
    found = _link_and_participant(request, token)
    if isinstance(found, HttpResponse):
        return found
    link, participant = found
    if participant.stage not in studies.RUNNING:
        return _after_the_run(request, link, participant)
    if not (link.is_open and link.batch.is_open):
        return _closed(request, link)
    tab = (request.POST if request.method == "POST" else request.GET).get("tab", "")
    if request.method == "GET" and not tab:
        fresh = studies.open_tab(participant)
        return _other_tab(request, link) if fresh is None else redirect(_run_url(link, fresh))
    if not studies.holds_tab(participant, tab):
        return _other_tab(request, link)
    if request.method == "POST":
        return _act(request, link, participant, tab)
    if request.GET.get("revise"):
        return _revision_page(request, link, participant, tab, request.GET["revise"])
    return _show(request, link, participant, tab)


def _closed(request: HttpRequest, link: StudyLink) -> HttpResponse:
    return _problem(request, link, "This study is closed", "This study was closed while you were taking part. "
                    "The answers you gave are kept. Please return the study on your platform.", 410)


def _after_the_run(request: HttpRequest, link: StudyLink, participant: Participant) -> HttpResponse:
    """A finished run shows its page (the code, or why it ended). A completed participant may still revise their
    answers from the tab that holds the study until their deadline (item_actions.may_revise); another tab, or a
    later visit, gets the completion page without the way back."""
    if not item_actions.may_revise(participant):
        return _show(request, link, participant, "")
    tab = (request.POST if request.method == "POST" else request.GET).get("tab", "")
    if request.method == "GET" and not tab:
        fresh = studies.open_tab(participant)
        return redirect(_run_url(link, fresh)) if fresh else _show(request, link, participant, "")
    if not studies.holds_tab(participant, tab):
        return _show(request, link, participant, "")
    if request.method == "POST" and request.POST.get("action") == "revise":
        return _revise(request, link, participant, tab)
    if request.GET.get("revise"):
        return _revision_page(request, link, participant, tab, request.GET["revise"])
    return _show(request, link, participant, tab)


@require_POST
@retry_when_locked(_busy)
def take_over(request: HttpRequest, token: str) -> HttpResponse:
    """"Continue here": this tab becomes the participant's one tab; the other one gets the other-tab page."""
    found = _link_and_participant(request, token)
    if isinstance(found, HttpResponse):
        return found
    link, participant = found
    if participant.stage not in studies.RUNNING:
        return redirect("crowd:run", token=link.token)
    return redirect(_run_url(link, studies.open_tab(participant, take_over=True) or ""))


def _show(request: HttpRequest, link: StudyLink, participant: Participant, tab: str, *,
          form: Any = None, status: int = 200, notice: str = "", **side: Any) -> HttpResponse:
    try:
        step = studies.current_step(participant)
    except AssignmentRefused as refused:  # the engine's own word (the batch closed a moment ago, …)
        return _problem(request, link, "This study cannot go on", refused.message, 409)
    context = {"participant": participant, "tab": tab, "task": link.batch.task, "notice": notice}
    if step.page == Participant.Stage.CONSENT:
        return _render(request, link, "consent.html", {**context, "consent": instructions.to_html(link.consent)})
    if step.page == Participant.Stage.INSTRUCTIONS:
        return _render(request, link, "instructions.html", {
            **context, "instructions": instructions.to_html(link.batch.task.instructions),
            "n_practice": len(studies.check_item_ids(link, CheckResult.Role.PRACTICE))})
    if step.page == Participant.Stage.COMPLETED:
        return _render(request, link, "completed.html", {**context, **_revise_after_context(participant, tab)})
    if step.page == Participant.Stage.RETURNED:
        return _render(request, link, "returned.html", context)
    return _item_page(request, link, participant, step, tab, form=form, status=status, notice=notice, **side)


def _item_page(request: HttpRequest, link: StudyLink, participant: Participant, step: studies.Step, tab: str, *,
               form: Any, status: int, notice: str, **side: Any) -> HttpResponse:
    """The item on screen: the one item page (annotation/core/item_page.py) under the run's header."""
    item = step.item
    done = studies.n_work(participant) if step.n_work is None else step.n_work
    practice = step.role == CheckResult.Role.PRACTICE
    number, n_run_items = (0, 0) if practice else studies.item_counter(participant, done)
    previous = None if practice else item_actions.previous_answer(participant)
    page = _crowd_page(link, tab, item, action="answer", side=not practice, previous=previous,
                       notices=(Notice(notice),) if notice else ())
    context = {**item_page_context(page, link.batch, item, form=form, **side),
               "number": number, "n_run_items": n_run_items, "participant": participant, "tab": tab,
               "practice": practice, "done": done, "quota": link.quota, "minutes_left": _minutes_left(participant),
               "n_practice": len(studies.check_item_ids(link, CheckResult.Role.PRACTICE)) if practice else 0}
    return _render(request, link, "item.html", context, status=status)


def _crowd_page(link: StudyLink, tab: str, item: Item, *, action: str, side: bool, previous: Any,
                notices: tuple[Notice, ...] = (), forward_label: str = "") -> ItemPage:
    """The item page's wiring in a run: every form posts to the run's page with the tab, the item and the action,
    and htmx puts the next page of the run (whichever stage it is) in place of this one."""
    run = reverse("crowd:run", args=[link.token])
    here = f"{run}?{urlencode({'tab': tab})}"
    return ItemPage(
        answer_url=run, skip_url=run, flag_url=run, hx_select="#loop", side=side,
        hidden=(("tab", tab), ("item", str(item.pk)), ("action", action)),
        submit_label="Save revision" if action == "revise" else "Submit",
        skip_note=(f"A skipped item goes to someone else and does not come back to you; it does not count toward "
                   f"your {link.quota} items."),
        back_url=f"{here}&{urlencode({'revise': previous.item_id})}" if previous else "",
        forward_url=here if forward_label else "", forward_label=forward_label, notices=notices)


def _minutes_left(participant: Participant) -> int:
    return max(0, int((participant.deadline - timezone.now()).total_seconds() // 60))


def _onward(request: HttpRequest, link: StudyLink, participant: Participant, tab: str) -> HttpResponse:
    """After a form of the run: htmx gets the run's next page in the same response (the participant read afresh,
    as the page's own request would), a plain form post the redirect to it."""
    url = _run_url(link, tab)
    if not wants_partial(request):
        return redirect(url)
    found = _link_and_participant(request, link.token)
    if isinstance(found, HttpResponse):
        return vary(found)
    link, participant = found
    if participant.stage not in studies.RUNNING:  # as `_after_the_run` shows it to this tab
        held = item_actions.may_revise(participant) and studies.holds_tab(participant, tab)
        response = _show(request, link, participant, tab if held else "")
    elif not (link.is_open and link.batch.is_open):
        response = _closed(request, link)
    elif not studies.holds_tab(participant, tab):
        response = _other_tab(request, link)
    else:
        response = _show(request, link, participant, tab)
    response["HX-Replace-Url"] = url
    return vary(response)


def _act(request: HttpRequest, link: StudyLink, participant: Participant, tab: str) -> HttpResponse:
    action = request.POST.get("side") or request.POST.get("action", "")  # the skip and flag boxes' buttons
    if action in ("consent", "instructions") and participant.stage == action:
        studies.advance(participant)
    elif action == "decline" and participant.stage == Participant.Stage.CONSENT:
        studies.end(participant, Participant.Stage.RETURNED, reason="declined")
    elif action == "leave":
        studies.end(participant, Participant.Stage.RETURNED, reason="left")
    elif action == "answer":
        return _answer(request, link, participant, tab)
    elif action in ("skip", "flag"):
        return _skip_or_flag(request, link, participant, tab, action)
    elif action == "revise":
        return _revise(request, link, participant, tab)
    return _onward(request, link, participant, tab)


def _answer(request: HttpRequest, link: StudyLink, participant: Participant, tab: str) -> HttpResponse:
    try:  # the held work item in one query; anything else (a check, the time up) as a page decides it
        step = studies.answered_work_step(participant, request.POST.get("item")) or studies.current_step(participant)
    except AssignmentRefused as refused:
        return _problem(request, link, "This study cannot go on", refused.message, 409)
    if step.item is None or request.POST.get("item") != str(step.item.pk):
        # an old page (after the time ran out, or a reload of an answered item): nothing is stored
        return _show(request, link, participant, tab, notice="That item was already done; here is where you are.")
    item: Item = step.item
    sent = read_answer(link.batch, item, request.POST)  # a flag ticked in the flag box goes with the answer
    form, flag_comment = sent.form, sent.flag_comment
    if not form.is_valid():
        return _show(request, link, participant, tab, form=form, status=422)
    value = form.cleaned_data["value"]
    try:
        if step.role == "work":
            studies.submit_work(participant, item, value, time_spent_ms=sent.spent_ms, started_at=sent.started_at,
                                flag_comment=flag_comment)
        elif step.role == CheckResult.Role.PRACTICE:
            feedback = studies.submit_practice(participant, item, value)
            shown = feedback.expected if isinstance(feedback.expected, str) else canonical(feedback.expected)
            return _render(request, link, "feedback.html", {"participant": participant, "tab": tab, "expected": shown,
                                                            "feedback": feedback, "task": link.batch.task})
        else:
            studies.submit_check(participant, item, value, time_spent_ms=sent.spent_ms, flag_comment=flag_comment)
    except ValidationProblem as problem:
        form.add_error(None, str(problem))
        return _show(request, link, participant, tab, form=form, status=422)
    except AssignmentRefused as refused:
        return _show(request, link, participant, tab, notice=refused.message)
    return _onward(request, link, participant, tab)


# --- skip, flag, going back to revise (annotation/crowd/item_actions.py) -----------------------------------------

def _skip_or_flag(request: HttpRequest, link: StudyLink, participant: Participant, tab: str,
                  action: str) -> HttpResponse:
    """Skip or flag the item on screen; a box sent without its reason shows the item again with the error."""
    try:
        step = studies.current_step(participant)
    except AssignmentRefused as refused:
        return _problem(request, link, "This study cannot go on", refused.message, 409)
    if step.item is None or step.role == CheckResult.Role.PRACTICE or request.POST.get("item") != str(step.item.pk):
        return _show(request, link, participant, tab, notice="That item was already done; here is where you are.")
    box = read_side_box(action, request.POST)
    if not box.is_valid():
        return _show(request, link, participant, tab, status=422, **{f"{action}_form": box})
    try:
        if action == "skip":
            item_actions.skip_step(participant, step, reason=box.reason,
                                   time_spent_ms=spent_ms(request.POST, link.batch, step.item))
        else:
            item_actions.flag_step(participant, step, comment=box.comment)
    except AssignmentRefused as refused:
        return _show(request, link, participant, tab, notice=refused.message)
    return _onward(request, link, participant, tab)


def _revise_after_context(participant: Participant, tab: str) -> dict[str, Any]:
    """The completion page's way back to revise (only from the tab that holds the study, while it may)."""
    if not tab or not item_actions.may_revise(participant):
        return {}
    return {"last_answer": item_actions.previous_answer(participant), "minutes_left": _minutes_left(participant)}


def _revision_page(request: HttpRequest, link: StudyLink, participant: Participant, tab: str, item_id: str, *,
                   form: Any = None, status: int = 200) -> HttpResponse:
    """One of the participant's earlier work answers, open for revision (their current item stays theirs)."""
    answer = item_actions.revisable(participant, item_id)
    if answer is None:
        return redirect(_run_url(link, tab))
    completed = participant.stage == Participant.Stage.COMPLETED
    page = _crowd_page(link, tab, answer.item, action="revise", side=False,
                       previous=item_actions.previous_answer(participant, before=answer.item_id),
                       notices=(Notice("You answered this item already. Change your answer and submit to revise it; "
                                       "your earlier answer is kept too.", id="revising"),),
                       forward_label="Back to your completion code →" if completed else "Current item →")
    context = {**item_page_context(page, link.batch, answer.item, form=form, answer=answer.value),
               "participant": participant, "tab": tab, "revising": True, "completed": completed,
               "done": studies.n_work(participant), "quota": link.quota, "minutes_left": _minutes_left(participant)}
    return _render(request, link, "item.html", context, status=status)


def _revise(request: HttpRequest, link: StudyLink, participant: Participant, tab: str) -> HttpResponse:
    """Store a revised answer (the engine keeps the earlier one) and go back to the current item."""
    item_id = request.POST.get("item")
    answer = item_actions.revisable(participant, item_id)
    if answer is None:
        return _show(request, link, participant, tab, notice="That answer cannot be changed now.")
    form = read_answer(link.batch, answer.item, request.POST).form
    if not form.is_valid():
        return _revision_page(request, link, participant, tab, item_id, form=form, status=422)
    try:
        item_actions.revise(participant, answer, form.cleaned_data["value"])
    except ValidationProblem as problem:
        form.add_error(None, str(problem))
        return _revision_page(request, link, participant, tab, item_id, form=form, status=422)
    except studies.StudyProblem:
        return _onward(request, link, participant, tab)  # timed out: the run's page says so
    except AssignmentRefused as refused:
        return _show(request, link, participant, tab, notice=refused.message)
    return _onward(request, link, participant, tab)
