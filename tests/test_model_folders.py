"""Model folders only inside the roots MODEL_DIRS names, checked the same by the add_model command, the Django
admin and the worker that loads the model; what a run says about a folder never names a server path
(issue 23, item 4)."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from agreement.model_runs.execution import run_in_process, start_run
from agreement.model_runs.models import EmbeddingModel, ModelRun
from agreement.model_runs.shipped import minilm_folder
from tests import model_data as data

pytestmark = pytest.mark.django_db
OUTSIDE = "must be inside one of the folders MODEL_DIRS names"


@pytest.fixture
def root(tmp_path: Path, settings) -> Path:
    """A MODEL_DIRS root holding a copy of the shipped MiniLM as `minilm`, with a file of its own: its folder
    hash, so its identity, is this test's, and no model loaded earlier in the process stands in for it."""
    models = tmp_path / "models"
    shutil.copytree(minilm_folder(), models / "minilm")
    (models / "minilm" / "NOTE.txt").write_text(f"a copy for {tmp_path}")
    settings.MODEL_DIRS = [str(models)]
    return models


def add(name: str, path: str) -> str:
    out = io.StringIO()
    call_command("add_model", name, "--backend", "sentence-transformers", "--path", path, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("path", ["/etc", "/root/.ssh", "/proc/self", "/no/such/folder", "{root}/../../etc",
                                  "{root}/minilm/../.."])
def test_the_command_refuses_a_folder_outside_the_roots_without_saying_whether_it_exists(root: Path, path: str):
    with pytest.raises(CommandError) as refused:
        add("sneaky", path.format(root=root))
    assert str(refused.value) == f"sneaky: a model folder {OUTSIDE} ({root})"
    assert not EmbeddingModel.objects.exists()


def test_a_symbolic_link_out_of_a_root_is_refused(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "minilm", elsewhere)
    (root / "link").symlink_to(elsewhere)
    with pytest.raises(CommandError, match=OUTSIDE):
        add("linked", str(root / "link"))


def test_a_folder_inside_a_root_is_registered_resolved(root: Path) -> None:
    assert "registered (sentence-transformers" in add("mini", str(root / "minilm" / ".." / "minilm"))
    assert EmbeddingModel.objects.get().path == str((root / "minilm").resolve())


def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="correct-horse-battery"))
    return client


def admin_form(name: str, path: str) -> dict[str, object]:
    return {"name": name, "backend": "sentence-transformers", "path": path, "batch_size": 32, "max_retries": 4,
            "timeout_seconds": 60, "requests_sent": 0}  # the admin shows the spend counter prefilled with 0


@pytest.mark.parametrize("path", ["/etc", "/root/.ssh", "/proc/self", "../../etc"])
def test_the_admin_refuses_a_folder_outside_the_roots_beside_the_field(root: Path, path: str) -> None:
    response = admin_client().post("/admin/model_runs/embeddingmodel/add/", admin_form("sneaky", path))
    assert response.status_code == 200  # the form again, with the error
    assert response.context["adminform"].form.errors["path"] == [f"a model folder {OUTSIDE} ({root})"]
    assert not EmbeddingModel.objects.exists()


def test_the_admin_refuses_a_folder_inside_a_root_that_holds_no_model(root: Path) -> None:
    (root / "empty").mkdir()
    response = admin_client().post("/admin/model_runs/embeddingmodel/add/", admin_form("empty", str(root / "empty")))
    assert "not a sentence-transformers model folder" in response.context["adminform"].form.errors["path"][0]
    assert not EmbeddingModel.objects.exists()


def test_the_admin_saves_a_model_folder_inside_a_root(root: Path) -> None:
    response = admin_client().post("/admin/model_runs/embeddingmodel/add/", admin_form("mini", str(root / "minilm")))
    assert response.status_code == 302
    assert EmbeddingModel.objects.get(name="mini").path == str((root / "minilm").resolve())


@pytest.mark.parametrize("stored", ["/etc", "/no/such/folder"])
def test_a_run_of_a_folder_outside_the_roots_fails_naming_the_model_not_the_path(root: Path, stored: str) -> None:
    """A row stored before the roots existed (or the roots changed since): the worker checks again, and the
    error researchers read is the same whether the path exists or not."""
    model = EmbeddingModel.objects.create(name="old", backend="sentence-transformers", path=stored)
    run = run_in_process(start_run(data.build_model_task("sts"), model), poll=0.05)
    assert run.status == "failed"
    assert run.error == ("BackendError: model 'old': its folder is outside MODEL_DIRS; an admin checks it with "
                         "manage.py add_model or the admin's model page")
    assert stored not in run.error and str(root) not in run.error


def test_a_run_of_a_vanished_folder_inside_a_root_fails_naming_the_model_not_the_path(root: Path) -> None:
    add("mini", str(root / "minilm"))
    shutil.rmtree(root / "minilm")
    run = run_in_process(start_run(data.build_model_task("sts"), EmbeddingModel.objects.get()), poll=0.05)
    assert run.status == "failed" and ModelRun.objects.get().error == (
        "BackendError: model 'mini': its folder is missing or holds no sentence-transformers model; an admin "
        "checks it with manage.py add_model or the admin's model page")
    assert str(root) not in run.error
