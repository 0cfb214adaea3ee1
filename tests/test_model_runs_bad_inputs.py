"""Bad input to the model registry and runs gets a clear error and changes nothing."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.model_runs.backends import BackendError
from agreement.model_runs.embedding import embed, similarity
from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice, ModelRun
from agreement.model_runs.shipped import minilm_folder
from tests import model_data as data

pytestmark = pytest.mark.django_db


def add(*args: str) -> None:
    call_command("add_model", *args, stdout=io.StringIO())


def test_a_folder_that_is_not_a_model_is_refused_and_registers_nothing(tmp_path: Path, settings) -> None:
    settings.MODEL_DIRS = [str(tmp_path)]
    (tmp_path / "README.md").write_text("not a model")
    with pytest.raises(CommandError, match="not a sentence-transformers model folder"):
        add("broken", "--backend", "sentence-transformers", "--path", str(tmp_path))
    assert not EmbeddingModel.objects.exists()


def test_a_model_folder_with_corrupt_weights_is_refused_and_registers_nothing(tmp_path: Path, settings) -> None:
    settings.MODEL_DIRS = [str(tmp_path)]
    source = minilm_folder()
    for name in ("modules.json", "config.json", "config_sentence_transformers.json", "sentence_bert_config.json",
                 "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, tmp_path / name)
    shutil.copytree(source / "1_Pooling", tmp_path / "1_Pooling")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(CommandError, match="cannot load as a sentence-transformers model"):
        add("corrupt", "--backend", "sentence-transformers", "--path", str(tmp_path))
    assert not EmbeddingModel.objects.exists()


def test_add_model_is_idempotent_and_refuses_a_name_with_other_settings() -> None:
    add("jaccard", "--backend", "classical", "--metric", "jaccard")
    add("jaccard", "--backend", "classical", "--metric", "jaccard")
    with pytest.raises(CommandError, match="exists with other settings"):
        add("jaccard", "--backend", "classical", "--metric", "rouge")
    assert EmbeddingModel.objects.get().metric == "jaccard"


def test_an_openai_model_needs_a_safe_url() -> None:
    with pytest.raises(CommandError, match="credentials"):
        add("remote", "--backend", "openai", "--base-url", "http://user:pw@127.0.0.1:9/v1", "--model-id", "m")
    assert not EmbeddingModel.objects.exists()


@pytest.mark.parametrize("url", ["http://169.254.169.254/v1", "http://127.0.0.1:6379/v1", "http://[::1]/v1",
                                 "http://0.0.0.0/v1", "http://2130706433/v1", "http://localhost/v1",
                                 "http://10.0.0.7/v1", "http://example.org/v 1"])
def test_an_embeddings_endpoint_follows_the_llm_endpoint_policy(url: str) -> None:
    """Issue 14 item 2: the same SSRF rules for the embeddings endpoint as for LLM annotators."""
    with pytest.raises(CommandError, match="public addresses|space|control"):
        add("remote", "--backend", "openai", "--base-url", url, "--model-id", "m")
    assert not EmbeddingModel.objects.exists()


def test_a_classical_metric_cannot_score_a_classification_task_and_no_run_is_made() -> None:
    add("bm25", "--backend", "classical", "--metric", "bm25")
    task = data.build_model_task("classification")
    with pytest.raises(CommandError, match="cannot score a classification task"):
        call_command("run_models", task.name, "--models", "bm25", "--wait", stdout=io.StringIO())
    assert not ModelRun.objects.exists()


def test_empty_texts_are_refused_by_encoders_and_metrics_and_nothing_is_cached() -> None:
    add("minilm", "--backend", "sentence-transformers", "--shipped")
    add("rouge", "--backend", "classical", "--metric", "rouge")
    with pytest.raises(BackendError, match="text 1 is empty"):
        embed(EmbeddingModel.objects.get(name="minilm"), ["a sentence", " "])
    assert not EmbeddingSlice.objects.exists()
    with pytest.raises(ValueError, match="pair 0: text a is empty"):
        similarity(EmbeddingModel.objects.get(name="rouge"), [""], ["a sentence"])


def test_an_unknown_model_name_is_named() -> None:
    task = data.build_model_task("sts")
    with pytest.raises(CommandError, match="no registered model named nope"):
        call_command("run_models", task.name, "--models", "nope", stdout=io.StringIO())
