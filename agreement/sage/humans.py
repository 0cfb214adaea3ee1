"""Humans on SAGE: the perturbed pairs become an STS task, and the people's ratings a row of Table 1.

The paper could only score models and metrics. Here the very pairs that Robustness (A.3: original with
each of its 6 perturbations and with its summary) and Sensitivity (A.4: original with each of its 18
needles and removals) compare are written as STS items (`sentence1` = original, `sentence2` = the other
text) in the project's import format; annotators rate them in the ordinary loop; their mean rating per pair,
mapped from the task's scale to 0-1, is the human "similarity" that the same category formulas read.
Clustering, retrieval (hundreds of thousands of pairs) and human preference (the gold itself is human) stay
with models and metrics.

Pure: the ratings come in as a mapping; `agreement.management.commands.sage` reads them from the database.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agreement.sage.datasets import Study
from agreement.sage.study import NotRated, Scorer, perturb_study
from measures.sage import perturb

HUMAN_CATEGORIES = ("robustness", "sensitivity")


def sts_items(study: Study, seed: int) -> list[dict[str, Any]]:
    """The STS items (no gold) for the study's robustness and sensitivity pairs, one per distinct pair.

    Ids read `category/dataset/document/variant`. A pair that occurs twice (a one-sentence text whose shuffle
    is itself, or one document in two datasets) is asked once: the import refuses duplicate content.
    """
    perturbed = perturb_study(study, seed)
    items: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()

    def add(ident: str, original: str, other: str) -> None:
        if (original, other) not in seen and original != other:
            seen.add((original, other))
            items.append({"id": ident, "sentence1": original, "sentence2": other})

    variants = (*perturb.SUPERFICIAL, *perturb.SEMANTIC)
    for name, docs in study.robustness.items():
        for doc, texts in zip(docs, perturbed.robustness[name], strict=True):
            add(f"robustness/{name}/{doc['id']}/summary", doc["text"], doc["summary"])
            for variant, text in zip(variants, texts, strict=True):
                add(f"robustness/{name}/{doc['id']}/{variant.name}", doc["text"], text)
    for name, docs in study.sensitivity.items():
        for all_variants, texts in ((perturb.SENSITIVITY_INSERTION, perturbed.insertion[name]),
                                    (perturb.SENSITIVITY_REMOVAL, perturbed.removal[name])):
            for doc, row in zip(docs, texts, strict=True):
                for variant, text in zip(all_variants, row, strict=True):
                    add(f"sensitivity/{name}/{doc['id']}/{variant.name}", doc["text"], text)
    return items


def human_scorer(items: Sequence[Mapping[str, Any]], mean_ratings: Mapping[str, float],
                 scale: tuple[float, float], name: str = "Humans") -> Scorer:
    """A scorer that answers each pair with the people's mean rating, mapped from `scale` to 0-1.

    `items` are the STS items the task was imported from (`sts_items`), `mean_ratings` the mean rating per
    item id. An identical pair scores 1 (it was never asked). A pair nobody rated raises NotRated, so the
    category shows as not rated rather than as a made-up number.
    """
    low, high = scale
    if not high > low:
        raise ValueError(f"the rating scale {scale} is empty")
    by_pair = {(i["sentence1"], i["sentence2"]): (mean_ratings[i["id"]] - low) / (high - low)
               for i in items if i["id"] in mean_ratings}
    missing_total = len(items) - len(by_pair)

    def similarity(a_texts: Sequence[str], b_texts: Sequence[str]) -> np.ndarray:
        out, missing = [], 0
        for a, b in zip(a_texts, b_texts, strict=True):
            value = 1.0 if a == b else by_pair.get((a, b))
            missing += value is None
            out.append(value)
        if missing:
            raise NotRated(f"{missing} of these pairs have no human rating yet "
                           f"({missing_total} of the task's {len(items)} items unrated)")
        return np.asarray(out, dtype=float)

    return Scorer(name, similarity, group="human", categories=HUMAN_CATEGORIES)
