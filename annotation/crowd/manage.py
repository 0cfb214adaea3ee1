"""The researcher's pages of crowd studies (under /manage/studies/): make a study link from a batch, the
participants page, exclusion, closing a link, and the CSV lists for the platform (admins only: platform ids are
personal data)."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.core import access
from annotation.crowd import identity, participants, studies
from annotation.crowd.models import Participant, StudyLink
from annotation.manage.views import admins_only, readers_only
from hume.roles import is_admin
from kinds.forms import ShortEchoes


class StudyLinkForm(ShortEchoes, forms.Form):
    """The link's settings; each count is bounded here as in `studies.link_problems` (a 10^30 or 2^63 was a 500
    when the database refused it), so the error sits on its field. A refused form shows a number again cut to
    40 characters (ShortEchoes), the consent text whole (up to its max_length)."""

    quota = forms.IntegerField(min_value=1, max_value=studies.MAX_COUNT, help_text="Work items per participant.")
    minutes = forms.IntegerField(min_value=1, max_value=studies.MAX_MINUTES, help_text="Time limit from arrival.")
    completion_code = forms.CharField(max_length=64)
    platform = forms.ChoiceField(choices=StudyLink.Platform.choices, initial=StudyLink.Platform.PROLIFIC)
    consent = forms.CharField(widget=forms.Textarea, required=False, max_length=50_000,
                              help_text="Markdown; empty = no consent step.")
    gold_rate = forms.FloatField(min_value=0.0, max_value=1.0, initial=0.0, help_text="Hidden gold checks per item.")
    min_seconds = forms.IntegerField(min_value=0, max_value=studies.MAX_MIN_SECONDS, initial=0,
                                     help_text="Minimum seconds per item (0 = off).")
    straightline_run = forms.IntegerField(min_value=0, max_value=studies.MAX_COUNT, initial=0,
                                          help_text="Identical answers in a row to flag (at most the quota).")
    practice_failures_allowed = forms.IntegerField(min_value=0, max_value=studies.MAX_COUNT, initial=1)
    min_answers = forms.IntegerField(min_value=0, max_value=studies.MAX_COUNT, initial=0, required=False,
                                     help_text="Fewest answered items that earn the code when the batch runs out "
                                               "first (0 or empty = the quota).")

    def clean_min_answers(self) -> int:
        return self.cleaned_data.get("min_answers") or 0


def get_link_for(user, link_id: int) -> StudyLink:
    """A study link whose batch the user may read (researchers and admins); else 404."""
    link = StudyLink.objects.select_related("batch", "batch__task").filter(pk=link_id).first()
    if link is None:
        raise Http404("No such study link.")
    access.get_batch_for(user, link.batch_id)
    return link


@admins_only
@require_http_methods(["GET", "POST"])
def create_link(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = access.get_batch_to_manage(request.user, batch_id)
    form = StudyLinkForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        wanted = studies.LinkSettings(**form.cleaned_data)
        problems = studies.link_problems(batch, wanted)
        for name, message in problems:
            form.add_error(name if name in form.fields else None, message)
        if not problems:
            link = studies.create_study_link(batch, wanted, created_by=request.user)
            messages.success(request, "Study link created." + (f" {embedded_crowd_note()}" if on_sqlite() else ""))
            return redirect("studies:detail", link_id=link.pk)
    return render(request, "crowd/manage/link_form.html", {
        "batch": batch, "form": form, "facts": studies.link_facts(batch),
        "embedded_note": embedded_crowd_note() if on_sqlite() else ""})


def on_sqlite() -> bool:
    """Whether the app runs on the embedded default's database (SQLite), which has one writer."""
    return connection.vendor == "sqlite"


def embedded_crowd_note() -> str:
    """What the embedded default was measured to serve (settings.CROWD_EMBEDDED_MEASURED_PARTICIPANTS)."""
    return (f"This server runs on SQLite, the embedded default: measured with bench/bench_crowd.py on a quiet "
            f"2-core machine it served {settings.CROWD_EMBEDDED_MEASURED_PARTICIPANTS} participants arriving within "
            f"a minute (quota 5, reading 3-10 s per item) with no server error; a larger crowd, or a machine busy "
            f"with other work, needs PostgreSQL behind gunicorn (docs/crowd.md).")


