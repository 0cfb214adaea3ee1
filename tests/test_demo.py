"""The demo the run command loads: a task of every kind, three languages, the demo people, idempotent; with
DEBUG=false it refuses, unless --staging, which prints a random password instead of the published one."""
import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import override_settings

from agreement.results.models import ResultModel
from annotation.models import Annotation, Batch, BatchAssignee
from tasks_app.core.kinds import KINDS
from tasks_app.models import Item, ItemGold, Task
from tests.conftest import REPO
from tests.test_settings_safety import SAFE_KEY, run_manage

RUN = REPO / "scripts" / "run"


def load_demo() -> str:
    """The development demo, as scripts/run loads it (DEBUG=true; pytest-django runs tests with DEBUG off)."""
    out = StringIO()
    with override_settings(DEBUG=True):
        call_command("load_demo", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_demo_has_a_task_of_every_kind_in_english_arabic_and_danish() -> None:
    load_demo()
    assert set(Task.objects.values_list("kind", flat=True)) == set(KINDS)
    assert set(Task.objects.values_list("language", flat=True)) == {"eng-Latn", "ara-Arab", "dan-Latn"}
    assert Task.objects.count() == 14  # 13 small ones, and the demo campaign's 600 STS pairs
    assert Item.objects.count() == 46 + 600
    assert ItemGold.objects.count() == Item.objects.count()


@pytest.mark.django_db
def test_the_demo_prints_working_logins_for_every_role() -> None:
    output = load_demo()
    assert "password for all: hume-demo" in output
    for name in ("carol", "dave", "alice", "bob"):
        assert f"  {name} " in output
        assert authenticate(username=name, password="hume-demo") is not None


@pytest.mark.django_db
def test_the_demo_assigns_each_batch_to_the_annotators_who_speak_its_language() -> None:
    load_demo()
    english = Batch.objects.get(task__name="Emotion (English)")
    assert english.overlap == 2
    assert set(BatchAssignee.objects.filter(batch=english).values_list("annotator__user__username", flat=True)) == {
        "alice", "bob"}
    arabic = Batch.objects.get(task__name="STS (Arabic)")
    assert arabic.overlap == 1
    assert list(arabic.assignees.values_list("user__username", flat=True)) == ["bob"]
    assert english.batch_items.count() == 8
    # the demo campaign's task has no batch of its own: its campaign hands its items out (tests/test_demo_campaign.py)
    assert not Batch.objects.filter(task__name="STS campaign (English)").exists()


@pytest.mark.django_db
def test_loading_the_demo_twice_changes_nothing() -> None:
    load_demo()
    counts = (Task.objects.count(), Item.objects.count(), Batch.objects.count(), Annotation.objects.count())
    output = load_demo()
    assert (Task.objects.count(), Item.objects.count(), Batch.objects.count(), Annotation.objects.count()) == counts
    assert "0 added, 8 unchanged" in output
    assert counts[3] == 48 + 600  # the demo campaign's judge answered its 600 pairs


@pytest.mark.django_db
def test_the_run_command_imports_the_13_hume_models_from_the_projects_own_copy() -> None:
    commands = [line.split()[1:] for line in RUN.read_text(encoding="utf-8").splitlines()
                if "manage.py import_results" in line and not line.lstrip().startswith("#")]
    assert commands == [["manage.py", "import_results", "demo/mteb-hume-results"]]
    call_command("import_results", str(REPO / commands[0][-1]), stdout=StringIO())
    models = ResultModel.objects.filter(agent=ResultModel.Agent.MODEL)
    assert models.count() == 13
    assert {"intfloat/e5-mistral-7b-instruct", "sentence-transformers/all-MiniLM-L6-v2"} <= set(
        models.values_list("name", flat=True))
    assert ResultModel.objects.get(agent=ResultModel.Agent.HUMAN_REFERENCE).name == "baseline/Human"


def test_with_debug_off_load_demo_refuses_and_creates_no_account(tmp_path) -> None:
    """Production settings for real (a subprocess with DEBUG=false): the published password never reaches a server."""
    result = run_manage("load_demo", HUME_DATA_DIR=str(tmp_path), DEBUG="false", SECRET_KEY=SAFE_KEY,
                        ALLOWED_HOSTS="hume.example.org")
    assert result.returncode == 1
    assert "refuses to run with DEBUG=false" in result.stderr and "--staging" in result.stderr
    assert "Demo logins" not in result.stdout


@pytest.mark.django_db
def test_a_staging_demo_gives_every_account_a_random_password_printed_once(settings) -> None:
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refuses to run with DEBUG=false"):
        call_command("load_demo", stdout=StringIO())
    assert not User.objects.exists() and not Task.objects.exists()  # nothing created
    out = StringIO()
    call_command("load_demo", "--staging", stdout=out)
    password = re.search(r"new random password: (\S+);", out.getvalue()).group(1)
    assert len(password) >= 24 and password != "hume-demo"
    for name in ("carol", "dave", "alice", "bob"):
        assert f"  {name} " in out.getvalue()
        assert authenticate(username=name, password=password) is not None
        assert authenticate(username=name, password="hume-demo") is None
    again = StringIO()
    call_command("load_demo", "--staging", stdout=again)
    assert again.getvalue().count("password: unchanged") == 4  # the second run tells no one a wrong password
    assert authenticate(username="carol", password=password) is not None


@pytest.mark.django_db
def test_a_staging_demo_replaces_the_published_password_of_an_earlier_development_demo(settings) -> None:
    load_demo()
    settings.DEBUG = False
    out = StringIO()
    call_command("load_demo", "--staging", stdout=out)
    password = re.search(r"new random password: (\S+);", out.getvalue()).group(1)
    assert out.getvalue().count("password: the new one") == 4
    assert authenticate(username="carol", password="hume-demo") is None
    assert authenticate(username="carol", password=password) is not None
