"""The upload form of the retrieval room: one subset of a collection, as an archive or as separate files."""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import escape

from agreement.model_runs.models import EmbeddingModel
from agreement.retrieval.models import Ranking, collection_name
from annotation.models import Annotator


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


def ranking_name(value: str) -> None:
    if not value.strip():
        raise forms.ValidationError("A ranking name cannot be blank.")


class TrecRankingForm(forms.Form):
    """A TREC run file (qid Q0 docid rank score tag) imported as a ranking of the collection."""

    name = forms.CharField(max_length=200, validators=[ranking_name], help_text="Unique in the collection.")
    subset = forms.ChoiceField(required=False, help_text="Only when query ids repeat across subsets.")
    run_file = forms.FileField(label="Run file", help_text="One line per ranked document: qid Q0 docid rank score "
                                                           "tag. A bad line imports nothing.")

    def __init__(self, *args: Any, subsets: list[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["subset"].choices = [("", "any (by query id)"), *[(s, s) for s in subsets]]


class Bm25RankingForm(forms.Form):
    name = forms.CharField(max_length=200, initial="bm25", validators=[ranking_name])
    k = forms.IntegerField(min_value=1, max_value=1000, initial=100, label="Documents per query (k)")


class ModelRankingForm(forms.Form):
    """A registered model's exact cosine top-k, ranked by the workers; chunk size set = a split ranking."""

    model = forms.ModelChoiceField(queryset=None, empty_label=None,
                                   help_text="A registered model (the models page registers more).")
    name = forms.CharField(max_length=200, required=False, help_text="Default: the model's name.")
    k = forms.IntegerField(min_value=1, max_value=1000, initial=100, label="Documents per query (k)")
    docs_per_chunk = forms.IntegerField(min_value=1, required=False, label="Split: documents per chunk",
                                        help_text="Empty: one chunk per subset. Set: the corpus is cut in chunks "
                                                  "that several workers rank, merged exactly.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].queryset = (EmbeddingModel.objects.exclude(backend=EmbeddingModel.Backend.CLASSICAL)
                                         .order_by("name"))


class PoolForm(forms.Form):
    """The union of chosen rankings' top-`depth` per query of one subset, as a graded-relevance task."""

    subset = forms.ModelChoiceField(queryset=None, empty_label=None)
    rankings = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple,
                                          help_text="Finished rankings only.")
    depth = forms.IntegerField(min_value=1, max_value=1000, initial=10, help_text="Top-k of each ranking.")
    step = forms.FloatField(min_value=0.01, max_value=10, initial=0.1, help_text="Score step of the 0–10 scale.")

    def __init__(self, *args: Any, collection: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["subset"].queryset = collection.subsets.order_by("name")
        self.fields["rankings"].queryset = collection.rankings.filter(status=Ranking.Status.DONE).order_by("name")
        self.fields["subset"].label_from_instance = lambda subset: f"{subset.name} ({subset.language})"
        self.fields["rankings"].label_from_instance = lambda ranking: ranking.name


class JudgingBatchForm(forms.Form):
    """The pool's batch for the annotators of its language, with an optional LLM judge over the same batch."""

    overlap = forms.IntegerField(min_value=1, max_value=20, required=False,
                                 help_text="Annotators per pair (default: HUME's, 2 for English, else 1).")
    judge = forms.ModelChoiceField(queryset=None, required=False, empty_label="no LLM judge",
                                   help_text="LLM annotators an admin configured (/llm/).")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = (Annotator.objects.filter(agent=Annotator.Agent.LLM, active=True,
                                                                  llm_config__isnull=False)
                                         .select_related("user").order_by("user__username"))
        self.fields["judge"].label_from_instance = lambda a: a.name
