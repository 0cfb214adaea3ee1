"""Published numbers of the HUME paper, shared by the leaderboard tests (math and the Django path).

Source: El Assadi, Chung, Solomatin, Muennighoff, Enevoldsen, "HUME: Measuring the Human-Model Performance
Gap in Text Embedding Tasks" — Table 1 (human vs 13 models per task kind and language, Overall over 26
subsets) and Table 8 (human scores with 95% CIs); arXiv:2510.10062.
The paper prints scores ×100 with one decimal, so values are compared to POINTS.
"""
from __future__ import annotations

from pathlib import Path

# The public MTEB results the paper's numbers come from: the project's own copy (CC0; see its README).
RESULTS = Path(__file__).resolve().parent.parent / "demo" / "mteb-hume-results"

POINTS = 0.1 + 1e-9  # the paper's rounding: one decimal of a ×100 score

# HUME Table 1, verbatim: columns are kind/language, the last one is Overall (26 subsets).
TABLE1_COLUMNS = [
    *(f"Classification/{lang}" for lang in ("ara-Arab", "eng-Latn", "nob-Latn", "rus-Cyrl")),
    *(f"Clustering/{lang}" for lang in ("ara-Arab", "dan-Latn", "eng-Latn", "rus-Cyrl")),
    *(f"Reranking/{lang}" for lang in ("dan-Latn", "eng-Latn", "nob-Latn")),
    *(f"STS/{lang}" for lang in ("ara-Arab", "eng-Latn", "rus-Cyrl")),
]
TABLE1 = """
all-MiniLM-L6-v2 57.2 58.8 51.7 55.5 35.2 24.5 55.1 31.4 78.4 93.7 71.2 6.2 83.5 33.1 61.9
all-mpnet-base-v2 53.5 62.0 47.0 60.5 21.4 22.9 59.7 36.9 79.0 93.3 80.5 13.2 83.0 42.2 63.4
e5-mistral-7b-instruct 74.5 70.0 70.5 70.0 68.5 76.0 82.7 77.7 90.6 96.4 86.1 16.0 85.9 63.0 78.2
embeddinggemma-300m 71.0 58.6 54.0 73.5 19.2 43.7 65.1 36.9 74.3 86.9 71.4 36.7 69.9 66.2 64.2
gte-Qwen2-1.5B-instruct 75.2 76.5 70.8 74.5 73.7 67.1 75.9 72.2 84.3 95.3 87.8 28.8 84.0 54.2 77.5
jasper_en_vision_language_v1 63.5 87.1 70.5 79.8 64.3 54.7 83.2 43.7 90.1 95.8 90.0 40.9 88.1 69.5 80.1
multilingual-e5-base 75.8 64.7 73.8 77.2 35.9 40.6 45.6 36.2 92.2 94.4 87.5 31.0 85.2 62.7 68.2
multilingual-e5-large 77.0 64.9 75.0 80.0 34.6 31.0 52.5 46.9 95.0 95.3 92.2 33.8 86.3 68.8 70.4
multilingual-e5-small 72.2 62.2 69.2 81.2 35.5 38.0 51.7 59.1 88.6 94.2 88.3 28.8 85.2 60.3 69.0
mxbai-embed-large-v1 57.2 66.4 52.2 59.0 26.5 34.2 61.9 30.5 90.8 94.5 82.0 12.7 87.6 43.7 66.6
Qwen3-Embedding-0.6B 77.2 74.7 59.8 74.8 78.8 58.5 68.4 68.3 90.0 95.5 83.6 38.0 88.5 60.3 76.8
SFR-Embedding-Mistral 77.5 69.8 68.8 72.5 73.1 71.2 85.1 68.9 89.2 96.3 86.1 15.3 86.4 64.0 78.3
stella_en_1.5B_v5 65.8 84.0 67.0 79.2 36.8 42.6 78.6 46.7 91.7 96.0 88.6 37.2 86.7 62.1 76.9
Human 95.0 70.3 85.0 92.5 76.0 62.7 67.4 68.0 91.4 87.2 89.8 67.5 83.1 58.7 77.6
"""
PAPER_TABLE1 = {
    line.split()[0]: [float(value) for value in line.split()[1:]]
    for line in TABLE1.strip().splitlines()
}

