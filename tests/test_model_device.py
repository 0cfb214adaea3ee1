"""Where models run (agreement/model_runs/device.py): MODEL_DEVICE resolved against what torch sees, the
device recorded on each run, and the accelerator path of the sentence-transformers encoder.

Every test runs on the CPU (CI); the device-parametrised ones also run on `cuda` where torch sees a GPU
(a GPU worker or the device bench), with the tolerance stated in each."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement.model_runs import device as device_module
from agreement.model_runs.backends import SentenceTransformerEncoder, encode_overlapped
from agreement.model_runs.device import DeviceError, Placement, parse_batch_sizes, resolve
from agreement.model_runs.models import ModelRun
from agreement.model_runs.shipped import minilm_folder
from tests import model_data as data

HAS_CUDA = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda:0"] if HAS_CUDA else [])
MISSING_GPU = f"cuda:{torch.cuda.device_count()}" if HAS_CUDA else "cuda"  # a GPU this machine lacks


def test_cpu_resolves_to_cpu_and_auto_to_what_torch_sees() -> None:
    assert resolve("cpu") == "cpu"
    assert resolve(" CPU ") == "cpu"
    expected = f"cuda:{torch.cuda.current_device()}" if HAS_CUDA else (
        "mps" if torch.backends.mps.is_available() else "cpu")
    assert resolve("auto") == expected


def test_a_missing_gpu_is_an_error_naming_the_setting() -> None:
    with pytest.raises(DeviceError, match=r"MODEL_DEVICE=cuda.*(sees no CUDA GPU|CUDA device\(s\))"):
        resolve(MISSING_GPU)


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "cuda:-1", "tpu", ""])
def test_a_value_that_is_no_device_is_refused(value: str) -> None:
    with pytest.raises(DeviceError, match="is not a device: use auto, cpu, cuda, cuda:N or mps"):
        resolve(value)


def test_batch_sizes_per_device_type() -> None:
    assert parse_batch_sizes("cuda=512, mps=64") == {"cuda": 512, "mps": 64}
    assert parse_batch_sizes("") == {}
    with pytest.raises(ValueError, match=r"MODEL_BATCH_SIZES: 'cuda=0' is not DEVICE=N"):
        parse_batch_sizes("cuda=0")
    with pytest.raises(ValueError, match=r"'gpu=8'"):
        parse_batch_sizes("cpu=8,gpu=8")


def test_placement_applies_half_precision_and_batch_size_on_accelerators_only(settings) -> None:
    settings.MODEL_DEVICE, settings.MODEL_HALF_PRECISION, settings.MODEL_BATCH_SIZES = "cpu", True, "cuda=512"
    assert device_module.placement() == Placement(device="cpu", half_precision=False, batch_size=None)
    settings.MODEL_BATCH_SIZES = "cpu=8"
    assert device_module.placement().batch_size == 8


TEXTS = ["A man is playing a guitar.", "Short.", "Shares dropped steeply on the exchange after the announcement "
         "of the quarterly results, the largest fall this year.", "Kids play soccer outside.", "Ein Hund läuft.",
         "كلب يجري في الثلج", "A cook prepares spaghetti in a kitchen.", "x " * 300]


@pytest.mark.parametrize("where", DEVICES)
def test_overlapped_encoding_equals_sentence_transformers_encode(where: str) -> None:
    """The accelerator path (tokenising the next batch while the device computes) gives encode's vectors:
    to 1e-5 on the same device (batches differ, so padding and summation order differ)."""
    encoder = SentenceTransformerEncoder(minilm_folder(), batch_size=3,
                                         where=Placement(device=where, half_precision=False, batch_size=None))
    expected = encoder.model.encode(TEXTS, batch_size=3, convert_to_numpy=True, show_progress_bar=False)
    got = encode_overlapped(encoder.model, TEXTS, 3)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert encoder.device == where


if HAS_CUDA:  # defined only where a GPU is (a skip would fail CI, which has none)
    def test_gpu_vectors_agree_with_cpu_vectors() -> None:
        """A GPU and a CPU run of one model share the embedding cache, so their vectors must agree: to 1e-4 in
        float32 (cuBLAS and the CPU's BLAS sum in different orders), and cosine to 2e-3 in half precision."""
        cpu = SentenceTransformerEncoder(minilm_folder(), where=Placement("cpu", False, None)).encode(TEXTS)
        gpu = SentenceTransformerEncoder(minilm_folder(), where=Placement("cuda:0", False, None)).encode(TEXTS)
        np.testing.assert_allclose(gpu, cpu, atol=1e-4)
        half = SentenceTransformerEncoder(minilm_folder(), where=Placement("cuda:0", True, None)).encode(TEXTS)
        cosine = (half * cpu).sum(1) / np.linalg.norm(half, axis=1) / np.linalg.norm(cpu, axis=1)
        assert cosine.min() > 1 - 2e-3


@pytest.mark.django_db
def test_a_model_run_records_the_device_in_its_row_and_the_report_json(settings) -> None:
    settings.MODEL_DEVICE = DEVICES[-1]
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    task = data.build_model_task("sts")
    out = io.StringIO()
    call_command("run_models", task.name, "--models", "minilm", "--wait", stdout=out)
    assert json.loads(out.getvalue())["models"]["minilm"]["device"] == DEVICES[-1]
    report = io.StringIO()
    call_command("report", task.name, "--format", "json", stdout=report, stderr=io.StringIO())
    rows = json.loads(report.getvalue())["model_runs"]
    assert [(r["model"]["name"], r["device"]) for r in rows] == [("minilm", DEVICES[-1])]


@pytest.mark.django_db
def test_classical_metrics_record_the_cpu(settings) -> None:
    settings.MODEL_DEVICE = MISSING_GPU  # a classical metric never touches torch: the setting does not matter
    call_command("add_model", "lev", "--backend", "classical", "--metric", "levenshtein", stdout=io.StringIO())
    task = data.build_model_task("sts")
    call_command("run_models", task.name, "--models", "lev", "--wait", stdout=io.StringIO())
    assert ModelRun.objects.get(task=task).device == "cpu"


@pytest.mark.django_db
def test_a_missing_gpu_refuses_the_run_and_changes_nothing(settings) -> None:
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    settings.MODEL_DEVICE = MISSING_GPU
    task = data.build_model_task("sts")
    with pytest.raises(CommandError, match=rf"minilm: MODEL_DEVICE={MISSING_GPU} but"):
        call_command("run_models", task.name, "--models", "minilm", "--wait", stdout=io.StringIO())
    assert not ModelRun.objects.exists()


@pytest.mark.django_db
def test_a_worker_without_the_gpu_fails_the_run_with_the_reason(settings) -> None:
    """A run queued from a web process reaches a worker that lacks the configured GPU: the run is failed
    with the setting named (nothing encoded, nothing cached), never left running."""
    from agreement.model_runs.execution import execute_chunk, start_run
    from agreement.model_runs.models import EmbeddingModel, EmbeddingSlice

    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    run = start_run(data.build_model_task("sts"), EmbeddingModel.objects.get(name="minilm"))
    settings.MODEL_DEVICE = MISSING_GPU
    assert execute_chunk(run.chunks.get().pk) == "failed"
    run.refresh_from_db()
    assert run.status == ModelRun.Status.FAILED and f"MODEL_DEVICE={MISSING_GPU}" in run.error
    assert run.device == "" and not EmbeddingSlice.objects.exists()


@pytest.mark.django_db
def test_chunk_size_is_a_setting_read_when_a_run_starts(settings) -> None:
    """GPU deployments raise MODEL_RUN_CHUNK_TEXTS so a GPU spends its time encoding, not on per-chunk work."""
    from agreement.model_runs.execution import start_run
    from agreement.model_runs.models import EmbeddingModel

    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=io.StringIO())
    model = EmbeddingModel.objects.get(name="minilm")
    assert start_run(data.build_model_task("sts", name="default size"), model).chunks_total == 1  # 14 texts
    settings.MODEL_RUN_CHUNK_TEXTS = 4
    run = start_run(data.build_model_task("sts", name="small chunks"), model)
    assert [len(c.item_ids) for c in run.chunks.order_by("index")] == [2, 2, 2, 1]  # 2 texts an item


