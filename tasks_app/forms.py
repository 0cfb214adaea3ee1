"""The upload form: the CLI's options as fields; parse_options does the real validation for all three entry points."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.http import HttpRequest

from hume.lib.import_reader import ImportFailed, ImportProblem

from .core.kinds import kind_choices
from .import_jobs import goes_to_background, start_import_job
from .importing import ImportSummary, import_upload
from .models import ImportJob


class TaskImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one item per line) or CSV for flat kinds; see the formats below.")
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=kind_choices)
    language = forms.CharField(max_length=16, help_text="MTEB-style code, e.g. eng-Latn, ara-Arab.")
    labels = forms.CharField(required=False, help_text="Classification: a,b,c (default: the gold labels).")
    scale = forms.CharField(required=False, help_text="MIN,MAX (sts default 0,5; graded 0,10; likert 1,7).")
    step = forms.CharField(required=False, help_text="Scale step, e.g. 0.5.")
    axes = forms.CharField(required=False, help_text="Likert: overall,accuracy,coverage,coherence.")
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 6}),
                                   help_text="Markdown, shown to annotators.")
    instructions_file = forms.FileField(required=False, help_text="Or a Markdown file (.md).")
    mteb_task_name = forms.CharField(required=False, label="MTEB task name")
    mteb_subset = forms.CharField(required=False, label="MTEB subset", help_text="hf_subset, e.g. default or ar.")
    dataset_revision = forms.CharField(required=False)
    format = forms.ChoiceField(required=False, choices=[("", "from the file name"), ("jsonl", "JSONL"),
                                                        ("csv", "CSV")])
    update_gold = forms.BooleanField(required=False, help_text="Let this file change gold imported before.")

    def clean_instructions_file(self) -> str | None:
        upload = self.cleaned_data.get("instructions_file")
        if not upload:
            return None
        try:
            return upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError("The instructions file is not UTF-8 text.") from None

    def options(self) -> dict[str, Any]:
        """The raw options for parse_options; an instructions file wins over the text box."""
        data = {k: v for k, v in self.cleaned_data.items() if k not in ("file", "instructions_file")}
        if self.cleaned_data.get("instructions_file"):
            data["instructions"] = self.cleaned_data["instructions_file"]
        return data


@dataclass
class ImportAttempt:
    """The upload form after a request, with what the import said: its problems (file, line, field) or,
    when it succeeded, its summary; or, for a file over IMPORT_IN_BACKGROUND_BYTES, the job importing it."""

    form: TaskImportForm
    problems: list[ImportProblem] = field(default_factory=list)
    summary: ImportSummary | None = None
    job: ImportJob | None = None

    @property
    def status(self) -> int:
        """The status code of the page that shows the form again: 400 after a refused upload."""
        return 400 if self.problems or self.form.errors else 200


def attempt_import(request: HttpRequest) -> ImportAttempt:
    """Bind the upload form and, on a valid POST, import the file: the task page and the Django admin's
    import page both answer with this (the API validates with its serializer, then the same import_upload)."""
    attempt = ImportAttempt(TaskImportForm(request.POST or None, request.FILES or None))
    if request.method == "POST" and attempt.form.is_valid():
        try:
            upload = attempt.form.cleaned_data["file"]
            if goes_to_background(upload):
                attempt.job = start_import_job(upload, attempt.form.options(), request.user)
            else:
                attempt.summary = import_upload(upload, attempt.form.options())
        except ImportFailed as failed:
            attempt.problems = failed.problems
    return attempt


class SampleForm(forms.Form):
    """The `sample_task` command's options: a size and a seed, or clear."""

    size = forms.IntegerField(min_value=1, required=False, help_text="Items annotators will see (HUME: 20–50).")
    seed = forms.IntegerField(required=False, help_text="Any integer; the same seed picks the same items.")
    clear = forms.BooleanField(required=False, label="Clear the sample (all items form the pool)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("clear") and (data.get("size") is None or data.get("seed") is None):
            raise forms.ValidationError("Give a size and a seed, or tick “Clear the sample”.")
        return data


MAX_INSTRUCTIONS_CHARS = 100_000  # a long codebook is a few thousand; each item page carries them


class InstructionsForm(forms.Form):
    instructions = forms.CharField(required=False, strip=False, max_length=MAX_INSTRUCTIONS_CHARS,
                                   widget=forms.Textarea(attrs={"rows": 16, "dir": "auto"}),
                                   help_text="Markdown (tables, lists, fenced code), shown with every item.")
