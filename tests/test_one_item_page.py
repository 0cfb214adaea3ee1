"""Issue 38, item 4: one item page for the annotator's loop and a crowd participant's run.

Both render templates/annotation/_item_page.html (annotation/core/item_page.py) inside their own header; the item
page's templates name no kind (the kind's scripts come from its definition through the registry, its answer
partial from its form); and the crowd imports no private helper of the loop's views."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.test import Client

from kinds.kind_registry import KINDS
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.crowd_helpers import Person, make_study
from tests.loop_data import RECORDS, add_items, batch_of, make_task

REPO = Path(__file__).resolve().parent.parent
# the item page and the two stages that wrap it
ITEM_PAGE_TEMPLATES = ("annotation/_item_page.html", "annotation/_item_scripts.html", "annotation/_item_head.html",
                       "annotation/_item.html", "annotation/annotate.html", "crowd/item.html")
KIND_NAME = re.compile(r"(?<![\w.])(" + "|".join(sorted(KINDS)) + r")(?!\w)", re.I)
WITH_SCRIPTS = sorted(name for name, kind in KINDS.items() if kind.scripts)


def test_the_item_page_templates_name_no_kind() -> None:
    found = [f"{name}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group()}"
             for name in ITEM_PAGE_TEMPLATES
             for text in [(REPO / "templates" / name).read_text(encoding="utf-8")]
             for hit in KIND_NAME.finditer(text)]
    assert found == []
    # and ask nothing of a kind's definition by hand: its scripts come from annotation/core/item_page.py
    assert [name for name in ITEM_PAGE_TEMPLATES
            if "kind_definition.scripts" in (REPO / "templates" / name).read_text(encoding="utf-8")] == []


def test_the_crowd_imports_nothing_private_of_the_loop_views() -> None:
    private = []
    for path in sorted((REPO / "annotation" / "crowd").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "annotation.core.views":
                private.append(f"{path.name}: {[alias.name for alias in node.names]}")
    assert private == []  # what the two share is annotation/core/item_page.py


def test_there_is_a_kind_with_scripts_to_check() -> None:
    assert WITH_SCRIPTS  # the registry has kinds whose answer partial needs a script (a slider, clusters)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", WITH_SCRIPTS)
def test_the_loop_and_the_crowd_render_the_one_item_page_with_the_kinds_scripts(kind, alice) -> None:
    scripts = [f'src="/static/{script}"' for script in KINDS[kind].scripts]
    client = Client()
    assert client.login(username=alice.user.username, password=PASSWORD)
    loop = client.get(f"/annotate/b/{batch_of(kind, [alice]).pk}/", follow=True)
    assert loop.status_code == 200
    assert "annotation/_item_page.html" in [t.name for t in loop.templates]
    task = make_task(kind, name=f"Crowd {kind}")
    add_items(task, RECORDS[kind])
    person = Person(make_study(task, consent="", quota=1), 1)
    person.arrive()
    person.post(action="instructions")
    crowd = person.page()
    assert crowd.status_code == 200
    assert "annotation/_item_page.html" in [t.name for t in crowd.templates]
    for page in (loop.content.decode(), crowd.content.decode()):
        assert all(script in page for script in scripts), kind
        assert 'id="answer-form"' in page and 'name="shown"' in page and 'name="skip_reason"' in page
        assert page.count('id="answer-form"') == 1
