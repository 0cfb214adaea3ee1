"""What every kind's answer form shares: the base class `AnswerForm` and the helpers its subclasses use
(each kind's own form is kinds/<name>/form.py).

Each form only turns posted fields into the kind's value format (kinds/<name>/definition.py) and then delegates to
`task.validate_answer`, so the browser, the JSON API and imports accept exactly the same answers. Field
names are positional (`c0`, `d1`, `t2`, `a0`): candidate and document ids come from datasets and must never
become HTML names. Forms also hand templates their rows (`form.rows`) so partials render no logic.
"""
from __future__ import annotations

from typing import Any, ClassVar, Protocol

from django import forms

from kinds.base import TaskConfig, ValidationProblem

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


class AnswerTask(TaskConfig, Protocol):
    """What an answer form needs of its task (the Task model satisfies it)."""

    @property
    def scale(self) -> tuple[float, float, float | None]: ...

    def validate_answer(self, value: Any, payload: dict[str, Any]) -> Any: ...


class AnswerForm(ShortEchoes, forms.Form):
    """Base: builds kind-specific fields, assembles the value, validates it with the task's kind."""

    template: ClassVar[str]  # the answer partial, kinds/<name>/answer.html

    def __init__(self, task: AnswerTask, payload: dict[str, Any], *args: Any, answer: Any = None,
                 **kwargs: Any) -> None:
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