@readers_only
@require_GET
def detail(request: HttpRequest, link_id: int) -> HttpResponse:
    """The participants page: checks, time, agreement and the suggested decision per participant."""
    link = get_link_for(request.user, link_id)
    studies.expire_overdue()
    context = {"link": link, "rows": participants.participant_rows(link), "flags": participants.flags(link),
               "history": participants.exclusion_history(link),
               "can_manage": is_admin(request.user),
               "url": request.build_absolute_uri(f"/study/{link.token}/") if is_admin(request.user) else "",
               "query": "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
               if link.platform == StudyLink.Platform.PROLIFIC else "?participant=…"}
    return render(request, "crowd/manage/detail.html", context)


@admins_only
@require_POST
def set_open(request: HttpRequest, link_id: int) -> HttpResponse:
    link = get_link_for(request.user, link_id)
    link.is_open = request.POST.get("open") == "1"
    link.save(update_fields=["is_open"])
    messages.success(request, f"Study link {'opened' if link.is_open else 'closed'}.")
    return redirect("studies:detail", link_id=link.pk)


def _participant_in(link: StudyLink, participant_id: int) -> Participant:
    participant = Participant.objects.select_related("annotator__user").filter(pk=participant_id, link=link).first()
    if participant is None:
        raise Http404("No such participant in this study.")
    return participant


def _decision(request: HttpRequest, link_id: int, participant_id: int) -> tuple[StudyLink, Participant, str]:
    """The study, the participant an exclusion, its undo or a release is about, and the reason posted with it (a NUL
    dropped: no stored text can hold one, and PostgreSQL refuses it)."""
    link = get_link_for(request.user, link_id)
    return link, _participant_in(link, participant_id), request.POST.get("reason", "").replace("\x00", "").strip()


@admins_only
@require_POST
def exclude(request: HttpRequest, link_id: int, participant_id: int) -> HttpResponse:
    link, participant, reason = _decision(request, link_id, participant_id)
    if not reason:
        messages.error(request, "Give a reason to exclude a participant.")
        return redirect("studies:detail", link_id=link.pk)
    try:
        participants.exclude_annotator(participant.annotator, reason, by=request.user)
    except ValueError as problem:  # excluded meanwhile (another tab, another admin)
        messages.error(request, f"{problem}; nothing changed.")
    else:
        messages.success(request, f"{participant.annotator.name} excluded; the reports recompute without them, "
                                  "and the items they answered go to other participants.")
    return redirect("studies:detail", link_id=link.pk)


@admins_only
@require_POST
def include(request: HttpRequest, link_id: int, participant_id: int) -> HttpResponse:
    """Undo an exclusion (same role as excluding): the answers count again and the reports recompute."""
    link, participant, reason = _decision(request, link_id, participant_id)
    if not reason:
        messages.error(request, "Give a reason to include a participant again.")
        return redirect("studies:detail", link_id=link.pk)
    try:
        inclusion = participants.include_annotator(participant.annotator, reason, by=request.user)
    except ValueError as problem:
        messages.error(request, f"{problem}; nothing changed.")
    else:
        messages.success(request, f"{participant.annotator.name} included again; the reports recompute with their "
                                  f"answers. {participants.inclusion_summary(inclusion.n_items_over_k)}")
    return redirect("studies:detail", link_id=link.pk)


@admins_only
@require_POST
def release(request: HttpRequest, link_id: int, participant_id: int) -> HttpResponse:
    """Let a participant continue on another device: the browser that held the run stops, and the next arrival
    with their platform id takes it over (annotation/crowd/identity.py). Kept with who, when and why."""
    link, participant, reason = _decision(request, link_id, participant_id)
    if not reason:
        messages.error(request, "Give a reason to move a participant to a new device.")
        return redirect("studies:detail", link_id=link.pk)
    identity.release(participant, reason, by=request.user)
    messages.success(request, f"{participant.annotator.name} may continue on a new device: the next arrival with "
                              "their platform id takes over the run; the browser that held it stops.")
    return redirect("studies:detail", link_id=link.pk)


@admins_only
@require_GET
def export(request: HttpRequest, link_id: int, which: str) -> HttpResponse:
    link = get_link_for(request.user, link_id)
    if which not in participants.EXPORTS:
        raise Http404(f"No export {which!r}; there are {', '.join(participants.EXPORTS)}.")
    try:
        text = participants.decision_csv(link, which, bonus=request.GET.get("amount", ""))
    except ValueError as problem:
        return HttpResponse(str(problem), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{link.pk}-{which}.csv"'
    return response


