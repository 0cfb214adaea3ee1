#!/usr/bin/env python
"""The alternative-annotator test of measures/escalation/alternative_annotator_test.py against the authors'
published example.

The authors' repository (nitaytech/AltTest on GitHub, "The Alternative Annotator Test for LLM-as-a-Judge",
arXiv 2501.10970) ships the human and LLM annotations of nine datasets under `data/`, and its example notebook
prints, for each dataset and LLM, the verdict, the winning rate and the advantage probability (two decimals),
with the notebook's scoring function and ε per dataset. Those 52 printed lines are copied below; the bench runs
this project's `alt_test` on the same files and compares. The data stay in the authors' repository (no licence
is stated for them), so the bench takes the path of a clone:

    git clone https://github.com/nitaytech/AltTest && python bench/bench_alt_test_reference.py AltTest/data
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measures.escalation.alternative_annotator_test import alt_test

SETTINGS = {"wax": ("accuracy", 0.1), "lgbteen": ("accuracy", 0.2), "mtbench": ("accuracy", 0.2),
            "framing": ("accuracy", 0.15), "cebab_aspects": ("accuracy", 0.1), "summeval": ("neg_rmse", 0.2),
            "10k_prompts": ("neg_rmse", 0.15), "cebab_stars": ("neg_rmse", 0.1), "lesion": ("neg_rmse", 0.15)}
PUBLISHED = """
wax gemini_flash FAILED 0.38 0.69
wax gemini_pro PASSED 0.50 0.74
wax gpt-4o PASSED 0.50 0.73
wax llama-31 FAILED 0.00 0.57
wax gpt-4o-mini FAILED 0.00 0.59
wax mistral-v03 FAILED 0.00 0.50
lgbteen gemini_flash FAILED 0.25 0.71
lgbteen gemini_pro FAILED 0.00 0.67
lgbteen gpt-4o PASSED 0.75 0.77
lgbteen llama-31 FAILED 0.00 0.72
lgbteen gpt-4o-mini PASSED 0.75 0.76
lgbteen mistral-v03 FAILED 0.25 0.75
mtbench gemini_flash FAILED 0.00 0.72
mtbench gemini_pro FAILED 0.00 0.76
mtbench gpt-4o FAILED 0.00 0.77
mtbench llama-31 FAILED 0.00 0.69
mtbench gpt-4o-mini FAILED 0.00 0.74
mtbench mistral-v03 FAILED 0.00 0.68
framing gemini_flash PASSED 1.00 0.83
framing gemini_pro PASSED 1.00 0.91
framing gpt-4o PASSED 1.00 0.92
framing llama-31 PASSED 0.50 0.80
framing gpt-4o-mini PASSED 1.00 0.87
framing mistral-v03 FAILED 0.25 0.80
cebab_aspects gemini_flash PASSED 0.70 0.91
cebab_aspects gemini_pro PASSED 0.90 0.94
cebab_aspects gpt-4o PASSED 0.90 0.93
cebab_aspects llama-31 PASSED 0.60 0.89
cebab_aspects gpt-4o-mini PASSED 0.50 0.90
cebab_aspects mistral-v03 FAILED 0.10 0.81
summeval gemini_flash FAILED 0.00 0.46
summeval gemini_pro FAILED 0.00 0.44
summeval gpt-4o FAILED 0.00 0.48
summeval llama-31 FAILED 0.00 0.58
summeval gpt-4o-mini FAILED 0.00 0.54
summeval mistral-v03 FAILED 0.00 0.62
10k_prompts gemini_flash FAILED 0.31 0.67
10k_prompts gemini_pro FAILED 0.08 0.63
10k_prompts gpt-4o PASSED 0.69 0.76
10k_prompts llama-31 FAILED 0.15 0.67
10k_prompts gpt-4o-mini PASSED 0.92 0.80
10k_prompts mistral-v03 FAILED 0.15 0.67
cebab_stars gemini_flash PASSED 0.60 0.82
cebab_stars gemini_pro PASSED 0.80 0.87
cebab_stars gpt-4o PASSED 0.90 0.90
cebab_stars llama-31 PASSED 0.60 0.85
cebab_stars gpt-4o-mini PASSED 0.90 0.89
cebab_stars mistral-v03 PASSED 0.50 0.83
lesion gemini_flash FAILED 0.17 0.71
lesion gemini_pro PASSED 1.00 0.81
lesion gpt-4o FAILED 0.00 0.62
lesion gpt-4o-mini PASSED 0.67 0.73
"""


def main(data: Path) -> int:
    mismatches = 0
    rows = [line.split() for line in PUBLISHED.strip().splitlines()]
    for dataset, llm, verdict, winning_rate, advantage in rows:
        scoring, epsilon = SETTINGS[dataset]
        humans = json.loads((data / dataset / "human_annotations.json").read_text())
        judge = json.loads((data / dataset / "llm_annotations.json").read_text())[llm]
        result = alt_test(judge, humans, scoring, epsilon)
        ours = ("PASSED" if result.passed else "FAILED", f"{result.winning_rate:.2f}",
                f"{result.advantage_probability:.2f}")
        same = ours[0] == verdict and float(ours[1]) == float(winning_rate) and float(ours[2]) == float(advantage)
        mismatches += not same
        print(f"{dataset:14} {llm:13} published {verdict} ω={winning_rate} ρ={advantage}   here {' '.join(ours)}"
              f"{'' if same else '   MISMATCH'}")
    print(f"{len(rows) - mismatches} of {len(rows)} published results reproduced")
    return 1 if mismatches else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
