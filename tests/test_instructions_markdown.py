"""One Markdown renderer everywhere: a table in the instructions is a table on the annotator's page and on the
task page alike, sanitised the same way (issue 14, item 10)."""
from __future__ import annotations

import pytest
from django.test import Client

from tasks_app.instructions import to_html
from tests.loop_data import batch_of

pytestmark = pytest.mark.django_db
INSTRUCTIONS = ("| score | meaning |\n|---|---|\n| 0 | unrelated |\n| 5 | same meaning |\n\n"
                "```\nkeys: 0-5\n```\n\n<script>alert(1)</script>")
TABLE = "<td>5</td>\n<td>same meaning</td>"


def test_the_renderer_makes_tables_and_code_and_drops_script() -> None:
    html = to_html(INSTRUCTIONS)
    assert "<table>" in html and TABLE in html and "<pre><code>keys: 0-5" in html
    assert "<script" not in html


def test_the_annotator_page_and_the_task_page_render_the_same_table(alice, dave) -> None:
    batch = batch_of("sts", [alice], instructions=INSTRUCTIONS)
    annotator, researcher = Client(), Client()
    annotator.force_login(alice.user)
    researcher.force_login(dave)
    loop = annotator.get(f"/annotate/b/{batch.pk}/", follow=True).content.decode()
    task_page = researcher.get(f"/tasks/{batch.task_id}/").content.decode()
    for body in (loop, task_page):
        assert str(to_html(INSTRUCTIONS)) in body
        assert "| score |" not in body and "<script>alert" not in body
