"""The upload form of the retrieval room: one subset of a collection, as an archive or as separate files."""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import escape

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
    # Django renders help_text as HTML: the <split> placeholder is escaped, or the browser drops it as a tag
    archive = forms.FileField(required=False, help_text=escape("A .zip or .tar.gz with corpus.jsonl, queries.jsonl "
                                                               "and qrels/<split>.tsv; or leave empty and send the "
                                                               "files below."))
    corpus = forms.FileField(required=False, help_text="corpus.jsonl: _id, text, optional title.")
    queries = forms.FileField(required=False, help_text="queries.jsonl: _id, text, optional instruction.")
    qrels = MultipleFileField(required=False, help_text=escape("One file per split, named <split>.tsv."))
