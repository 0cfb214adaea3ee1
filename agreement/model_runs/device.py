"""Where a worker runs its models: the `MODEL_DEVICE` setting resolved against what torch sees here.

`auto` (the default) takes the first CUDA GPU torch sees, else Apple's MPS, else the CPU, and never fails for
want of a GPU. An explicit `cpu`, `cuda`, `cuda:N` or `mps` is a demand: a worker without that device refuses
every model run with a DeviceError naming the setting, before anything is encoded or stored.

The device is part of what a run was computed on, not of the model's identity: a CUDA and a CPU run of one
model share the embedding cache (docs/models-in-app.md, "GPU workers").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


class DeviceError(ValueError):
    """The configured device is not there (or not a device); the message names the setting and what exists."""


@dataclass(frozen=True)
class Placement:
    """A resolved device and how models run on it."""

    device: str            # "cpu", "cuda:0", "mps": torch's name, recorded on every run
    half_precision: bool   # fp16 weights and activations (accelerators only; ignored on the CPU)
    batch_size: int | None  # texts per forward pass on this kind of device; None: the model's own

    @property
    def accelerated(self) -> bool:
        return self.device != "cpu"


def parse_batch_sizes(text: str) -> dict[str, int]:
    """`"cuda=512,mps=64"` -> {"cuda": 512, "mps": 64}; ValueError naming the entry that is not `type=N`."""
    sizes: dict[str, int] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, _, number = entry.partition("=")
        if name.strip() not in ("cpu", "cuda", "mps") or not number.strip().isdigit() or int(number) < 1:
            raise ValueError(f"MODEL_BATCH_SIZES: {entry!r} is not DEVICE=N with DEVICE cpu, cuda or mps and N ≥ 1")
        sizes[name.strip()] = int(number)
    return sizes


def resolve(requested: str) -> str:
    """torch's name of the device `requested` (a MODEL_DEVICE value) means on this machine."""
    import torch

    value = requested.strip().lower()
    if not DEVICE_PATTERN.match(value):
        raise DeviceError(f"MODEL_DEVICE={requested!r} is not a device: use auto, cpu, cuda, cuda:N or mps")
    if value == "auto":
        if torch.cuda.is_available():
            return f"cuda:{torch.cuda.current_device()}"
        return "mps" if _mps_available(torch) else "cpu"
    if value == "cpu":
        return "cpu"
    if value == "mps":
        if not _mps_available(torch):
            raise DeviceError("MODEL_DEVICE=mps but torch sees no MPS device on this machine (use auto or cpu)")
        return "mps"
    if not torch.cuda.is_available():
        build = "a CPU-only build of torch" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise DeviceError(f"MODEL_DEVICE={requested} but torch ({torch.__version__}, {build}) sees no CUDA GPU on "
                          f"this machine: use auto or cpu here, or run this work on a GPU worker")
    index = int(value.partition(":")[2] or torch.cuda.current_device())
    if index >= torch.cuda.device_count():
        raise DeviceError(f"MODEL_DEVICE={requested} but this machine has {torch.cuda.device_count()} CUDA "
                          f"device(s) (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    return f"cuda:{index}"


def _mps_available(torch: object) -> bool:
    backend = getattr(getattr(torch, "backends", None), "mps", None)
    return bool(backend is not None and backend.is_available())


def placement() -> Placement:
    """The settings' device choice, resolved here (DeviceError when an explicit device is missing)."""
    device = resolve(settings.MODEL_DEVICE)
    sizes = parse_batch_sizes(settings.MODEL_BATCH_SIZES)
    kind = device.partition(":")[0]
    return Placement(device=device, half_precision=bool(settings.MODEL_HALF_PRECISION) and kind != "cpu",
                     batch_size=sizes.get(kind))


def worker_device() -> str:
    """Where this worker computes (ranks, encodes locally): the resolved MODEL_DEVICE."""
    return resolve(settings.MODEL_DEVICE)


def add_device(model: type, pk: int, device: str, field: str = "device") -> None:
    """Add `device` to a run row's comma-separated record of devices (compare-and-set, so two workers on
    different devices that share a run's chunks both land, as "cpu,cuda:0")."""
    rows = model.objects.filter(pk=pk)
    for _ in range(10):
        current = rows.values_list(field, flat=True).first()
        if current is None:
            return
        devices = set(filter(None, current.split(",")))
        if device in devices or rows.filter(**{field: current}).update(**{field: ",".join(sorted(devices | {device}))}):
            return
