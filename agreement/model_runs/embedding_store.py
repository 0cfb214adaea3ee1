"""The embedding cache's store: vectors kept a slice at a time, as the model encoded them (issue 37).

One row per encoded slice (`EmbeddingSlice`): the model identity, the vectors packed as one array (float32 or
float16, as the model gave them; little-endian, row after row) and the sha256 digests of the slice's texts
packed in the same order (32 bytes a text). A slice is written with one INSERT (one transaction), read back
with one SELECT: a row per text cost about 75 µs of SQLite's time a text (docs/models-in-app.md), more than a
GPU takes to encode it.

The index from a text's digest to (slice, offset) is the slices' digest columns, read once per process: for
each identity a few sorted arrays (first 8 bytes of the digest as the key, the full digest beside it to
confirm a match), each embed call asking only for the ids of the identity's slices (one query) and reading the
digests of slices it has not seen (another). Slices are never changed once written, so a process's index is
never wrong, only behind: a slice written since by another worker is found at the next call, one deleted
(`prune`) reads back as nothing and its texts are encoded again. A text may sit in two slices (two workers
encoding it at once): either copy is its vector.

Writing can be turned off for a pass (`writes_off`, the commands' `--no-cache`): the vectors are computed and
used, nothing is stored. A model's slices are deleted with `prune` (`manage.py prune_embedding_cache`).
"""
from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction

DIGEST_BYTES = 32
STORED_DTYPES = {"float32": np.dtype("<f4"), "float16": np.dtype("<f2")}
READ_SLICES_BYTES = 64 * 2**20  # decoded slices kept for the next lookups (a run's scoring reads each once)

_writing: contextvars.ContextVar[bool] = contextvars.ContextVar("embedding_cache_writes", default=True)


@contextmanager
def writes_off() -> Iterator[None]:
    """Inside this block nothing is written to the cache (what is cached is still read): a first pass whose
    vectors are used once, `run_models --wait --no-cache`, `embedding_run --no-cache`, `sage --no-cache`."""
    token = _writing.set(False)
    try:
        yield
    finally:
        _writing.reset(token)


def writing() -> bool:
    return _writing.get()


