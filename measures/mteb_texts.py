"""The texts a model embeds for a query and a document, written as MTEB writes them (mteb 2.20.0,
`_create_dataloaders.py`), so every part of the app that embeds queries and documents builds them here:
reranking items run by a model (`agreement/model_runs/evaluate.py`), retrieval collections' embedding runs,
split runs and reranked runs (`agreement/retrieval/system_rankings.py`, `split_rankings.py`).

- A query with an instruction: `query + " " + instruction` (`_combine_queries_with_instruction_text`: the
  instruction after the query). An absent or empty instruction leaves the query as it is (MTEB: None).
- A document: `title + " " + text`, stripped, when it has a title, else the text stripped (`_corpus_to_dict`).
"""
from __future__ import annotations


def query_text(query: str, instruction: str | None) -> str:
    return f"{query} {instruction}" if instruction else query


def document_text(title: str | None, text: str) -> str:
    return f"{title} {text}".strip() if title else text.strip()
