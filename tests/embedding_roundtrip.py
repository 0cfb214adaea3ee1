"""Vectors through the embedding cache's store and back, checked byte for byte (tests/test_embedding_store.py runs
it on PostgreSQL in the test process and on SQLite in a subprocess): float32 with signed zeros, subnormals and the
largest finite value, and float16 kept as float16. `python tests/embedding_roundtrip.py` on a migrated database
prints "bit for bit" or the problems."""
from __future__ import annotations

import numpy as np


def forget_process_state() -> None:
    """Drop what this process knows of the cache, so the next lookup reads the database."""
    from agreement.model_runs import embedding_store

    embedding_store._indexes.clear()
    embedding_store._read.clear()


def roundtrip() -> list[str]:
    """The problems found (none when every vector came back bit for bit)."""
    from agreement.model_runs import embedding_store
    from agreement.model_runs.embedding import text_hash
    from agreement.model_runs.models import EmbeddingSlice

    rng = np.random.default_rng(37)
    f32 = rng.standard_normal((300, 384)).astype(np.float32)
    f32[0, :5] = [0.0, -0.0, np.float32(1e-45), np.finfo(np.float32).max, np.finfo(np.float32).tiny]
    f16 = rng.standard_normal((200, 64)).astype(np.float16)
    f16[0, :3] = [np.float16(-0.0), np.float16(6e-8), np.finfo(np.float16).max]
    digests = [text_hash(f"text {n}") for n in range(300)]
    embedding_store.store("a" * 64, digests[:150], f32[:150])  # two slices of one identity
    embedding_store.store("a" * 64, digests[150:], f32[150:])
    embedding_store.store("b" * 64, digests[:200], f16)
    forget_process_state()
    problems = []
    got = embedding_store.lookup("a" * 64, digests)
    if np.stack([got[d] for d in digests]).tobytes() != f32.tobytes():
        problems.append("float32 vectors differ")
    got16 = embedding_store.lookup("b" * 64, digests[:200])
    if np.stack([got16[d] for d in digests[:200]]).astype(np.float16).tobytes() != f16.tobytes():
        problems.append("float16 vectors differ")
    row = EmbeddingSlice.objects.get(model_identity="b" * 64)
    if (row.dtype, bytes(row.vectors)) != ("float16", f16.astype("<f2").tobytes()):
        problems.append(f"float16 stored as {row.dtype}, or other bytes")
    if embedding_store.lookup("c" * 64, digests):
        problems.append("an identity with no slice was answered")
    return problems


if __name__ == "__main__":
    import os
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    found = roundtrip()
    print("; ".join(found) or "bit for bit")
