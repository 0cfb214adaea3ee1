"""Prediction-powered inference: a judge's answers on every item and people's on a sample, combined into
estimates whose intervals stay valid however biased the judge is (docs/ppi.md).

The maths is pure (`estimates.py`, `estimands.py`, `task_estimates.py`, `planner.py`: numpy and SciPy, no Django);
`ppi_loading.py` reads a task's answers into it, `document.py` is what the `ppi` command and a worker share.
"""
