"""The top navigation of every page (templates/base.html): the sections the signed-in user's roles may open,
the current one marked. A context processor, so every page, error pages included, carries the same bar."""
from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse

from hume.roles import ANNOTATOR, is_admin, is_researcher, roles_of

ANNOTATE = [("Annotate", "annotation:home")]
ADMIN_ONLY = [("Tasks", "tasks_app:list"), ("Manage", "manage:batch_list"), ("LLM", "llm:home")]
RESEARCH = [("Reports", "agreement:list"), ("Results", "results:leaderboard"), ("Models", "model-runs-index"),
            ("Retrieval", "retrieval:index"), ("SAGE", "sage:index"), ("Escalation", "escalation:index"),
            ("Campaigns", "campaigns:list")]


def sections(request: HttpRequest) -> dict[str, list[dict[str, object]]]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_sections": []}
    entries = []
    if ANNOTATOR in roles_of(user):
        entries += ANNOTATE
    if is_admin(user):
        entries += ADMIN_ONLY
    if is_researcher(user):
        entries += RESEARCH
    links = [{"label": label, "url": reverse(name)} for label, name in entries]
    # the longest matching prefix: "/results/models/" (imported MTEB models) is Results, "/models/" Models
    path = request.path
    current = max((link for link in links if path.startswith(link["url"])), key=lambda link: len(link["url"]),
                  default=None)
    for link in links:
        link["current"] = link is current
    return {"nav_sections": links}
