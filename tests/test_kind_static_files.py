"""A kind's static files live in its folder (kinds/<name>/static/) and are served as `kinds/<name>/<file>` by
kinds/static_finder.py, like any file of static/: found, listed for `collectstatic`, served, and loaded by the
annotator's item page from the kind's `scripts` and `styles` (docs/architecture.md, "Adding a task kind")."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from kinds.kind_registry import KINDS
from kinds.static_finder import KindStaticFinder
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.loop_data import batch_of

REPO = Path(__file__).resolve().parent.parent


def test_a_kind_script_is_found_in_its_folder_and_nothing_outside_it() -> None:
    assert finders.find("kinds/sts/slider.js") == str(REPO / "kinds" / "sts" / "static" / "slider.js")
    assert finders.find("kinds/clustering/clusters.js") == str(REPO / "kinds" / "clustering" / "static" / "clusters.js")
    finder = KindStaticFinder()
    assert finder.find("kinds/sts/../definition.py") is None  # out of the kind's static/: refused
    assert finder.find("kinds/sts/no-such.js") is None and finder.find("kinds/nokind/slider.js") is None
    assert finder.find("kinds/sts/slider.js", find_all=True) == [finders.find("kinds/sts/slider.js")]
    assert finder.find("annotation/keys.js") is None  # static/'s files are the FileSystemFinder's


def test_collectstatic_lists_every_declared_script() -> None:
    listed = {f"{storage.prefix}/{path}" for path, storage in KindStaticFinder().list([])}
    declared = {name: (*kind.scripts, *kind.styles) for name, kind in KINDS.items()}
    assert {"kinds/sts/slider.js", "kinds/sts/slider.css"} <= set(declared["sts"])
    assert all(file.startswith(f"kinds/{name}/") and file in listed
               for name, files in declared.items() for file in files)


@pytest.mark.django_db
def test_the_loop_page_loads_the_kind_script_that_is_served(alice) -> None:
    client = Client()
    assert client.login(username=alice.user.username, password=PASSWORD)
    page = client.get(f"/annotate/b/{batch_of('sts', [alice]).pk}/", follow=True).content.decode()
    assert 'src="/static/kinds/sts/slider.js"' in page
    assert '<link rel="stylesheet" href="/static/kinds/sts/slider.css">' in page  # in the head, before the partial
    assert page.index("kinds/sts/slider.css") < page.index("</head>")
    served = client.get("/static/kinds/sts/slider.js")
    assert served.status_code == 200
    assert b"".join(served.streaming_content) == (REPO / "kinds" / "sts" / "static" / "slider.js").read_bytes()
