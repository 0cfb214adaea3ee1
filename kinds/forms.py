"""One answer form per task kind, plus the skip and flag forms of the annotator's loop.

Each form only turns posted fields into the kind's value format (tasks_app/kinds.py) and then delegates to
`task.validate_answer`, so the browser, the JSON API and imports accept exactly the same answers. Field
names are positional (`c0`, `d1`, `t2`, `a0`): candidate and document ids come from datasets and must never
become HTML names. Forms also hand templates their rows (`form.rows`) so partials render no logic.
"""
from __future__ import annotations

from typing import Any, ClassVar

from django import forms

from tasks_app.kinds import ValidationProblem
from tasks_app.models import Task

MAX_KEYED = 9  # number keys 1–9 select; further options are reached by click or Tab
ECHO_CHARS = 40  # what a refused form shows again of a value that is not free text (a choice, a number)


def scale_points(lo: float, hi: float, step: float | None) -> list[float | int]:
    """The selectable points of a discrete scale, as ints where whole (so 3 shows as "3", not "3.0")."""
    step = step or 1.0
    count = round((hi - lo) / step)
    points = [lo + i * step for i in range(count + 1)]
    return [int(p) if float(p).is_integer() else round(p, 6) for p in points]


def short_number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def excerpt(value: str, limit: int = ECHO_CHARS) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


class ShortEchoes:
    """Form mixin: a refused form shows the posted values again, and error messages quote them, cut short.

    A 5 MB value posted to the answer form came back twice, in the input and in "Select a valid choice. … is
    not one of the available choices." (issue 23, item 9). After validation (which saw the whole value), a
    value longer than its field's max_length, or than ECHO_CHARS for a field without one, is replaced by an
    excerpt for rendering, and so is every quotation of it in the errors."""

    def full_clean(self) -> None:
        super().full_clean()  # type: ignore[misc]
        if not self.is_bound or not self._errors:  # type: ignore[attr-defined]
            return
        limits = {name: getattr(field, "max_length", None) or ECHO_CHARS
                  for name, field in self.fields.items()}  # type: ignore[attr-defined]
        data = self.data.copy()  # type: ignore[attr-defined]
        cut: dict[str, str] = {}
        for key in list(data):
            values = data.getlist(key) if hasattr(data, "getlist") else [data[key]]
            short = [excerpt(v, limits.get(key, ECHO_CHARS)) if isinstance(v, str) else v for v in values]
            cut.update({v: excerpt(v) for v, s in zip(values, short, strict=True) if s is not v})
            if hasattr(data, "setlist"):
                data.setlist(key, short)
            else:
                data[key] = short[0]
        if cut:
            self.data = data
            for errors in self._errors.values():  # type: ignore[attr-defined]
                errors.data = [_cut_error(error, cut) for error in errors.data]


def _cut_error(error: Any, cut: dict[str, str]) -> Any:
    """The error with every long posted value it quotes (in its params or its text) replaced by an excerpt."""
    if isinstance(error, forms.ValidationError):
        if isinstance(error.params, dict):
            error.params = {k: cut.get(v, v) if isinstance(v, str) else v for k, v in error.params.items()}
        if isinstance(error.message, str):
            error.message = _cut_text(error.message, cut)
        return error
    return _cut_text(error, cut) if isinstance(error, str) else error


def _cut_text(text: str, cut: dict[str, str]) -> str:
    for value, short in cut.items():
        text = text.replace(value, short)
    return text


