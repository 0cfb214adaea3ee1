"""The upload form of the retrieval room: one subset of a collection, as an archive or as separate files."""
from __future__ import annotations

from typing import Any

from django import forms

from agreement.retrieval.models import collection_name


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files under one name (the qrels splits); Django's FileField takes one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(MultipleFileField, self).clean(f, initial) for f in files]


class CollectionUploadForm(forms.Form):
    name = forms.CharField(max_length=200, validators=[collection_name],
                           help_text="The collection, e.g. SciFact (created if new).")
    language = forms.CharField(max_length=32, help_text="MTEB-style code of this subset, e.g. eng-Latn.")
    subset = forms.CharField(max_length=64, required=False, help_text="MTEB hf_subset name (default: the language).")
    archive = forms.FileField(required=False, help_text="A .zip or .tar.gz with corpus.jsonl, queries.jsonl and "
                                                        "qrels/<split>.tsv; or leave empty and send the files below.")
    corpus = forms.FileField(required=False, help_text="corpus.jsonl: _id, text, optional title.")
    queries = forms.FileField(required=False, help_text="queries.jsonl: _id, text, optional instruction.")
    qrels = MultipleFileField(required=False, help_text="One file per split, named <split>.tsv.")
