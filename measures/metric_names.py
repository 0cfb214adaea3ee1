"""Metric keys in words: one label and a one-line definition per key a report can emit.

Why one registry: the report page, the results pages and docs/metrics.md must call `fleiss_kappa` the same
thing ("Fleiss' κ") and explain it the same way; a test checks that every key a report emits has an entry
and that the glossary lists every entry. Pure Python (no Django).

A key is looked up in its section, because the same key can mean two things: `pearson_mean` among
annotators is the mean pairwise Pearson r, against gold (Likert) the mean of the axes' r. Keys with a cut-off
(`ndcg_at_10`) or a Likert axis (`krippendorff_alpha_overall`) are resolved from their base entry.
"""
from __future__ import annotations

import re
from typing import Literal, NamedTuple

Section = Literal["agreement", "gold", "ci"]


class Name(NamedTuple):
    label: str
    definition: str


AGREEMENT: dict[str, Name] = {
    "fleiss_kappa": Name("Fleiss' κ", "Chance-corrected agreement of several annotators on labels "
                         "(Fleiss 1971): 1 = perfect, 0 = what chance gives."),
    "krippendorff_alpha": Name("Krippendorff's α", "Chance-corrected agreement on every pairable answer, "
                               "any number of annotators, missing answers allowed (nominal, interval or ordinal)."),
    "cohen_kappa_mean": Name("mean pairwise Cohen's κ", "Cohen's κ of each annotator pair on the items both "
                             "answered, averaged over the pairs that share at least the minimum number of items."),
    "percent_agreement": Name("percent agreement", "Share of agreeing annotator pairs per item, averaged over "
                              "items; not corrected for chance."),
    "ari_mean": Name("mean pairwise ARI", "Adjusted Rand index between two annotators' partitions of the same "
                     "set, averaged over annotator pairs and sets: 1 = same clusters, 0 = chance."),
    "spearman_mean": Name("mean pairwise Spearman ρ", "Spearman rank correlation between two annotators' "
                          "ratings on the items both rated, averaged over annotator pairs."),
    "pearson_mean": Name("mean pairwise Pearson r", "Pearson correlation between two annotators' ratings on the "
                         "items both rated, averaged over annotator pairs."),
    "kendall_mean": Name("mean pairwise Kendall τ", "Kendall rank correlation (τ-b) between two annotators' "
                         "ratings on the items both rated, averaged over annotator pairs."),
    "gwet_ac1": Name("Gwet's AC1", "Chance-corrected agreement on labels whose chance term stays small when one "
                     "label dominates (Gwet 2014), any number of annotators, missing answers allowed; SE and 95% CI "
                     "in agreement_intervals."),
    "gwet_ac2_ordinal": Name("Gwet's AC2 (ordinal weights)", "Gwet's AC1 with partial credit for near answers on "
                             "a scale, weighted by rank distance only (Gwet 2014, ordinal weights)."),
    "gwet_ac2_linear": Name("Gwet's AC2 (linear weights)", "Gwet's AC1 with partial credit 1 − |x − y| / range "
                            "for two answers x, y on the scale."),
    "gwet_ac2_quadratic": Name("Gwet's AC2 (quadratic weights)", "Gwet's AC1 with partial credit "
                               "1 − (x − y)² / range² for two answers x, y on the scale."),
}

GOLD: dict[str, Name] = {
    "accuracy": Name("accuracy", "Share of items whose answer equals the gold label."),
    "f1_macro": Name("macro F1", "F1 (harmonic mean of precision and recall) per label, averaged with equal "
                     "weight per label."),
    "f1_weighted": Name("weighted F1", "F1 per label, averaged with each label weighted by its gold count."),
    "f1": Name("F1", "Macro F1: F1 per choice (A, B, tie), averaged with equal weight."),
    "precision": Name("precision", "Macro precision: per choice, the share of answers of that choice that gold "
                      "agrees with, averaged over choices."),
    "recall": Name("recall", "Macro recall: per choice, the share of gold answers of that choice that were "
                   "given, averaged over choices."),
    "v_measure": Name("V-measure", "Harmonic mean of homogeneity and completeness of the clusters against the "
                      "gold clusters (MTEB's clustering score)."),
    "ari": Name("ARI", "Adjusted Rand index of the clusters against the gold clusters: 1 = the same, 0 = chance."),
    "ami": Name("AMI", "Adjusted mutual information of the clusters against the gold clusters: 1 = the same, "
                "0 = chance."),
    "map": Name("MAP", "Mean average precision: per query, the precision at each relevant candidate in the "
                "ranking, averaged; then averaged over queries (MTEB's reranking score)."),
    "map_at_k": Name("MAP@{k}", "Mean average precision over the top {k} of each ranking (trec_eval's map_cut; "
                     "map_at_1000 is MTEB 2.x's reranking score)."),
    "mrr_at_k": Name("MRR@{k}", "Mean reciprocal rank: 1 / the rank of the first relevant candidate within the "
                     "top {k}, averaged over queries."),
    "ndcg_at_k": Name("nDCG@{k}", "Normalised discounted cumulative gain of the top {k}: each document's gain "
                      "divided by log2(rank + 1), over the best possible sum; averaged over queries."),
    "recall_at_k": Name("Recall@{k}", "Share of a query's relevant documents (gold grade at or above the threshold) "
                        "found in the top {k}, averaged over queries."),
    "spearman": Name("Spearman ρ", "Spearman rank correlation of the ratings with the gold scores."),
    "pearson": Name("Pearson r", "Pearson correlation of the ratings with the gold scores."),
    "kendall": Name("Kendall τ", "Kendall rank correlation (τ-b) of the ratings with the gold scores."),
    "pearson_mean": Name("mean Pearson r over axes", "Pearson r against gold on each Likert axis, averaged over "
                         "the axes."),
    "sage": Name("SAGE score", "SAGE's mapping of Pearson r to 0..1: 0.5 · (r + 1)."),
    "sage_mean": Name("mean SAGE score", "SAGE's 0.5 · (r + 1) of the mean Pearson r over axes."),
}

