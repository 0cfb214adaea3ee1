#!/usr/bin/env python
"""Model work on the worker's device (MODEL_DEVICE, default auto: a CUDA GPU when torch sees one).

Four parts; each line is printed (and flushed) as soon as its figure exists, so a run cut off by a timeout
still reports what it finished. After each run, the seconds its thread spent in each stage, wall and (in
parentheses) that thread's CPU (agreement/model_runs/stages.py: start, read, lookup, encode = waiting for the
encoder, cache write, chunk done, score read, evaluate, significance, predictions write; retrieval: read, rank,
entries write, ranks).

1. encode: an STS task of N pairs (2N distinct synthetic texts, seeded): bare `SentenceTransformer.encode` of
   all texts on the device at the device's batch size, then the app's encoder alone (tokenising overlapped
   with the device), then the app's model run of the same texts end to end (start_run + run_in_process:
   chunks, cache lookups and writes, scoring), with run/bare and bare/run. Goal: bare/run >= 0.9.
2. search: exact top-100 of Q queries over D random 384-d vectors with `exact_top_k` on the device (host
   arrays in, host arrays out: transfers counted), against bare torch (matmul + topk on device-resident
   tensors, no transfer, ties unordered).
3. retrieval: an embedding run of a collection of D documents and Q queries end to end, as
   `manage.py embedding_run` does it (documents read from the database, encoded, cached, ranked on the device,
   entries stored). Documents are synthetic sentences of 8-14 words. `--stand-in`: the encoder of part 4.
4. pipeline (no GPU needed): the model run of part 1 with a stand-in encoder (bench/stand_in.py) that takes
   1/RATE s a text and releases the GIL as a GPU does (default RATE 19,000: the H200's bare rate), so the
   app's own work around encoding can be measured and improved on any machine.

MODEL_RUN_CHUNK_TEXTS sets the chunks of parts 1 and 4; a run in one process claims them in batches sized by
the encoder's pace (docs/models-in-app.md, "The rest of the run's CPU work"), so even the default 512 makes
a few claims a run.
SAGE's first pass on the device is bench/bench_sage.py with `--models all-MiniLM-L6-v2` (it uses the same
MODEL_DEVICE; `--stand-in RATE` there too). A throw-away SQLite database; the shipped all-MiniLM-L6-v2 (or
HUME_DATA_DIR's copy).

    MODEL_RUN_CHUNK_TEXTS=65536 python bench/bench_device.py encode --pairs 20000
    python bench/bench_device.py search --docs 5000000 --queries 1000
    python bench/bench_device.py retrieval --docs 1000000 --queries 1000
    python bench/bench_device.py retrieval --docs 50000 --stand-in                 # no GPU needed
    MODEL_RUN_CHUNK_TEXTS=65536 python bench/bench_device.py pipeline --pairs 20000 --rate 19000
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
SCRATCH = tempfile.mkdtemp(prefix="bench-device-")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{SCRATCH}/bench.sqlite3")
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from django.core.management import call_command  # noqa: E402

from bench.bench_models import make_task, sentences  # noqa: E402
from bench.stand_in import stand_in_for  # noqa: E402


def synchronise() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def card() -> str:
    if torch.cuda.is_available():
        return f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {os.cpu_count()} CPU cores"
    return f"CPU only, torch {torch.__version__}, {torch.get_num_threads()} threads"


def registered_minilm():  # type: ignore[no-untyped-def]
    from agreement.model_runs.models import EmbeddingModel

    call_command("migrate", verbosity=0)
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped",
                 stdout=open(os.devnull, "w"))
    return EmbeddingModel.objects.get(name="minilm")


def part_encode(pairs: int) -> None:
    from django.conf import settings

    from agreement.model_runs import stages
    from agreement.model_runs.backends import encode_overlapped
    from agreement.model_runs.embedding import backend_of
    from agreement.model_runs.execution import run_in_process, start_run

    model = registered_minilm()
    encoder = backend_of(model)
    texts = sentences(2 * pairs, seed=1)
    rng = random.Random(2)
    gold = [(texts[2 * i], texts[2 * i + 1], round(rng.uniform(0, 5), 1)) for i in range(pairs)]
    batch = encoder.batch_size
    encoder.model.encode(texts[:2048], batch_size=batch)  # warm-up: kernels, allocator, thread pools
    synchronise()

    n = 2 * pairs
    print(f"[encode] {card()}; device {encoder.device}, batch {batch}, half precision "
          f"{encoder.placement.half_precision}; {pairs} STS pairs ({n} texts), chunks of "
          f"{settings.MODEL_RUN_CHUNK_TEXTS} texts", flush=True)
    start = time.perf_counter()
    encoder.model.encode(texts, batch_size=batch, convert_to_numpy=True, show_progress_bar=False)
    bare = time.perf_counter() - start
    print(f"[encode] bare SentenceTransformer.encode: {bare:7.2f} s {n / bare:9.0f} texts/s", flush=True)
    start = time.perf_counter()
    encode_overlapped(encoder.model, texts, batch)
    overlapped = time.perf_counter() - start
    print(f"[encode] app encoder (overlapped):        {overlapped:7.2f} s {n / overlapped:9.0f} texts/s  "
          f"bare/app {bare / overlapped:.2f}", flush=True)
    task = make_task("bench device", gold)
    stages.reset()
    start = time.perf_counter()
    with stages.timed("start"):
        run = start_run(task, model)
    run = run_in_process(run)
    whole = time.perf_counter() - start
    print(f"[encode] model run end to end:            {whole:7.2f} s {n / whole:9.0f} texts/s  "
          f"run/bare {whole / bare:.2f}, bare/run {bare / whole:.2f} (goal >= 0.9); run on {run.device}, "
          f"{run.chunks_total} chunks, encoded {run.texts_encoded}, status {run.status}", flush=True)
    print(f"[encode] stages (seconds the run's thread spent; encode = waiting for the encoder): "
          f"{stages.breakdown()}", flush=True)


def part_search(docs: int, queries: int, k: int = 100) -> None:
    from agreement.model_runs.device import worker_device
    from measures.retrieval.cosine_top_k import l2_normalise
    from measures.retrieval.device_search import exact_top_k

    device = worker_device()
    generator = torch.Generator().manual_seed(0)
    doc_vecs = l2_normalise(torch.randn(docs, 384, generator=generator).numpy())
    query_vecs = l2_normalise(torch.randn(queries, 384, generator=generator).numpy())
    exact_top_k(query_vecs[:8], doc_vecs[:100_000], k, device=device, normalised=True)  # warm-up
    synchronise()
    start = time.perf_counter()
    idx, _ = exact_top_k(query_vecs, doc_vecs, k, device=device, normalised=True)
    ours = time.perf_counter() - start
    on_device_docs = torch.from_numpy(doc_vecs).to(device)
    on_device_queries = torch.from_numpy(query_vecs).to(device)
    synchronise()
    start = time.perf_counter()
    bare = [torch.topk(on_device_queries[s:s + 1024] @ on_device_docs.T, k, dim=1).indices
            for s in range(0, queries, 1024)]
    synchronise()
    bare_s = time.perf_counter() - start
    differ = int((np.sort(idx, axis=1) != np.sort(torch.cat(bare).cpu().numpy(), axis=1)).any(axis=1).sum())
    print(f"[search] {card()}; device {device}: top-{k} of {queries} queries over {docs} documents: "
          f"exact_top_k {ours:.2f} s (host arrays in and out), bare torch matmul+topk {bare_s:.3f} s "
          f"(device-resident, unordered ties); queries whose top-{k} set differs: {differ} (a near-tie at "
          f"the K-th place that the two matrix products round apart)", flush=True)


def part_retrieval(docs: int, queries: int, rate: float | None = None, k: int = 100) -> None:
    from agreement.model_runs import stages
    from agreement.model_runs.device import worker_device
    from agreement.model_runs.embedding import embed
    from agreement.retrieval.models import Collection, Document, Query, Subset
    from agreement.retrieval.system_rankings import embedding_ranking

    model = registered_minilm()
    if rate:
        stand_in_for(model, rate)
    texts = sentences(docs + queries, seed=3)
    start = time.perf_counter()
    collection = Collection.objects.create(name="bench")
    subset = Subset.objects.create(collection=collection, name="default", language="eng-Latn")
    Document.objects.bulk_create([Document(subset=subset, doc_id=f"d{n}", text=t, line=n + 1)
                                  for n, t in enumerate(texts[:docs])], batch_size=5000)
    Query.objects.bulk_create([Query(subset=subset, query_id=f"q{n}", text=t, line=n + 1)
                               for n, t in enumerate(texts[docs:])], batch_size=5000)
    stored = time.perf_counter() - start
    encoder = f"stand-in encoder at {rate:.0f} texts/s ({(docs + queries) / rate:.2f} s alone)" if rate else card()
    print(f"[retrieval] {encoder}; {docs} documents, {queries} queries (collection stored in {stored:.1f} s)",
          flush=True)

    def vectors(batch: list[str]) -> np.ndarray:
        return embed(model, batch)

    device = worker_device()
    stages.reset()
    start, cpu = time.perf_counter(), time.process_time()
    ranking = embedding_ranking(collection, "minilm", vectors, k=k, batch=65536, device=device)
    whole, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"[retrieval] embedding ranking end to end {whole:.1f} s ({(docs + queries) / whole:.0f} texts/s: read, "
          f"encode, cache, rank top-{k}, store {ranking.entries.count()} entries) on {ranking.device}"
          + (f"; run/stand-in {whole * rate / (docs + queries):.2f}" if rate else "")
          + f"; {cpu:.1f} CPU s, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"[retrieval] stages: {stages.breakdown()}", flush=True)


def part_pipeline(pairs: int, rate: float) -> None:
    from django.conf import settings

    from agreement.model_runs import stages
    from agreement.model_runs.execution import run_in_process, start_run

    model = registered_minilm()
    stand_in_for(model, rate)
    texts = sentences(2 * pairs, seed=1)
    rng = random.Random(2)
    task = make_task("bench pipeline", [(texts[2 * i], texts[2 * i + 1], round(rng.uniform(0, 5), 1))
                                        for i in range(pairs)])
    stages.reset()
    start, cpu = time.perf_counter(), time.process_time()
    with stages.timed("start"):
        run = start_run(task, model)
    run = run_in_process(run)
    whole, cpu = time.perf_counter() - start, time.process_time() - cpu
    alone = 2 * pairs / rate
    print(f"[pipeline] {os.cpu_count()} CPU cores; {pairs} STS pairs ({2 * pairs} texts), chunks of "
          f"{settings.MODEL_RUN_CHUNK_TEXTS} texts ({run.chunks_total}), stand-in encoder at {rate:.0f} texts/s "
          f"({alone:.2f} s alone): model run {whole:.2f} s, ratio run/stand-in {whole / alone:.2f}, "
          f"stand-in/run {alone / whole:.2f} (goal >= 0.9), status {run.status}; {cpu:.2f} CPU s (all threads: "
          f"the steadier figure on a shared machine), load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"[pipeline] stages (seconds the run's thread spent; encode = waiting for the encoder): "
          f"{stages.breakdown()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["encode", "search", "retrieval", "pipeline"])
    parser.add_argument("--rate", type=float, default=19_000, help="pipeline: the stand-in's texts per second")
    parser.add_argument("--stand-in", action="store_true",
                        help="retrieval: the stand-in encoder of pipeline (at --rate) instead of the model")
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1_000)
    args = parser.parse_args()
    if args.part == "encode":
        part_encode(args.pairs)
    elif args.part == "pipeline":
        part_pipeline(args.pairs, args.rate)
    elif args.part == "search":
        part_search(args.docs, args.queries)
    else:
        part_retrieval(args.docs, args.queries, args.rate if args.stand_in else None)


if __name__ == "__main__":
    main()
