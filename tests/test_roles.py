"""One place for roles: hume.roles' cached lookup and its two DRF permission classes, for every kind of user.

alice is an annotator, carol an admin, dave a researcher; a superuser counts as admin and researcher; a
user in no role group and an anonymous visitor have no role. Researchers' rights include the admin.
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User
from rest_framework.test import APIRequestFactory

from annotation.core.annotators import create_annotator
from annotation.models import Annotator
from hume.roles import ADMIN, ANNOTATOR, RESEARCHER, IsAdmin, IsResearcher, roles_of

pytestmark = pytest.mark.django_db


def users(alice, carol, dave) -> dict[str, object]:
    return {"alice": User.objects.get(pk=alice.user_id), "carol": User.objects.get(pk=carol.pk),
            "dave": User.objects.get(pk=dave.pk), "root": User.objects.create_superuser("root", password=None),
            "nobody": User.objects.create_user("nobody"), "anonymous": AnonymousUser()}


# who: (IsAdmin, IsResearcher, roles)
EXPECTED = {"alice": (False, False, {ANNOTATOR}), "carol": (True, True, {ADMIN}),
            "dave": (False, True, {RESEARCHER}), "root": (True, True, {ADMIN, RESEARCHER}),
            "nobody": (False, False, set()), "anonymous": (False, False, set())}


def test_the_two_permission_classes_answer_for_every_role(alice, carol, dave):
    for name, user in users(alice, carol, dave).items():
        for method in ("GET", "POST"):
            request = getattr(APIRequestFactory(), method.lower())("/api/v1/anything/")
            request.user = user
            answers = (IsAdmin().has_permission(request, None), IsResearcher().has_permission(request, None))
            assert answers == EXPECTED[name][:2], (name, method)
        assert roles_of(user) == EXPECTED[name][2], name


def test_roles_are_read_once_per_user_object(alice, carol, django_assert_num_queries):
    user = User.objects.get(pk=carol.pk)
    with django_assert_num_queries(1):
        assert roles_of(user) == {ADMIN}
        request = APIRequestFactory().get("/")
        request.user = user
        assert IsAdmin().has_permission(request, None) and IsResearcher().has_permission(request, None)


def test_the_api_answers_each_role_through_the_same_classes(client, alice, carol, dave):
    """An admin-only import and a researcher read, as each person sees them."""
    expected = {"alice": (403, 403), "dave": (403, 200), "carol": (400, 200)}
    for name, (import_status, report_status) in expected.items():
        client.force_login(User.objects.get(username=name))
        assert client.post("/api/v1/tasks/import/", {}).status_code == import_status, name
        assert client.get("/api/v1/results/leaderboard/").status_code == report_status, name
    client.logout()
    response = client.get("/api/v1/results/leaderboard/")
    assert response.status_code in (401, 403)


def test_create_annotator_makes_a_login_in_the_annotator_group_with_its_languages(db):
    annotator = create_annotator("erin", languages={"eng-Latn": "fluent", "ara-Arab": None})
    assert Group.objects.get(name=ANNOTATOR) in annotator.user.groups.all()
    assert (annotator.agent, annotator.user.has_usable_password()) == (Annotator.Agent.HUMAN, False)
    assert dict(annotator.languages.values_list("language", "proficiency")) == {"eng-Latn": "fluent",
                                                                               "ara-Arab": "native"}
    llm = create_annotator("judge", agent=Annotator.Agent.LLM, password="a long enough passphrase")
    assert llm.agent == "llm" and llm.user.check_password("a long enough passphrase")
