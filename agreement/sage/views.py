"""The researchers' SAGE page: ask for a study run (a worker computes it), read its Table 1 and plots.

GET never computes: a queued or running run shows "being computed" and its part polls itself every second
(htmx), like results/_pending_partial.html; the response that finds it finished swaps in the table.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from agreement.sage import sage_plots, study_jobs
from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.datasets import SageDataError
from agreement.sage.models import SageRun
from agreement.sage.named_scorers import split_names
from agreement.sage.study_upload import StudyUploadError, keep_upload
from agreement.sage.table import GROUP_TITLES, HEADERS
from hume.jobs import BrokerDown
from hume.lib.htmx import page_or_partial, vary_on_htmx
from hume.roles import RESEARCHER, is_admin, require_role
from measures.sage.categories import CATEGORIES


@login_required
def index(request: HttpRequest) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read SAGE studies.")
    if request.method == "POST" and request.POST.get("action") == "upload":
        return _upload(request)
    if request.method == "POST":
        try:
            seed = study_jobs.parse_seed(request.POST.get("seed"))
            models = split_names(",".join(request.POST.getlist("models")))
            run = study_jobs.ask(request.POST.get("study", ""), split_names(",".join(request.POST.getlist("metrics"))),
                           models, seed, request.user)
        except ValueError as error:
            messages.error(request, f"Nothing was started: {error}")
            return redirect("sage:index")
        except BrokerDown as down:  # the run is stored; its message waits in the job layer's outbox
            messages.warning(request, f"SAGE run {down.job_key}: {down}.")
            return redirect("sage:detail", run_id=down.job_key)
        return redirect("sage:detail", run_id=run.pk)
    return render(request, "agreement/sage/index.html", {
        "runs": SageRun.objects.all()[:50], "studies": study_jobs.available_studies(), "metrics": BASELINE_METRICS,
        "models": model_choices(request.user), "chosen": request.GET.get("study", "")})


def model_choices(user: Any) -> list[dict[str, Any]]:
    """The registered models for the form: each with whether this user may start it (the switch)."""
    from agreement.model_runs.models import EmbeddingModel

    admin = is_admin(user)
    return [{"name": m.name, "backend": m.get_backend_display(), "may_run": admin or bool(m.researchers_may_run)}
            for m in EmbeddingModel.objects.all()]


def _upload(request: HttpRequest) -> HttpResponse:
    """A zipped study folder, checked whole (study_upload.py); kept under SAGE_STUDIES_DIR, then offered to run."""
    archive = request.FILES.get("archive")
    if archive is None:
        messages.error(request, "Nothing was uploaded: choose a .zip of the study folder.")
        return redirect("sage:index")
    name = request.POST.get("name", "").strip() or Path(archive.name).stem
    try:
        study = keep_upload(archive, Path(archive.name).name, name, study_jobs.studies_dir(),
                            study_jobs.available_studies())
    except (StudyUploadError, SageDataError) as error:
        messages.error(request, f"Nothing was uploaded: {error}")
        return redirect("sage:index")
    parts = [c for c in CATEGORIES if c != "human_preference" and getattr(study, c)]
    parts += ["human_preference"] if study.comparisons or study.ratings else []
    messages.success(request, f"Study {name!r} uploaded ({', '.join(HEADERS[c] for c in parts)}); choose the "
                              "metrics and models and start it.")
    return redirect(f"{reverse('sage:index')}?study={name}#run")


def cell(value: Any) -> str:
    """Three decimals as Table 1 prints them (the CLI's CSV and LaTeX use the same rounding); "–" if absent."""
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def groups_of(table: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 1's rows grouped as the paper groups them, each with its cells in the paper's column order."""
    out: list[dict[str, Any]] = []
    for row in table["rows"]:
        if not out or out[-1]["group"] != row["group"]:
            out.append({"group": row["group"], "title": GROUP_TITLES.get(row["group"], row["group"]), "rows": []})
        out[-1]["rows"].append({"name": row["name"], "cells": [cell(row["scores"][c]) for c in CATEGORIES],
                                "overall": cell(row["overall"])})
    return out


def _flatten(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _flatten(inner, f"{path} · {key}" if path else key)]
    return [(path, value)]


def subtables_of(table: dict[str, Any]) -> list[dict[str, Any]]:
    """Per category: one line per dataset figure (the paper's Tables 2-6), one column per model or metric."""
    out = []
    for category in CATEGORIES:
        per_model = table["subtables"].get(category) or {}
        names = list(per_model)
        flat = {name: dict(_flatten(per_model[name])) for name in names}
        keys = list(dict.fromkeys(k for name in names for k in flat[name]))
        if keys:
            out.append({"category": category, "title": HEADERS[category], "names": names,
                        "lines": [{"key": k, "values": [cell(flat[n].get(k)) for n in names]} for k in keys]})
    return out


@login_required
@vary_on_htmx
def detail(request: HttpRequest, run_id: int) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read SAGE studies.")
    run = get_object_or_404(SageRun, pk=run_id)
    context: dict[str, Any] = {"run": run, "headers": [HEADERS[c] for c in CATEGORIES]}
    if run.status == SageRun.Status.DONE:
        context |= {"groups": groups_of(run.table), "subtables": subtables_of(run.table),
                    "plots": [{"category": c, "title": sage_plots.title_of(c)} for c in (*CATEGORIES, "overall")]}
    return page_or_partial(request, "agreement/sage/detail.html", "agreement/sage/_run_partial.html", context)


@login_required
def plot(request: HttpRequest, run_id: int, category: str) -> HttpResponse:
    require_role(request.user, RESEARCHER, "Only researchers and admins read SAGE studies.")
    run = get_object_or_404(SageRun, pk=run_id, status=SageRun.Status.DONE)
    if category not in (*CATEGORIES, "overall"):
        raise Http404(f"no SAGE category {category!r}")
    return HttpResponse(sage_plots.bars_svg(run.table, category), content_type="image/svg+xml")
