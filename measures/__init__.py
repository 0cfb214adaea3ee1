"""The Django-free maths below every app: agreement metrics and their intervals (HUME Appendix E.1), ranking
metrics, pairwise Cohen's κ, the MTEB-style scoring of models (`model_scoring`, `trec_scoring`), paired
significance tests, metric names, and the texts MTEB embeds. Numpy and lists in, numbers out; it imports no
project package, so every layer (the kinds, the apps) may use it (tests/test_import_direction.py)."""