def test_a_local_model_encodes_the_next_slice_while_the_last_one_is_stored() -> None:
    """similarity.embed stores slice n while slice n + 1 encodes in a thread (a local model releases the GIL),
    so a GPU is not idle during cache writes; slices come back in order, each with its own vectors."""
    import threading

    from agreement.model_runs.embedding import encoded_slices

    class Recorder:
        encodes_in_background = True

        def __init__(self) -> None:
            self.threads: list[str] = []

        def encode(self, texts: list[str]) -> np.ndarray:
            self.threads.append(threading.current_thread().name)
            return np.array([[float(t)] for t in texts], dtype=np.float32)

    parts = [[(f"h{i}", str(i)) for i in range(start, start + 3)] for start in range(0, 12, 3)]
    backend = Recorder()
    got = [(part, vectors[:, 0].tolist()) for part, vectors in encoded_slices(backend, parts)]
    assert got == [(part, [float(t) for _, t in part]) for part in parts]
    assert len(backend.threads) == 4 and all(name.startswith("encode") for name in backend.threads)
    backend.encodes_in_background = False
    assert [v[:, 0].tolist() for _, v in encoded_slices(backend, parts)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8],
                                                                             [9, 10, 11]]
    assert backend.threads[4:] == [threading.current_thread().name] * 4