class AnswerForm(ShortEchoes, forms.Form):
    """Base: builds kind-specific fields, assembles the value, validates it with the task's kind."""

    kind: ClassVar[str]
    template: ClassVar[str]

    def __init__(self, task: Task, payload: dict[str, Any], *args: Any, answer: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.task, self.payload = task, payload
        self.add_answer_fields()
        if answer is not None and not self.is_bound:
            self.initial.update(self.initial_from_value(answer))

    def add_answer_fields(self) -> None:
        raise NotImplementedError

    def value_from_fields(self, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        raise NotImplementedError

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        """The form field a kind's complaint is about, so the message shows next to it (None: the form)."""
        return None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            cleaned["value"] = self.task.validate_answer(self.value_from_fields(cleaned), self.payload)
        except ValidationProblem as problem:
            self.add_error(self.field_for_problem(problem), problem.message)
        return cleaned

    def current(self, name: str) -> str:
        """The field's value as the page should show it: posted data when bound, else the stored answer."""
        value = self[name].value()
        return "" if value is None else str(value)


class ClassificationForm(AnswerForm):
    kind = "classification"
    template = "annotation/kinds/_classification.html"

    def add_answer_fields(self) -> None:
        labels = self.task.labels or []
        self.fields["label"] = forms.ChoiceField(choices=[(label, label) for label in labels], widget=forms.RadioSelect,
                                                 error_messages={"required": "Choose a label."})

    def value_from_fields(self, data: dict[str, Any]) -> str:
        return data["label"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"label": value}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "label"

    def last_key(self) -> int:
        return min(len(self.task.labels or []), MAX_KEYED)

    def rows(self) -> list[dict[str, Any]]:
        chosen = self.current("label")
        return [{"value": label, "key": str(i + 1) if i < MAX_KEYED else "", "checked": label == chosen}
                for i, label in enumerate(self.task.labels or [])]


class PairwiseForm(AnswerForm):
    kind = "pairwise"
    template = "annotation/kinds/_pairwise.html"
    CHOICES: ClassVar[list[tuple[str, str, str]]] = [("a", "A is better", "a"), ("tie", "Tie", "t"),
                                                     ("b", "B is better", "b")]

    def add_answer_fields(self) -> None:
        self.fields["choice"] = forms.ChoiceField(choices=[(v, label) for v, label, _ in self.CHOICES],
                                                  widget=forms.RadioSelect,
                                                  error_messages={"required": "Choose A, B or tie."})

    def value_from_fields(self, data: dict[str, Any]) -> str:
        return data["choice"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"choice": value}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "choice"

    def rows(self) -> list[dict[str, Any]]:
        chosen = self.current("choice")
        return [{"value": v, "label": label, "key": key, "checked": v == chosen} for v, label, key in self.CHOICES]


class RerankingForm(AnswerForm):
    """Binary relevance per candidate; every candidate must be judged (no default of "not relevant")."""

    kind = "reranking"
    template = "annotation/kinds/_reranking.html"

    def candidates(self) -> list[dict[str, str]]:
        return self.payload.get("candidates", [])

    def last_key(self) -> int:
        return min(len(self.candidates()), MAX_KEYED)

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.candidates()):
            self.fields[f"c{i}"] = forms.TypedChoiceField(
                choices=[("1", "relevant"), ("0", "not relevant")], coerce=int, widget=forms.RadioSelect,
                error_messages={"required": "Judge this candidate."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, int]:
        return {c["id"]: data[f"c{i}"] for i, c in enumerate(self.candidates())}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"c{i}": str(value.get(c["id"], "")) for i, c in enumerate(self.candidates()) if c["id"] in value}

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"c{i}", "text": c["text"], "key": str(i + 1) if i < MAX_KEYED else "",
                 "value": self.current(f"c{i}"), "errors": self[f"c{i}"].errors}
                for i, c in enumerate(self.candidates())]


class GradedRelevanceForm(AnswerForm):
    """A score per document on the task's scale (default 0–10, step from the task), typed or stepped."""

    kind = "graded_relevance"
    template = "annotation/kinds/_graded_relevance.html"

    def documents(self) -> list[dict[str, str]]:
        return self.payload.get("documents", [])

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.documents()):
            self.fields[f"d{i}"] = forms.FloatField(error_messages={"required": "Score this document."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, float]:
        return {d["id"]: data[f"d{i}"] for i, d in enumerate(self.documents())}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"d{i}": short_number(value.get(d["id"])) for i, d in enumerate(self.documents())}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        ids = [d["id"] for d in self.documents()]
        doc_id = problem.field.removeprefix("value.")
        return f"d{ids.index(doc_id)}" if doc_id in ids else None

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"d{i}", "text": d["text"], "value": self.current(f"d{i}"), "errors": self[f"d{i}"].errors}
                for i, d in enumerate(self.documents())]

    def scale(self) -> dict[str, str]:
        lo, hi, step = self.task.scale
        return {"min": short_number(lo), "max": short_number(hi), "step": short_number(step) or "any"}


class STSForm(AnswerForm):
    """One similarity score. The number field starts empty: a slider left where it started is no answer."""

    kind = "sts"
    template = "annotation/kinds/_sts.html"

    def add_answer_fields(self) -> None:
        self.fields["score"] = forms.FloatField(error_messages={"required": "Move the slider or type a score."})

    def value_from_fields(self, data: dict[str, Any]) -> float:
        return data["score"]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {"score": short_number(value)}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        return "score"

    def scale(self) -> dict[str, str]:
        lo, hi, step = self.task.scale
        ticks = scale_points(lo, hi, 1.0) if hi - lo <= 10 else [lo, hi]
        return {"min": short_number(lo), "max": short_number(hi), "step": short_number(step) or "any",
                "mid": short_number(lo + (hi - lo) / 2), "ticks": [short_number(t) for t in ticks]}


