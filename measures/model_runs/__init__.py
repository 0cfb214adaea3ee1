"""Models run here, the pure part: the classical similarity metrics (SAGE Appendix A.7.1) a model run may use
instead of an encoder. agreement/model_runs/ runs the models and stores their scores."""
