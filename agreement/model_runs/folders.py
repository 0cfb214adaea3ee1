"""Where a model folder may be: only inside the roots MODEL_DIRS names (issue 23, item 4).

The registry stores a folder that a worker later loads; without a limit an admin page could point it at any
path on the server (/etc, /root/.ssh, /proc/self, ../../etc), and the run's error, which researchers read,
told whether that path existed. So the one check here runs wherever a folder comes in, the `add_model`
command and the Django admin alike (both through EmbeddingModel.clean), and again when a worker loads the
model (the roots may have changed since). The folder is resolved first, so a symbolic link or ".." out of a
root is refused too. What a run says about a folder never names it: `model_folder` speaks of the model.
BackendError and the model-folder check live here (backends.py imports them) so that both sides use one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

MODEL_FILES = ("modules.json", "config_sentence_transformers.json")


class BackendError(ValueError):
    """The model cannot be loaded or used as configured; the message says what to fix."""


def check_model_folder(path: str | Path) -> Path:
    """The folder, if it holds a sentence-transformers model; BackendError naming what is missing if not."""
    folder = Path(path)
    if not folder.is_dir():
        raise BackendError(f"{folder}: no such model folder")
    if not any((folder / name).is_file() for name in MODEL_FILES):
        raise BackendError(f"{folder}: not a sentence-transformers model folder (no {' or '.join(MODEL_FILES)})")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("pytorch_model.bin")):
        raise BackendError(f"{folder}: no weights (model.safetensors or pytorch_model.bin)")
    return folder


def model_roots() -> list[Path]:
    return [Path(root).resolve() for root in settings.MODEL_DIRS]


def inside_roots(path: str | Path) -> Path:
    """The folder, resolved, if it lies inside a MODEL_DIRS root; BackendError (naming the roots, which the
    admin set, never whether the folder exists) otherwise."""
    roots = model_roots()
    folder = Path(path).expanduser().resolve()
    if not any(folder == root or root in folder.parents for root in roots):
        where = ", ".join(str(root) for root in roots) or "none is set"
        raise BackendError(f"a model folder must be inside one of the folders MODEL_DIRS names ({where})")
    return folder


def model_folder(model: Any) -> Path:
    """A registered model's folder, checked for a worker; errors name the model, not the folder (a run's
    error is shown to researchers)."""
    try:
        return check_model_folder(inside_roots(model.path))
    except BackendError as exc:
        inside = "must be inside one of the folders MODEL_DIRS names" not in str(exc)
        what = "is missing or holds no sentence-transformers model" if inside else "is outside MODEL_DIRS"
        raise BackendError(f"model {model.name!r}: its folder {what}; an admin checks it with manage.py add_model "
                           "or the admin's model page") from None


def available_folders(limit: int = 200) -> list[tuple[str, Path]]:
    """The model folders a page may offer: (label, folder) for each folder, up to two levels under a MODEL_DIRS
    root, that holds a sentence-transformers model. The label is the folder relative to its root, prefixed
    with the root's number when there are several roots, so a page never shows a server path."""
    roots = model_roots()
    found: list[tuple[str, Path]] = []
    for number, root in enumerate(roots, start=1):
        if not root.is_dir():
            continue
        candidates = [p for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".")]
        candidates += [q for p in candidates for q in sorted(p.iterdir()) if q.is_dir() and not q.name.startswith(".")]
        for folder in sorted(candidates):
            try:
                check_model_folder(inside_roots(folder))
            except (BackendError, OSError):
                continue
            relative = folder.resolve().relative_to(root).as_posix() if folder.resolve() != root else folder.name
            found.append((f"{number}:{relative}" if len(roots) > 1 else relative, folder.resolve()))
            if len(found) >= limit:
                return found
    return found


def folder_by_label(label: str) -> Path:
    """The folder `available_folders` offered under this label; BackendError (naming only the label) if none."""
    for offered, folder in available_folders():
        if offered == label:
            return folder
    raise BackendError(f"no model folder {label!r} under MODEL_DIRS holds a sentence-transformers model")