class LikertForm(AnswerForm):
    """A point of the task's scale (default 1–7) on every named axis."""

    kind = "likert"
    template = "annotation/kinds/_likert.html"

    def points(self) -> list[float | int]:
        return scale_points(*self.task.scale)

    def add_answer_fields(self) -> None:
        choices = [(short_number(p), short_number(p)) for p in self.points()]
        for i, _ in enumerate(self.task.axes or []):
            self.fields[f"a{i}"] = forms.TypedChoiceField(choices=choices, coerce=float, widget=forms.RadioSelect,
                                                          error_messages={"required": "Rate this axis."})

    def value_from_fields(self, data: dict[str, Any]) -> dict[str, float]:
        return {axis: data[f"a{i}"] for i, axis in enumerate(self.task.axes or [])}

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"a{i}": short_number(value.get(axis)) for i, axis in enumerate(self.task.axes or [])}

    def field_for_problem(self, problem: ValidationProblem) -> str | None:
        axes = list(self.task.axes or [])
        axis = problem.field.removeprefix("value.")
        return f"a{axes.index(axis)}" if axis in axes else None

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, axis in enumerate(self.task.axes or []):
            chosen = self.current(f"a{i}")
            points = [{"value": short_number(p), "checked": short_number(p) == chosen} for p in self.points()]
            rows.append({"name": f"a{i}", "axis": axis, "points": points, "errors": self[f"a{i}"].errors})
        return rows


class ClusteringForm(AnswerForm):
    """A cluster name per text; names are free (only the partition counts), so renaming changes nothing."""

    kind = "clustering"
    template = "annotation/kinds/_clustering.html"

    def sentences(self) -> list[str]:
        return self.payload.get("sentences", [])

    def add_answer_fields(self) -> None:
        for i, _ in enumerate(self.sentences()):
            self.fields[f"t{i}"] = forms.CharField(max_length=60,
                                                   error_messages={"required": "Give this text a cluster."})

    def value_from_fields(self, data: dict[str, Any]) -> list[str]:
        return [data[f"t{i}"] for i, _ in enumerate(self.sentences())]

    def initial_from_value(self, value: Any) -> dict[str, Any]:
        return {f"t{i}": str(cid) for i, cid in enumerate(value)}

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": f"t{i}", "text": text, "value": self.current(f"t{i}"), "errors": self[f"t{i}"].errors}
                for i, text in enumerate(self.sentences())]


ANSWER_FORMS: dict[str, type[AnswerForm]] = {form.kind: form for form in (
    ClassificationForm, ClusteringForm, RerankingForm, GradedRelevanceForm, STSForm, PairwiseForm, LikertForm
)}


def answer_form_for(task: Task, payload: dict[str, Any], data: Any = None, *, answer: Any = None) -> AnswerForm:
    return ANSWER_FORMS[task.kind](task, payload, data, answer=answer)


FLAG_TAGS = [("ambiguous", "ambiguous"), ("broken text", "broken text")]
SKIP_REASONS = [
    ("unsure", "I can't judge this confidently"),
    ("language", "Outside my language skills"),
    ("broken", "The text is broken or unreadable"),
    ("other", "Other (say why)"),
]


class FlagForm(ShortEchoes, forms.Form):
    """Why an item is problematic: tags and/or free text. Optional next to an answer, required alone."""

    flag_tags = forms.MultipleChoiceField(choices=FLAG_TAGS, required=False, widget=forms.CheckboxSelectMultiple)
    flag_comment = forms.CharField(required=False, max_length=2000, strip=True)

    def __init__(self, *args: Any, required: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.required = required

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.required and not self.errors and not self.comment_from(cleaned):
            raise forms.ValidationError("Say what is wrong: tick ambiguous or broken text, or write a comment.")
        return cleaned

    @staticmethod
    def comment_from(cleaned: dict[str, Any]) -> str:
        parts = list(cleaned.get("flag_tags") or [])
        if cleaned.get("flag_comment"):
            parts.append(cleaned["flag_comment"])
        return "; ".join(parts)

    @property
    def comment(self) -> str:
        return self.comment_from(self.cleaned_data)


class SkipForm(ShortEchoes, forms.Form):
    skip_reason = forms.ChoiceField(choices=SKIP_REASONS, error_messages={"required": "Choose why you skip."})
    skip_note = forms.CharField(required=False, max_length=480, strip=True)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("skip_reason") == "other" and not cleaned.get("skip_note"):
            self.add_error("skip_note", "Say why you skip this item.")
        return cleaned

    @property
    def reason(self) -> str:
        label = dict(SKIP_REASONS)[self.cleaned_data["skip_reason"]]
        note = self.cleaned_data.get("skip_note")
        return f"{label}: {note}" if note else label