CI: dict[str, Name] = {
    "wilson": Name("Wilson interval", "95% Wilson score interval of a proportion (n = items scored)."),
    "fisher_z": Name("Fisher z interval", "95% interval of a correlation through Fisher's z, Var = 1/(n − 3) "
                     "(HUME Table 8)."),
    "fisher_z_bonett_wright": Name("Fisher z interval (Bonett–Wright)", "Fisher z with Bonett and Wright's "
                                   "variance (1 + ρ²/2)/(n − 3), a named option."),
    "fisher_z_fieller": Name("Fisher z interval (Fieller)", "Fisher z with Fieller's variance 1.06/(n − 3), a "
                             "named option."),
    "annotator_range": Name("annotator range", "Lowest to highest annotator score (HUME, two or more "
                            "annotators)."),
    "bootstrap_bca": Name("bootstrap interval", "95% BCa bootstrap interval over queries (seeded)."),
    "wilson (one annotator, N = texts)": Name("Wilson interval, N = texts", "One annotator: the Wilson interval "
                                             "of the score with N = the texts clustered (HUME Table 8)."),
    "wilson (one annotator, N = queries)": Name("Wilson interval, N = queries", "One annotator: the Wilson "
                                               "interval of the score with N = the queries judged (HUME Table 8)."),
    "wilson (consensus, N = queries)": Name("Wilson interval, N = queries", "An annotator model's consensus "
                                           "judgments (report --aggregation): the Wilson interval of the score "
                                           "with N = the queries judged, as for one annotator."),
}

SECTIONS: dict[str, dict[str, Name]] = {"agreement": AGREEMENT, "gold": GOLD, "ci": CI}
# The agreement block of MTEB-format human results (agreement/core/mteb_export.py, HUME's public results) names
# the same values its own way; the results pages read those names.
MTEB_AGREEMENT = {"mean_pairwise_ari": "ari_mean", "mean_pairwise_spearman": "spearman_mean",
                  "mean_spearman": "spearman_mean", "mean_kendall_tau": "kendall_mean",
                  "mean_binary_kappa": "cohen_kappa_mean", "mean_pairwise_kappa": "cohen_kappa_mean",
                  "mean_percentage_agreement": "percent_agreement"}
CUT_OFF = re.compile(r"^(?P<base>[a-z]+)_at_(?P<k>\d+)$")


def lookup(key: str, section: Section) -> Name | None:
    """The label and definition of a report key, None when the registry does not know it."""
    table = SECTIONS[section]
    if section == "agreement":
        key = MTEB_AGREEMENT.get(key, key)
    if key in table:
        return table[key]
    cut = CUT_OFF.match(key)
    if cut and f"{cut['base']}_at_k" in table:
        name = table[f"{cut['base']}_at_k"]
        return Name(name.label.format(k=cut["k"]), name.definition.format(k=cut["k"]))
    for base in sorted(table, key=len, reverse=True):  # likert: <metric>_<axis>, longest metric name first
        if key.startswith(base + "_") and "{k}" not in base:
            axis = key[len(base) + 1:]
            return Name(f"{table[base].label} ({axis})", f"{table[base].definition} Axis: {axis}.")
    return None


def label(key: str | None, section: Section = "gold") -> str:
    """The metric's name in words; an unknown key is shown as it is, never dropped."""
    if not key:
        return ""
    name = lookup(key, section)
    return name.label if name else key


def definition(key: str | None, section: Section = "gold") -> str:
    """The one-line definition, empty for an unknown key."""
    name = lookup(key, section) if key else None
    return name.definition if name else ""


def glossary() -> list[tuple[Section, str, Name]]:
    """Every entry, in the order docs/metrics.md lists them."""
    return [(section, key, name) for section, table in SECTIONS.items() for key, name in table.items()]  # type: ignore[misc]
