"""MTEB results, the pure part: reading results files, the subset scores, the human-vs-model tables (HUME Table 1,
Table 8), win rates, correlations and the figures drawn from them. agreement/results/ imports and stores the files
and serves the pages."""
