"""One role guard and one htmx helper (docs/architecture.md, "The library layer"): `hume/roles.py` is the only
place that turns a role into a refusal, `hume/lib/htmx.py` the only place that reads whether htmx asked; the
views call them. Each is checked twice: what it answers for each person and request, and that no copy of it
exists anywhere else in the app code.

alice is an annotator, carol an admin, dave a researcher (tests/conftest.py).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails

from hume.lib.htmx import page_or_partial, wants_partial
from hume.roles import ADMIN, ANNOTATOR, RESEARCHER, allows, require_role, role_required

REPO = Path(__file__).resolve().parent.parent
APP_CODE = ("hume", "tasks_app", "annotation", "agreement", "kinds", "measures")
ROLE_PREDICATES = {"is_admin", "is_researcher", "has_role", "roles_of", "allows", "may_import"}
GUARD, HTMX_HELPER = REPO / "hume" / "roles.py", REPO / "hume" / "lib" / "htmx.py"


def app_files() -> list[Path]:
    return [path for app in APP_CODE for path in sorted((REPO / app).rglob("*.py")) if "migrations" not in path.parts]


# ---------------------------------------------------------------------------------------------
# What the guard answers


@pytest.mark.django_db
def test_the_guard_answers_each_role_as_the_roles_module_defines_them(alice, carol, dave):
    people = {"alice": User.objects.get(pk=alice.user_id), "carol": carol, "dave": dave,
              "anonymous": AnonymousUser()}
    answers = {name: tuple(allows(user, role) for role in (ADMIN, RESEARCHER, ANNOTATOR))
               for name, user in people.items()}
    assert answers == {"alice": (False, False, True), "carol": (True, True, False),
                       "dave": (False, True, False), "anonymous": (False, False, False)}
    require_role(dave, RESEARCHER, "never raised")
    with pytest.raises(PermissionDenied, match="^Only admins start model runs[.]$"):
        require_role(dave, ADMIN, "Only admins start model runs.")
    with pytest.raises(PermissionDenied, match="^Only researchers and admins may read this[.]$"):
        require_role(people["alice"], RESEARCHER)  # no reason given: the role's own


@pytest.mark.django_db
def test_a_guarded_view_sends_a_visitor_to_log_in_refuses_an_annotator_and_serves_a_researcher(alice, dave):
    @role_required(RESEARCHER, "Reports are for researchers and admins.")
    def page(request: HttpRequest) -> HttpResponse:
        return HttpResponse(f"hello {request.user.username}")

    request = RequestFactory().get("/reports/")
    request.user = AnonymousUser()
    response = page(request)
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/reports/")
    request.user = User.objects.get(pk=alice.user_id)
    with pytest.raises(PermissionDenied, match="Reports are for researchers and admins."):
        page(request)
    request.user = dave
    assert page(request).content == b"hello dave"
    assert page.__name__ == "page"  # wraps keeps the view's name for the URL resolver and logs


@pytest.mark.django_db
def test_an_annotator_is_refused_each_guarded_page_with_that_pages_reason(client, alice):
    client.force_login(User.objects.get(pk=alice.user_id))
    refusals = {"/manage/annotators/": "Only admins and researchers can open the management pages.",
                "/results/": "Model comparisons are for researchers and admins.",
                "/models/": "Models are for researchers and admins."}
    for url, reason in refusals.items():
        response = client.get(url)
        assert response.status_code == 403, url
        assert reason in response.content.decode(), url


# ---------------------------------------------------------------------------------------------
# What the htmx helper answers


def htmx_request(**headers: str) -> HttpRequest:
    request = RequestFactory().get("/tasks/1/", headers=headers)
    request.htmx = HtmxDetails(request)
    request.user = AnonymousUser()
    return request


def test_htmx_gets_the_partial_and_a_plain_request_or_a_history_restore_the_page():
    assert wants_partial(htmx_request(HX_Request="true")) is True
    assert wants_partial(htmx_request()) is False
    assert wants_partial(htmx_request(HX_Request="true", HX_History_Restore_Request="true")) is False
    assert wants_partial(RequestFactory().get("/")) is False  # no middleware ran: a plain request


@pytest.mark.django_db
def test_page_or_partial_renders_one_template_or_the_other_and_varies_on_hx_request():
    page, partial = "403.html", "_list_search.html"  # a whole page, and a fragment with no <html>
    context = {"exception": "the batch is closed", "listing": {"q": "tolstoy", "sort": "name", "extra": {}}}
    fragment = page_or_partial(htmx_request(HX_Request="true"), page, partial, context, status=409)
    whole = page_or_partial(htmx_request(), page, partial, context)
    assert (fragment.status_code, whole.status_code) == (409, 200)
    assert 'value="tolstoy"' in fragment.content.decode() and "<html" not in fragment.content.decode()
    assert "<html" in whole.content.decode() and "the batch is closed" in whole.content.decode()
    assert fragment["Vary"] == whole["Vary"] == "HX-Request"


# ---------------------------------------------------------------------------------------------
# No copies


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (a docstring may name the header; only code counts)."""
    owners = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)]
    return {id(owner.body[0].value) for owner in owners
            if owner.body and isinstance(owner.body[0], ast.Expr) and isinstance(owner.body[0].value, ast.Constant)}


