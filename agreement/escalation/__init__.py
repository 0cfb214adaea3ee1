"""LLM judges first, people where it matters (issue 25, docs/escalation.md): calibrated escalation after
"Trust or Escalate" (arXiv 2407.18370) in `calibration.py`, the alternative-annotator test (arXiv 2501.10970) in
`alternative_annotator_test.py` (both pure: numpy and SciPy, no Django), and the task's answers read for them in
`escalation_loading.py`."""
