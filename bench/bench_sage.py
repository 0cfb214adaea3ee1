#!/usr/bin/env python
"""SAGE at scale: perturb N documents and score them for the classical metrics (Robustness + Sensitivity).

Per document: the 6 robustness perturbations (A.3) and the 18 sensitivity ones (A.4), then one similarity per
(original, perturbed) pair and the summary pair, through the same `run_study` code the command runs. The
documents are synthetic (seeded, W words from a 2,000-word vocabulary, sentences of 8-20 words), so the bench
needs no download. Prints wall and CPU seconds for perturbing and scoring (the machine is shared: CPU seconds
are the steadier figure) and documents per CPU second.

    python bench/bench_sage.py                    # 10,000 documents of 150 words, Levenshtein and Jaccard
    python bench/bench_sage.py --docs 1000 --words 400 --metrics jaccard

The MiniLM half of the issue's bench (embeddings cached) waits for the model registry (agreement.model_runs).
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--metrics", default="levenshtein,jaccard")
    args = parser.parse_args()
    study = make_study(args.docs, args.words)
    start, cpu = time.perf_counter(), time.process_time()
    perturbed = sage_study.perturb_study(study, seed=0)
    perturb_s, perturb_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{args.docs} documents of {args.words} words, load {os.getloadavg()[0]:.1f}: perturbing (24 variants "
          f"each) {perturb_s:.1f} s wall, {perturb_cpu:.1f} s CPU, {args.docs / perturb_cpu:.0f} docs per CPU second")
    for name in args.metrics.split(","):
        scorer = SCORERS[name]
        start, cpu = time.perf_counter(), time.process_time()
        robustness, _ = sage_study.score_robustness(scorer, study, perturbed)
        sensitivity, _ = sage_study.score_sensitivity(scorer, study, perturbed)
        score_s, score_cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"{scorer.name}: scoring {args.docs * 25} pairs {score_s:.1f} s wall, {score_cpu:.1f} s CPU; "
              f"perturb+score {perturb_cpu + score_cpu:.1f} s CPU, "
              f"{args.docs / (perturb_cpu + score_cpu):.0f} docs per CPU second "
              f"(robustness {robustness:.3f}, sensitivity {sensitivity:.3f})")


if __name__ == "__main__":
    main()
