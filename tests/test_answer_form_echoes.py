"""A refused answer shows what was posted again cut short (issue 23, item 9): a 5 MB value came back in the
page twice (in its input and in the error that quotes it). Every kind's answer fields, and the flag and skip
forms, are tried with a 5 MB value through the real page."""
from __future__ import annotations

import pytest
from django.test import Client

from annotation.core.forms import answer_form_for
from annotation.models import Annotation
from tasks_app.core.kinds import KINDS
from tests.loop_data import batch_of

pytestmark = pytest.mark.django_db
BIG = "Z" * 5_000_000
EXCERPT = "Z" * 40 + "…"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_5_mb_value_in_any_answer_field_comes_back_as_a_short_excerpt(alice, kind: str) -> None:
    batch = batch_of(kind, [alice])
    client = Client()
    client.force_login(alice.user)
    item = client.get(f"/annotate/b/{batch.pk}/", follow=True).context["item"]
    url = f"/annotate/b/{batch.pk}/items/{item.pk}/answer/"
    for name in answer_form_for(batch.task, item.payload).fields:
        response = client.post(url, {name: BIG})
        assert response.status_code == 422, name
        assert len(response.content) < 50_000, (name, len(response.content))
        # cut at the field's max_length (a cluster name: 60), or at 40 characters for a choice or a number
        limit = getattr(answer_form_for(batch.task, item.payload).fields[name], "max_length", None) or 40
        assert "Z" * limit + "…" in response.content.decode() and "Z" * (limit + 1) not in response.content.decode()
    assert not Annotation.objects.exists()


def test_the_choice_error_quotes_an_excerpt_of_the_refused_value(alice) -> None:
    batch = batch_of("classification", [alice])
    client = Client()
    client.force_login(alice.user)
    item = client.get(f"/annotate/b/{batch.pk}/", follow=True).context["item"]
    response = client.post(f"/annotate/b/{batch.pk}/items/{item.pk}/answer/", {"label": BIG})
    assert response.context["form"].errors["label"] == [
        f"Select a valid choice. {EXCERPT} is not one of the available choices."]


def test_an_overlong_flag_comment_comes_back_cut_at_its_limit(alice) -> None:
    """Free text keeps what fits the field (2000 characters), so a person's comment is not lost."""
    batch = batch_of("sts", [alice])
    client = Client()
    client.force_login(alice.user)
    item = client.get(f"/annotate/b/{batch.pk}/", follow=True).context["item"]
    response = client.post(f"/annotate/b/{batch.pk}/items/{item.pk}/flag/", {"flag_comment": BIG})
    assert response.status_code == 422 and len(response.content) < 50_000
    assert response.context["flag_form"]["flag_comment"].value() == "Z" * 2000 + "…"
    skipped = client.post(f"/annotate/b/{batch.pk}/items/{item.pk}/skip/", {"skip_reason": BIG, "skip_note": BIG})
    assert skipped.status_code == 422 and len(skipped.content) < 50_000
