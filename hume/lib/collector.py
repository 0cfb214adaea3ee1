"""Python's cyclic garbage collector paused while a bulk step builds many objects that hold no cycles.

Decoding 20,000 JSON payloads, or holding 40,000 vectors by text, makes tens of thousands of containers; each
700 of them start a collection, and every few of those a full one walks all of the process's objects (a
worker's torch and Django are millions). None of them is garbage, so the collections find nothing: in a model
run they cost up to half a CPU second, and varied with what the process had loaded (docs/models-in-app.md).
Reference counting still frees everything at once; a cycle made in the block is collected after it.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and back as it was after (blocks may nest)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
