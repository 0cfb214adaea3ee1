"""Forms of the admin pages: annotator profiles, batches, assignments. Views assign fields explicitly."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.forms import inlineformset_factory

from annotation.core.annotators import check_password
from annotation.core.batches import DEFAULT_HOLD_SECONDS
from annotation.core.models import Annotator, AnnotatorLanguage
from tasks_app.core.models import Task, language_code

# A long annotator list gets a search box (static/manage/picker.js); language fields suggest the codes in use
# (<datalist id="language-codes">, templates/annotation/manage/_language_codes.html).
PICKER = {"size": 8, "data-picker": "annotators"}
LANGUAGE_INPUT = {"list": "language-codes", "autocomplete": "off"}


def language_codes() -> list[str]:
    """Every language code a task, a batch or an annotator uses, for the language fields' suggestions."""
    codes = set(Task.objects.values_list("language", flat=True).distinct())
    codes |= set(AnnotatorLanguage.objects.values_list("language", flat=True).distinct())
    return sorted(codes)


def annotator_choices() -> Any:
    return Annotator.objects.select_related("user").prefetch_related("languages").order_by("user__username")


class AnnotatorChoiceField(forms.ModelMultipleChoiceField):
    """Shows each annotator with their languages, so an admin sees who speaks the batch's language."""

    def label_from_instance(self, obj: Annotator) -> str:
        languages = ", ".join(f"{lang.language} ({lang.proficiency})" for lang in obj.languages.all())
        state = "" if obj.active else " — inactive"
        return f"{obj.name} [{obj.agent}] {languages}{state}"


class AnnotatorCreateForm(forms.Form):
    username = forms.CharField(max_length=150)
    password = forms.CharField(widget=forms.PasswordInput, required=False,
                               help_text="Needed for a human to log in; LLM annotators can leave it empty.")
    agent = forms.ChoiceField(choices=Annotator.Agent.choices, initial=Annotator.Agent.HUMAN)

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username=username).exists():
            raise forms.ValidationError(f"A user named {username!r} already exists.")
        return username

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("password"):
            try:
                check_password(data["password"], username=data.get("username", ""))
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class AnnotatorEditForm(forms.Form):
    agent = forms.ChoiceField(choices=Annotator.Agent.choices)


LanguageFormSet = inlineformset_factory(
    Annotator, AnnotatorLanguage, fields=("language", "proficiency"), extra=2, can_delete=True,
    widgets={"language": forms.TextInput(attrs={"placeholder": "eng-Latn", "size": 10, **LANGUAGE_INPUT})},
)


class BatchForm(forms.Form):
    """A new batch. Blank language means the task's; blank overlap applies HUME's preset (eng 2, else 1)."""

    task = forms.ModelChoiceField(queryset=Task.objects.order_by("name"))
    name = forms.CharField(max_length=200, required=False, help_text="Default: task name · language.")
    language = forms.CharField(max_length=16, required=False, validators=[language_code],
                               widget=forms.TextInput(attrs=LANGUAGE_INPUT),
                               help_text="MTEB-style code; default: the task's language.")
    overlap = forms.IntegerField(min_value=1, max_value=50, required=False,
                                 help_text="k annotators per item; blank = HUME preset (2 for eng, 1 otherwise).")
    hold_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=DEFAULT_HOLD_SECONDS // 60)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    annotators = AnnotatorChoiceField(queryset=annotator_choices(), required=False,
                                      widget=forms.SelectMultiple(attrs=PICKER))
    override_reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                      help_text="Required to assign annotators who do not list the language.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = annotator_choices()
        self.fields["task"].queryset = Task.objects.order_by("name")


class BatchEditForm(forms.Form):
    name = forms.CharField(max_length=200)
    overlap = forms.IntegerField(min_value=1, max_value=50,
                                 help_text="Raising k hands items out again; lowering it never deletes answers.")
    hold_minutes = forms.IntegerField(min_value=1, max_value=24 * 60)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


class AssignForm(forms.Form):
    annotators = AnnotatorChoiceField(queryset=annotator_choices(), widget=forms.SelectMultiple(attrs=PICKER))
    override_reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = annotator_choices()


class BulkBatchForm(forms.Form):
    """One batch per language of a multilingual task: the tasks sharing an MTEB task name, or tasks picked."""

    mteb_task_name = forms.ChoiceField(required=False, help_text="All tasks with this MTEB task name.")
    tasks = forms.ModelMultipleChoiceField(queryset=Task.objects.order_by("name"), required=False,
                                           widget=forms.SelectMultiple(attrs={"size": 8}),
                                           help_text="…or pick the tasks yourself.")
    overlap = forms.IntegerField(min_value=1, max_value=50, required=False,
                                 help_text="Blank = HUME preset per language (2 for eng, 1 otherwise).")
    assign_speakers = forms.BooleanField(required=False, initial=True,
                                         help_text="Assign every active human annotator who lists the language.")
    hold_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=DEFAULT_HOLD_SECONDS // 60)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = Task.objects.exclude(mteb_task_name="").order_by("mteb_task_name").values_list(
            "mteb_task_name", flat=True).distinct()
        self.fields["mteb_task_name"].choices = [("", "—")] + [(n, n) for n in names]
        self.fields["tasks"].queryset = Task.objects.order_by("name")

    def selected_tasks(self) -> list[Task]:
        data = self.cleaned_data
        if data.get("mteb_task_name"):
            return list(Task.objects.filter(mteb_task_name=data["mteb_task_name"]).order_by("language", "name"))
        return list(data.get("tasks") or [])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("mteb_task_name") and not data.get("tasks"):
            raise forms.ValidationError("Choose an MTEB task name or at least one task.")
        return data
