"""SAGE, the pure part: the seeded perturbations, the five categories and the ranking metric of its retrieval tasks
(SAGE Appendix A; docs/sage.md). agreement/sage/ runs the studies on models and stores them."""