# HUME Table 8: (task, language) -> (human, CI low, CI high, best model, best model starred).
TABLE8 = {
    ("HUMEEmotionClassification", "eng-Latn"): (45.8, 32.6, 59.7, 75.4, True),
    ("HUMEMultilingualSentimentClassification", "ara-Arab"): (95.0, 83.5, 98.6, 77.5, True),
    ("HUMEMultilingualSentimentClassification", "eng-Latn"): (77.5, 62.5, 87.7, 95.5, True),
    ("HUMEMultilingualSentimentClassification", "nob-Latn"): (85.0, 70.9, 92.9, 75.0, False),
    ("HUMEMultilingualSentimentClassification", "rus-Cyrl"): (92.5, 80.1, 97.4, 81.3, False),
    ("HUMEToxicConversationsClassification", "eng-Latn"): (73.3, 59.0, 84.0, 86.7, True),
    ("HUMETweetSentimentExtractionClassification", "eng-Latn"): (84.4, 71.2, 92.3, 90.9, False),
    ("HUMEArxivClusteringP2P", "eng-Latn"): (49.2, 35.3, 63.2, 84.6, True),
    ("HUMERedditClusteringP2P", "eng-Latn"): (68.8, 63.2, 74.4, 100.0, True),
    ("HUMESIB200ClusteringS2S", "ara-Arab"): (76.0, 58.4, 87.8, 78.8, False),
    ("HUMESIB200ClusteringS2S", "dan-Latn"): (62.7, 44.9, 77.6, 76.0, False),
    ("HUMESIB200ClusteringS2S", "eng-Latn"): (54.0, 41.8, 66.3, 83.3, True),
    ("HUMESIB200ClusteringS2S", "rus-Cyrl"): (68.1, 50.2, 81.9, 77.7, False),
    ("HUMEWikiCitiesClustering", "eng-Latn"): (97.6, 95.2, 100.0, 100.0, False),
    ("HUMECore17InstructionReranking", "eng-Latn"): (85.2, 83.6, 86.8, 98.8, True),
    ("HUMENews21InstructionReranking", "eng-Latn"): (92.7, 91.3, 94.1, 100.0, True),
    ("HUMERobust04InstructionReranking", "eng-Latn"): (88.5, 82.2, 94.8, 98.8, True),
    ("HUMEWikipediaRerankingMultilingual", "dan-Latn"): (91.4, 76.2, 97.3, 95.0, False),
    ("HUMEWikipediaRerankingMultilingual", "eng-Latn"): (82.4, 75.6, 89.1, 90.6, True),
    ("HUMEWikipediaRerankingMultilingual", "nob-Latn"): (89.8, 74.1, 96.4, 92.3, False),
    ("HUMESICK-R", "eng-Latn"): (82.7, 69.4, 90.5, 94.1, True),
    ("HUMESTS12", "eng-Latn"): (91.2, 84.9, 94.9, 92.0, False),
    ("HUMESTS22", "ara-Arab"): (67.6, 41.7, 83.3, 40.9, True),
    ("HUMESTS22", "eng-Latn"): (78.4, 59.0, 89.2, 82.9, False),
    ("HUMESTS22", "rus-Cyrl"): (58.7, 28.8, 78.2, 69.5, False),
    ("HUMESTSBenchmark", "eng-Latn"): (80.4, 67.7, 88.4, 90.9, True),
}

# HUME Table 1, Overall column (26 subsets).
OVERALL = {name: values[-1] for name, values in PAPER_TABLE1.items()}


def table1_cell(name: str, column: str) -> float:
    """One cell of HUME Table 1, e.g. table1_cell("Human", "STS/ara-Arab") == 67.5."""
    return PAPER_TABLE1[name][TABLE1_COLUMNS.index(column)]