def keys_of(digests: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(m,) uint64 keys (a digest's first 8 bytes) and (m, 32) uint8 digests of raw sha256 digests."""
    packed = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, DIGEST_BYTES)
    return packed[:, :8].copy().view(np.uint64).reshape(-1), packed


@dataclass
class Segment:
    """Sorted part of an identity's index: key → (slice id, offset), the full digest kept to confirm."""

    keys: np.ndarray
    digests: np.ndarray
    slices: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of_slice(cls, slice_id: int, digest_column: bytes) -> Segment:
        keys, digests = keys_of([digest_column]) if digest_column else (np.zeros(0, np.uint64),
                                                                         np.zeros((0, DIGEST_BYTES), np.uint8))
        n = len(keys)
        return cls(keys, digests, np.full(n, slice_id, dtype=np.int64), np.arange(n, dtype=np.int64)).sorted()

    def sorted(self) -> Segment:
        """By key; a stable sort, so equal keys keep their order (the older slice first after a merge)."""
        order = np.argsort(self.keys, kind="stable")
        return Segment(self.keys[order], self.digests[order], self.slices[order], self.offsets[order])

    def merged(self, newer: Segment) -> Segment:
        return Segment(np.concatenate([self.keys, newer.keys]), np.concatenate([self.digests, newer.digests]),
                       np.concatenate([self.slices, newer.slices]),
                       np.concatenate([self.offsets, newer.offsets])).sorted()

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class IdentityIndex:
    """Where each cached text of one model identity lies: sorted segments, merged as they grow (each merge at
    least doubles a segment, so a million texts are sorted in about twenty segments' merges, not once a slice)."""

    slice_ids: set[int] = field(default_factory=set)
    segments: list[Segment] = field(default_factory=list)

    def add(self, slice_id: int, digest_column: bytes) -> None:
        if slice_id in self.slice_ids:
            return
        self.slice_ids.add(slice_id)
        self.segments.append(Segment.of_slice(slice_id, digest_column))
        while len(self.segments) > 1 and len(self.segments[-2]) <= 2 * len(self.segments[-1]):
            last = self.segments.pop()
            self.segments[-1] = self.segments[-1].merged(last)

    def find(self, keys: np.ndarray, digests: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(slice id, offset) per wanted text; slice id -1 where the index holds none."""
        slices = np.full(len(keys), -1, dtype=np.int64)
        offsets = np.zeros(len(keys), dtype=np.int64)
        for segment in self.segments:
            if not len(segment):
                continue
            pos = np.minimum(np.searchsorted(segment.keys, keys), len(segment) - 1)
            hit = (slices < 0) & (segment.keys[pos] == keys)
            hit[hit] = (segment.digests[pos[hit]] == digests[hit]).all(axis=1)  # a key shared by two texts: a miss
            slices[hit], offsets[hit] = segment.slices[pos[hit]], segment.offsets[pos[hit]]
        return slices, offsets


_indexes: dict[str, IdentityIndex] = {}
# (slice id, identity) → its digests and vectors, most recently read last
_read: OrderedDict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = OrderedDict()


def index_of(identity: str) -> IdentityIndex:
    """The identity's index, brought up to date: one query for its slice ids, one for the digests of those this
    process has not seen (none when nothing changed); rebuilt when a slice it knew was deleted."""
    from agreement.model_runs.models import EmbeddingSlice

    index = _indexes.setdefault(identity, IdentityIndex())
    ids = set(EmbeddingSlice.objects.filter(model_identity=identity).values_list("id", flat=True))
    if index.slice_ids - ids:
        index = _indexes[identity] = IdentityIndex()
    new = sorted(ids - index.slice_ids)
    if new:
        for slice_id, column in (EmbeddingSlice.objects.filter(pk__in=new).order_by("pk")
                                 .values_list("id", "digests")):
            index.add(slice_id, bytes(column))
    return index


def lookup(identity: str, digests: Sequence[bytes], index: IdentityIndex | None = None) -> dict[bytes, np.ndarray]:
    """{digest: float32 vector} of the texts the identity's slices hold; one query per slice read (a slice read
    lately is not read again). Each hit is confirmed against the digest stored in the slice itself, so an index
    behind the database (a slice deleted, an id reused after a rollback) can only miss, never answer wrongly.
    index: one brought up to date in this call already (index_of)."""
    if not digests:
        return {}
    index = index or index_of(identity)
    keys, packed = keys_of(digests)
    slices, offsets = index.find(keys, packed)
    found: dict[bytes, np.ndarray] = {}
    for slice_id in np.unique(slices[slices >= 0]).tolist():
        stored = read_slice(slice_id, identity)
        if stored is None:  # deleted since the index read it: its texts are encoded again
            continue
        stored_digests, vectors = stored
        rows = np.flatnonzero(slices == slice_id)
        rows = rows[(stored_digests[offsets[rows]] == packed[rows]).all(axis=1)]
        block = vectors[offsets[rows]].astype(np.float32, copy=False)
        found.update(zip((digests[r] for r in rows.tolist()), block, strict=True))
    return found


def read_slice(slice_id: int, identity: str) -> tuple[np.ndarray, np.ndarray] | None:
    """((n, 32) digests, (n, d) vectors in the dtype stored) of one slice of the identity, or None when there is
    no such slice; one SELECT (none for a slice read lately)."""
    from agreement.model_runs.models import EmbeddingSlice

    if (slice_id, identity) in _read:
        _read.move_to_end((slice_id, identity))
        return _read[(slice_id, identity)]
    row = (EmbeddingSlice.objects.filter(pk=slice_id, model_identity=identity)
           .values_list("dtype", "dimensions", "n_vectors", "digests", "vectors").first())
    if row is None:
        return None
    dtype, dimensions, n_vectors, digest_column, blob = row
    stored = (np.frombuffer(bytes(digest_column), dtype=np.uint8).reshape(n_vectors, DIGEST_BYTES),
              np.frombuffer(bytes(blob), dtype=STORED_DTYPES[dtype]).reshape(n_vectors, dimensions))
    _read[(slice_id, identity)] = stored
    while sum(v.nbytes for _, v in _read.values()) > READ_SLICES_BYTES and len(_read) > 1:
        _read.popitem(last=False)
    return stored


def store(identity: str, digests: Sequence[bytes], vectors: np.ndarray) -> int | None:
    """Write one slice (one INSERT, its own transaction) and add it to this process's index; its id, or None
    when writes are off. Vectors are kept as float16 when the model gave float16, else as float32."""
    if not writing() or not len(digests):
        return None
    if len(digests) != len(vectors) or vectors.ndim != 2:
        raise ValueError(f"{len(digests)} texts against vectors of shape {vectors.shape}")
    dtype = "float16" if vectors.dtype == np.float16 else "float32"
    packed = np.ascontiguousarray(vectors, dtype=STORED_DTYPES[dtype])
    column = b"".join(digests)
    slice_id = insert_slice(identity, dtype, packed, column)
    _indexes.setdefault(identity, IdentityIndex()).add(slice_id, column)
    return slice_id


def insert_slice(identity: str, dtype: str, packed: np.ndarray, column: bytes) -> int:
    """One INSERT … RETURNING id in its own transaction (PostgreSQL, and SQLite since 3.35). It goes to the
    driver's cursor under Django's, so a DEBUG process does not log it: Django's SQLite backend writes a
    logged statement's blobs out as hexadecimal text, megabytes a slice, which cost more than the insert.
    The vectors are handed to the driver as a view of the array, not copied into bytes first. On PostgreSQL
    the statement is bound on the server with the two blobs sent in binary (psycopg's `%b`): Django's
    client-side binding writes a bytea into the statement as hexadecimal text, twice its size, which the
    client spent more CPU encoding, and the server more time decoding, than on the row itself."""
    from django.db import connection
    from django.utils import timezone

    from agreement.model_runs.models import EmbeddingSlice

    quote = connection.ops.quote_name
    columns = ("model_identity", "dtype", "dimensions", "n_vectors", "digests", "vectors", "created_at")
    postgresql = connection.vendor == "postgresql"
    marks = ["%s", "%s", "%s", "%s", "%b", "%b", "%s"] if postgresql else ["%s"] * len(columns)
    sql = (f"INSERT INTO {quote(EmbeddingSlice._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
           f"VALUES ({', '.join(marks)}) RETURNING {quote('id')}")
    params = (identity, dtype, packed.shape[1], packed.shape[0], column, memoryview(packed).cast("B"),
              connection.ops.adapt_datetimefield_value(timezone.now()))
    with transaction.atomic(), connection.cursor() as cursor:
        if postgresql:
            import psycopg

            with psycopg.Cursor(connection.connection) as bound:  # server-side binding: binary parameters
                bound.execute(sql, params)
                return int(bound.fetchone()[0])
        cursor.cursor.execute(sql, params)
        return int(cursor.cursor.fetchone()[0])


def prune(identities: Sequence[str]) -> int:
    """Delete every slice of these model identities; the number of slices deleted."""
    from agreement.model_runs.models import EmbeddingSlice

    deleted, _ = EmbeddingSlice.objects.filter(model_identity__in=list(identities)).delete()
    for identity in identities:
        _indexes.pop(identity, None)
    _read.clear()
    return deleted
