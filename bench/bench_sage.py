#!/usr/bin/env python
"""SAGE at scale: perturb N documents and score them for a classical metric or a model of the registry.

Per document: the 6 robustness perturbations (A.3) and the 18 sensitivity ones (A.4), then one similarity per
(original, perturbed) pair and the summary pair (25 pairs a document), through the project's own SAGE code:
`agreement.sage.study.perturb_study` (perturb.py), `score_robustness` / `score_sensitivity` (categories.py),
the classical scorers of `agreement.sage.baselines`, and for models the registry's `similarity.embed` with its
embedding cache. The documents are synthetic (seeded, W words from a 2,000-word vocabulary, sentences of 8-20
words), so the bench needs no download and the repository holds no 10,000-document file. Prints wall and CPU
seconds, documents per second (wall and CPU: the machine is shared, CPU seconds are the steadier figure) and
the process's peak RSS after each step.

    python bench/bench_sage.py                                  # 10,000 documents of 150 words, Levenshtein
    python bench/bench_sage.py --metrics levenshtein,jaccard
    python bench/bench_sage.py --docs 1000 --words 30 --metrics "" --models all-MiniLM-L6-v2

`--models` names models of the registry; without DATABASE_URL the bench uses a throw-away SQLite database
(migrated, the shipped all-MiniLM-L6-v2 registered), so the cache starts empty. Each model is scored twice:
the first pass encodes every distinct text (the model is loaded and warmed up before the clock starts), the
second reads every vector back from the embedding cache.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's

from agreement.sage import study as sage_study
from agreement.sage.baselines import BASELINE_METRICS
from agreement.sage.datasets import Study


def document(rng: random.Random, vocabulary: list[str], n_words: int) -> str:
    words, sentences = 0, []
    while words < n_words:
        length = min(rng.randint(8, 20), n_words - words)
        sentence = [rng.choice(vocabulary) for _ in range(length)]
        sentences.append(" ".join(sentence).capitalize() + ".")
        words += length
    return " ".join(sentences)


def make_study(n_docs: int, n_words: int) -> Study:
    rng = random.Random(0)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                  for _ in range(2000)]
    docs = [{"id": str(i), "text": document(rng, vocabulary, n_words),
             "summary": document(rng, vocabulary, max(5, n_words // 10))} for i in range(n_docs)]
    return Study(robustness={"synthetic": docs}, sensitivity={"synthetic": [{"id": d["id"], "text": d["text"]}
                                                                             for d in docs]})


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def model_scorers(names: list[str], stand_in: float | None = None) -> list[sage_study.Scorer]:
    """The registry's models as SAGE scorers, each loaded and warmed up (load time printed, not counted)."""
    if importlib.util.find_spec("agreement.model_runs") is None:
        sys.exit("--models needs the model registry (agreement.model_runs), which is not installed here")
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='bench-sage-')}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from agreement.management.commands.sage import model_scorers as registry_scorers
    from agreement.model_runs.embedding import backend_of
    from agreement.model_runs.models import EmbeddingModel

    call_command("migrate", verbosity=0)
    if "all-MiniLM-L6-v2" in names and not EmbeddingModel.objects.filter(name="all-MiniLM-L6-v2").exists():
        call_command("add_model", "all-MiniLM-L6-v2", "--backend", "sentence-transformers", "--shipped",
                     stdout=open(os.devnull, "w"))
    for model in EmbeddingModel.objects.filter(name__in=names, backend="sentence-transformers"):
        if stand_in:
            from bench.stand_in import stand_in_for

            stand_in_for(model, stand_in)
            print(f"{model.name}: a stand-in encoder at {stand_in:.0f} texts/s (bench/stand_in.py)", flush=True)
            continue
        start = time.perf_counter()
        backend_of(model).encode(["warm up the model", "and its thread pools"])
        print(f"{model.name}: loaded and warmed up in {time.perf_counter() - start:.1f} s (not counted below)")
    return registry_scorers(names)


def cached_count() -> int:
    if "django" not in sys.modules or not importlib.util.find_spec("agreement.model_runs"):
        return 0
    from agreement.model_runs.models import EmbeddingSlice

    return sum(EmbeddingSlice.objects.values_list("n_vectors", flat=True))  # vectors cached, a slice holding many


def score(scorer: sage_study.Scorer, study: Study, perturbed: sage_study.Perturbed, docs: int,
          perturb_cpu: float, label: str = "") -> None:
    before = cached_count()
    if scorer.embed:
        from agreement.model_runs import stages

        stages.reset()
    start, cpu = time.perf_counter(), time.process_time()
    robustness, _ = sage_study.score_robustness(scorer, study, perturbed)
    sensitivity, _ = sage_study.score_sensitivity(scorer, study, perturbed)
    score_s, score_cpu = time.perf_counter() - start, time.process_time() - cpu
    encoded = cached_count() - before
    print(f"{scorer.name}{label}: scoring {docs * 25} pairs {score_s:.1f} s wall, {score_cpu:.1f} s CPU "
          f"({docs / score_s:.1f} docs/s wall, {docs / max(score_cpu, 1e-9):.1f} docs per CPU second"
          f"{f'; {encoded} texts encoded and cached' if scorer.embed else ''}); perturb+score "
          f"{perturb_cpu + score_cpu:.1f} s CPU, {docs / (perturb_cpu + score_cpu):.1f} docs per CPU second; "
          f"peak RSS {peak_rss_mb():.0f} MB (robustness {robustness:.3f}, sensitivity {sensitivity:.3f})", flush=True)
    if scorer.embed:
        print(f"{scorer.name}{label}: stages (encode = waiting for the encoder): {stages.breakdown()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--metrics", default="levenshtein")
    parser.add_argument("--models", default="", help="registry models, e.g. all-MiniLM-L6-v2")
    parser.add_argument("--stand-in", type=float, default=None, metavar="RATE",
                        help="time the app's work around encoding: a stand-in encoder at RATE texts/s replaces "
                             "each local model (bench/stand_in.py)")
    args = parser.parse_args()
    scorers = model_scorers([n for n in args.models.split(",") if n], args.stand_in) if args.models else []
    study = make_study(args.docs, args.words)
    start, cpu = time.perf_counter(), time.process_time()
    perturbed = sage_study.perturb_study(study, seed=0)
    perturb_s, perturb_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{args.docs} documents of {args.words} words, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: "
          f"perturbing (24 variants each) {perturb_s:.1f} s wall, {perturb_cpu:.1f} s CPU, "
          f"{args.docs / perturb_s:.0f} docs/s wall, {args.docs / perturb_cpu:.0f} docs per CPU second; "
          f"peak RSS {peak_rss_mb():.0f} MB", flush=True)
    for name in filter(None, args.metrics.split(",")):
        score(BASELINE_METRICS[name], study, perturbed, args.docs, perturb_cpu)
    for scorer in scorers:
        score(scorer, study, perturbed, args.docs, perturb_cpu, " (first pass, encoding)")
        score(scorer, study, perturbed, args.docs, perturb_cpu, " (second pass, embedding cache)")


if __name__ == "__main__":
    main()
