"""Calibrated escalation, the pure part: Trust or Escalate's calibrated thresholds and the alternative annotator
test (docs/escalation.md). agreement/escalation/ reads the answers and stores the plans."""
