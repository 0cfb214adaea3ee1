#!/usr/bin/env python
"""SAGE at scale: perturb N documents and score them for the classical metrics (Robustness + Sensitivity).

Per document: the 6 robustness perturbations (A.3) and the 18 sensitivity ones (A.4), then one similarity per
(original, perturbed) pair and the summary pair, through the same `run_study` code the command runs. The
documents are synthetic (seeded, W words from a 2,000-word vocabulary, sentences of 8-20 words), so the bench
needs no download. Prints wall and CPU seconds for perturbing and scoring (the machine is shared: CPU seconds
are the steadier figure) and documents per CPU second.

    python bench/bench_sage.py                    # 10,000 documents of 150 words, Levenshtein and Jaccard
    python bench/bench_sage.py --docs 1000 --words 400 --metrics jaccard
    python bench/bench_sage.py --docs 200 --models all-MiniLM-L6-v2 --metrics ""   # needs agreement.model_runs

`--models` names models of the registry (agreement.model_runs; the shipped MiniLM is registered on first use
in the configured database, e.g. `DATABASE_URL=sqlite:///var/bench.sqlite3` after `migrate`). Each
model is scored twice: the first pass encodes every text, the second reads the embedding cache.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agreement.sage import study as sage_study
from agreement.sage.baselines import SCORERS
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


def model_scorers(names: list[str]) -> list[sage_study.Scorer]:
    if importlib.util.find_spec("agreement.model_runs") is None:
        sys.exit("--models needs the model registry (agreement.model_runs), which is not installed here")
    os.environ.setdefault("DEBUG", "true")  # the embedded development settings; the defaults are production's
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hume.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from agreement.management.commands.sage import model_scorers as registry_scorers

    EmbeddingModel = importlib.import_module("agreement.model_runs.models").EmbeddingModel

    if "all-MiniLM-L6-v2" in names and not EmbeddingModel.objects.filter(name="all-MiniLM-L6-v2").exists():
        call_command("add_model", "all-MiniLM-L6-v2", "--backend", "sentence-transformers", "--shipped")
    return registry_scorers(names)


def score(scorer: sage_study.Scorer, study: Study, perturbed: sage_study.Perturbed, docs: int,
          perturb_cpu: float, label: str = "") -> None:
    start, cpu = time.perf_counter(), time.process_time()
    robustness, _ = sage_study.score_robustness(scorer, study, perturbed)
    sensitivity, _ = sage_study.score_sensitivity(scorer, study, perturbed)
    score_s, score_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{scorer.name}{label}: scoring {docs * 25} pairs {score_s:.1f} s wall, {score_cpu:.1f} s CPU; "
          f"perturb+score {perturb_cpu + score_cpu:.1f} s CPU, {docs / (perturb_cpu + score_cpu):.1f} docs per "
          f"CPU second (robustness {robustness:.3f}, sensitivity {sensitivity:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--metrics", default="levenshtein,jaccard")
    parser.add_argument("--models", default="", help="registry models, e.g. all-MiniLM-L6-v2")
    args = parser.parse_args()
    study = make_study(args.docs, args.words)
    start, cpu = time.perf_counter(), time.process_time()
    perturbed = sage_study.perturb_study(study, seed=0)
    perturb_s, perturb_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{args.docs} documents of {args.words} words, load {os.getloadavg()[0]:.1f}: perturbing (24 variants "
          f"each) {perturb_s:.1f} s wall, {perturb_cpu:.1f} s CPU, {args.docs / perturb_cpu:.0f} docs per CPU second")
    for name in filter(None, args.metrics.split(",")):
        score(SCORERS[name], study, perturbed, args.docs, perturb_cpu)
    for scorer in model_scorers([n for n in args.models.split(",") if n]) if args.models else []:
        score(scorer, study, perturbed, args.docs, perturb_cpu, " (first pass, encoding)")
        score(scorer, study, perturbed, args.docs, perturb_cpu, " (second pass, embedding cache)")


if __name__ == "__main__":
    main()