def role_refusals(tree: ast.AST) -> list[int]:
    """Lines of `if <role predicate>: raise PermissionDenied` written by hand."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        calls = {call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
                 for call in ast.walk(node.test) if isinstance(call, ast.Call)}
        if calls & ROLE_PREDICATES and any(isinstance(stmt, ast.Raise) and stmt.exc is not None
                                           and "PermissionDenied" in ast.unparse(stmt.exc) for stmt in node.body):
            found.append(node.lineno)
    return found


def other_guards(tree: ast.AST) -> list[int]:
    """Lines of a DRF permission class, or of a role read by hand from Django's is_staff or a user's groups
    (adding a user to a role group, as the annotator and demo commands do, is not a check)."""
    return [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.ClassDef) and any("BasePermission" in ast.unparse(b) for b in node.bases))
            or (isinstance(node, ast.Attribute) and node.attr == "is_staff" and isinstance(node.ctx, ast.Load))
            or (isinstance(node, ast.Attribute) and node.attr in ("filter", "values_list", "exists")
                and isinstance(node.value, ast.Attribute) and node.value.attr == "groups")]


def htmx_reads(tree: ast.AST) -> list[int]:
    """Lines that read `request.htmx` or name the HX-Request header in code."""
    skip = docstrings(tree)
    return [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.Attribute) and node.attr == "htmx")
            or (isinstance(node, ast.Constant) and isinstance(node.value, str) and "HX-Request" in node.value
            and id(node) not in skip)]


def copies(finder, exempt: Path) -> list[str]:
    return [f"{path.relative_to(REPO)}:{line}" for path in app_files() if path != exempt
            for line in finder(ast.parse(path.read_text(), filename=str(path)))]


def test_no_view_access_helper_or_api_writes_its_own_role_check():
    assert copies(role_refusals, GUARD) == []


def test_the_roles_module_holds_the_only_permission_classes():
    assert copies(other_guards, GUARD) == []


def test_nothing_but_the_htmx_helper_reads_request_htmx_or_names_the_hx_request_header():
    assert copies(htmx_reads, HTMX_HELPER) == []


COPIES = '''
"""A module that names HX-Request in its docstring only."""
class Mine(BasePermission):
    pass

def view(request):
    if not is_admin(request.user):
        raise PermissionDenied("mine")
    if request.user.is_staff or request.user.groups.filter(name="admin"):
        pass
    if request.htmx:
        response = render(request, "x.html")
        response["Vary"] = "HX-Request"
'''


def test_the_copy_finders_find_each_kind_of_copy():
    tree = ast.parse(COPIES)
    assert (role_refusals(tree), other_guards(tree), htmx_reads(tree)) == ([7], [3, 9, 9], [11, 13])
