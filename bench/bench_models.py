"""Model runs against bare sentence-transformers: throughput, the cached re-run, and N STS pairs end to end.

Why: a model run adds chunking, the embedding cache (hash, read, write), the database and the scoring around
`SentenceTransformer.encode`; it should keep ≥ 0.9× of bare encode's throughput on the same texts and batch
size, and a re-run on the same texts (a second task sharing them) should be ≥ 20× faster than the first run.

It builds an STS task of N synthetic pairs (2N distinct texts, seeded) in a throw-away SQLite database, then:
1. bare: SentenceTransformer.encode(all texts, batch_size=32), the very model object the run uses;
2. first run: run_models' in-process path (start_run + run_in_process): chunks, cache writes, scoring;
3. cached run: the same pairs as a second task: every vector comes from the cache.
Prints seconds, texts per second and the two ratios. CPU only; the shipped all-MiniLM-L6-v2.

Run: .venv/bin/python bench/bench_models.py [n_pairs, default 10000]
"""
from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
SCRATCH = tempfile.mkdtemp(prefix="bench-models-")
os.environ["DATABASE_URL"] = f"sqlite:///{SCRATCH}/bench.sqlite3"
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

WORDS = ("time person year way day thing man world life hand part child eye woman place work week case point "
         "government company number group problem fact river music garden window market doctor teacher city "
         "village train letter story history kitchen bread coffee summer winter morning evening mountain ocean "
         "forest animal bird horse dog cat red green blue quick slow happy quiet loud bright dark old new small "
         "large runs reads writes builds opens closes carries finds sees hears plays sings walks").split()


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add(" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14))).capitalize() + ".")
    return sorted(out)


def make_task(name: str, pairs: list[tuple[str, str, float]]):  # type: ignore[no-untyped-def]
    from tasks_app.core.kinds import content_digest
    from tasks_app.models import Item, ItemGold, Task

    task = Task.objects.create(name=name, kind="sts", language="eng-Latn")
    items = Item.objects.bulk_create([
        Item(task=task, uid=content_digest(name, str(n)), external_id=str(n), position=n,
             payload={"sentence1": a, "sentence2": b}) for n, (a, b, _) in enumerate(pairs)], batch_size=2000)
    ItemGold.objects.bulk_create([ItemGold(item=i, value=s) for i, (_, _, s) in zip(items, pairs, strict=True)],
                                 batch_size=2000)
    return task


def timed_run(task, model) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    from agreement.model_runs.execution import run_in_process, start_run

    start = time.perf_counter()
    run = run_in_process(start_run(task, model))
    return time.perf_counter() - start, run


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    call_command("migrate", verbosity=0)
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", "--batch-size", "32",
                 stdout=open(os.devnull, "w"))
    from agreement.model_runs.embedding import backend_of
    from agreement.model_runs.models import EmbeddingModel

    model = EmbeddingModel.objects.get(name="minilm")
    texts = sentences(2 * n, seed=1)
    rng = random.Random(2)
    pairs = [(texts[2 * i], texts[2 * i + 1], round(rng.uniform(0, 5), 1)) for i in range(n)]
    encoder = backend_of(model)
    encoder.model.encode(texts[:64], batch_size=32)  # warm-up: first-call allocations, thread pools

    start = time.perf_counter()
    encoder.model.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    bare = time.perf_counter() - start
    first, run = timed_run(make_task("bench first", pairs), model)
    cached, again = timed_run(make_task("bench cached", pairs), model)

    import torch

    print(f"STS pairs: {n} ({2 * n} distinct texts), batch size 32, torch threads: {torch.get_num_threads()}")
    print(f"bare SentenceTransformer.encode: {bare:8.2f} s  {2 * n / bare:8.1f} texts/s")
    print(f"model run, first (end to end):   {first:8.2f} s  {2 * n / first:8.1f} texts/s  "
          f"encoded {run.texts_encoded}, chunks {run.chunks_total}")
    print(f"model run, cached (second task): {cached:8.2f} s  encoded {again.texts_encoded}")
    print(f"throughput ratio run/bare: {bare / first:.3f}  (goal >= 0.9)")
    print(f"cached re-run speed-up:    {first / cached:.1f}x  (goal >= 20)")
    print(f"cosine_spearman vs random gold: {run.scores['gold']['cosine_spearman']:.4f} (same in both runs: "
          f"{run.scores['gold'] == again.scores['gold']})")


if __name__ == "__main__":
    main()
