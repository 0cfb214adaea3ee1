"""SAGE (Goel, Lee & Ramchandran, NeurIPS 2025 workshop; arXiv:2509.21310): five categories of semantic
understanding for any similarity function, and the seeded perturbations they are built on.

The study itself is pure modules (no Django import):
- `perturb`: the perturbations of Appendix A.3, A.4 and A.6, each `(text, seed) -> text`.
- `categories`: the five category formulas (numpy in, numbers out), Appendix A.2-A.6.
- `retrieval`: nDCG@10 through pytrec_eval and the ranking of a corpus by a similarity.
- `datasets`: the documented on-disk formats of a SAGE study, with file/line/field errors.
- `study`: runs every category for a similarity callable and builds Table 1 (and Tables 2-6).
- `table`: Table 1 as JSON, CSV and LaTeX.
- `baselines`: the model registry's Levenshtein ratio and Jaccard (model_runs/classical.py) as study scorers.

The page around it is a Django app (label `sage`): `models` (a stored run), `scorers` (metrics and models by
name, shared with the `sage` command), `jobs` + `tasks` (the Celery job that runs a study; a GET never
computes), `views`, `urls`, `plots` (bar plots per category).
"""
