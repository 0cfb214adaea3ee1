"""Prediction-powered inference, the pure part: estimates, confidence sequences, the planner, active sampling and
the estimates of a task built from them (numpy and SciPy; docs/ppi.md). agreement/ppi/ reads the answers and stores
what these compute."""
