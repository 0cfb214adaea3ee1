"""The embedding cache becomes one row per slice of vectors (issue 37, agreement/model_runs/embedding_store.py).

The rows of the old cache (one per text) are packed into slices, SLICE rows at a time per model identity and
vector size, in the order they were written, and the old table is dropped: every vector stays cached, bit for
bit. Reversible: going back unpacks the slices into one row per text (a text in two slices keeps the first)."""
from __future__ import annotations

import numpy as np
from django.db import migrations, models

SLICE = 2048


def pack_rows(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    old = apps.get_model("model_runs", "CachedEmbedding")
    new = apps.get_model("model_runs", "EmbeddingSlice")
    for identity in old.objects.order_by().values_list("model_identity", flat=True).distinct():
        pending: dict[int, tuple[list[bytes], list[bytes]]] = {}
        rows = (old.objects.filter(model_identity=identity).order_by("pk")
                .values_list("text_hash", "dimensions", "vector"))
        for text_hash, dimensions, vector in rows.iterator(chunk_size=SLICE):
            digests, vectors = pending.setdefault(dimensions, ([], []))
            digests.append(bytes.fromhex(text_hash))
            vectors.append(bytes(vector))
            if len(digests) == SLICE:
                _write(new, identity, dimensions, *pending.pop(dimensions))
        for dimensions, (digests, vectors) in pending.items():
            _write(new, identity, dimensions, digests, vectors)


def _write(new, identity: str, dimensions: int, digests: list[bytes], vectors: list[bytes]) -> None:  # type: ignore[no-untyped-def]
    new.objects.create(model_identity=identity, dtype="float32", dimensions=dimensions, n_vectors=len(digests),
                       digests=b"".join(digests), vectors=b"".join(vectors))


def unpack_slices(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    old = apps.get_model("model_runs", "CachedEmbedding")
    new = apps.get_model("model_runs", "EmbeddingSlice")
    for row in new.objects.order_by("pk").iterator(chunk_size=16):
        vectors = np.frombuffer(bytes(row.vectors), dtype=np.dtype(row.dtype).newbyteorder("<"))
        vectors = vectors.reshape(row.n_vectors, row.dimensions).astype("<f4")
        digests = bytes(row.digests)
        old.objects.bulk_create(
            [old(model_identity=row.model_identity, text_hash=digests[32 * n:32 * n + 32].hex(),
                 dimensions=row.dimensions, vector=vectors[n].tobytes()) for n in range(row.n_vectors)],
            ignore_conflicts=True, batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("model_runs", "0007_model_runs_on_job_layer"),
    ]

    operations = [
        migrations.CreateModel(
            name="EmbeddingSlice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("model_identity", models.CharField(db_index=True, max_length=64)),
                ("dtype", models.CharField(help_text="float32 or float16, as the model gave the vectors.",
                                           max_length=8)),
                ("dimensions", models.PositiveIntegerField()),
                ("n_vectors", models.PositiveIntegerField()),
                ("digests", models.BinaryField(
                    help_text="sha256 of each text, 32 bytes each, in the vectors' order.")),
                ("vectors", models.BinaryField(
                    help_text="n_vectors × dimensions values of dtype, little-endian, row after row.")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.RunPython(pack_rows, unpack_slices),
        migrations.DeleteModel(name="CachedEmbedding"),
    ]
