"""Retrieval, the pure part: exact cosine top-K (numpy, or torch on a GPU), the judges' agreement and leaderboard,
and the recall curves (docs/retrieval.md). agreement/retrieval/ stores collections, rankings and pools."""
