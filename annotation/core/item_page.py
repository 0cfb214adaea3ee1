"""The one item page: what the annotator's loop (annotation/views.py) and a crowd participant's run
(annotation/crowd/views.py) show for one item, and how both read what comes back from it.

The page is `templates/annotation/_item_page.html` (instructions, notices, the answer form with the timing
token, the kind's answer partial, the way back, the skip and flag boxes), its scripts
`templates/annotation/_item_scripts.html` (the answer keys, the kind's own scripts, drafts, the loop-wide keys)
and its htmx settings `templates/annotation/_item_head.html`. Each caller wraps it in its own stage: the loop in
its batch header, the crowd in its run header (item n of m, time left, the Leave button). They differ only in
what `ItemPage` holds: the URLs the forms go to, the hidden fields they carry, how htmx swaps the answer's reply.
Nothing here names a kind: the answer partial is the kind's form's `template`, the scripts the kind's own
(`kind_scripts`, files in its folder's static/ that kinds/static_finder.py serves), both asked of the registry.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.core import signing
from django.http import HttpResponse, QueryDict
from django.utils.safestring import SafeString

from annotation.core.forms import AnswerForm, FlagForm, SkipForm, answer_form_for
from annotation.core.models import Batch
from kinds.kind_registry import get_kind
from tasks_app import instructions
from tasks_app.models import Item, Task

SHOWN_SALT = "annotation.item-shown"
SHOWN_MAX_AGE = 24 * 3600
# Item pages run no inline script and load nothing from elsewhere; a payload that slipped past escaping still
# could not execute.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@dataclass(frozen=True)
class Notice:
    """A line above the form (an answer already given, a revision, where a late page landed)."""
    text: str
    id: str = ""


@dataclass(frozen=True)
class ItemPage:
    """How one caller's item page is wired: where its forms go and what they carry.

    `hx_select` empty: the reply to a form is the fragment that replaces #loop's content (the loop); set: the
    reply is a whole page and htmx takes that element of it in place of #loop (the crowd, whose next page may
    be any stage of the run). `side`: the skip and flag boxes are shown (not on practice items)."""
    answer_url: str
    skip_url: str
    flag_url: str
    submit_label: str = "Submit"
    flag_label: str = "Flag and skip"
    hidden: tuple[tuple[str, str], ...] = ()
    hx_select: str = ""
    side: bool = True
    skip_note: str = ""
    back_url: str = ""
    back_hx: bool = False
    forward_url: str = ""
    forward_label: str = "Current item →"
    draft_key: str = ""
    answered: bool = False
    open_instructions: bool = False
    notices: tuple[Notice, ...] = ()


def kind_scripts(task: Task) -> tuple[str, ...]:
    """The scripts the task's kind needs on an item page (its definition's `scripts`, from the registry)."""
    return get_kind(task.kind).scripts


def kind_styles(task: Task) -> tuple[str, ...]:
    """The style sheets of the task's kind's answer partial (its definition's `styles`, from the registry)."""
    return get_kind(task.kind).styles


def instructions_html(task: Task) -> SafeString:
    """Admin-written Markdown, rendered as on every other page (tasks_app/instructions.py, cached there)."""
    return instructions.to_html(task.instructions)


def shown_token(batch: Batch, item: Item) -> str:
    """The signed time an item was put on screen, sent back with the answer (`shown_time`)."""
    return signing.dumps([batch.pk, item.pk, int(time.time() * 1000)], salt=SHOWN_SALT)


def shown_time(token: str | None, batch: Batch, item: Item) -> tuple[datetime | None, int | None]:
    """When this item was put on screen (signed by us, so a client cannot inflate it) and the milliseconds since;
    (None, None) for a missing, forged, expired or other item's token."""
    try:
        batch_id, item_id, shown_ms = signing.loads(token or "", salt=SHOWN_SALT, max_age=SHOWN_MAX_AGE)
    except (signing.BadSignature, ValueError, TypeError):
        return None, None
    if (batch_id, item_id) != (batch.pk, item.pk):
        return None, None
    now_ms = int(time.time() * 1000)
    return datetime.fromtimestamp(shown_ms / 1000, tz=UTC), max(0, now_ms - shown_ms)


def item_page_context(page: ItemPage, batch: Batch, item: Item, *, form: AnswerForm | None = None, answer: Any = None,
            skip_form: SkipForm | None = None, flag_form: FlagForm | None = None) -> dict[str, Any]:
    """What the item page's templates read: the wiring, the forms (an empty answer form, or one holding
    `answer` to revise), a fresh timing token, the instructions and the kind's scripts."""
    task = batch.task
    return {
        "page": page, "task": task, "item": item, "shown": shown_token(batch, item),
        "form": form if form is not None else answer_form_for(task, item.payload, answer=answer),
        "skip_form": skip_form or SkipForm(), "flag_form": flag_form or FlagForm(),
        "instructions": instructions_html(task), "kind_scripts": kind_scripts(task),
        "kind_styles": kind_styles(task),
    }


@dataclass(frozen=True)
class Answer:
    """An answer form as it came back: the kind's form and the flag box (both validated), the shown time."""
    form: AnswerForm
    flag_form: FlagForm
    started_at: datetime | None
    spent_ms: int | None

    @property
    def valid(self) -> bool:
        return self.form.is_valid() and self.flag_form.is_valid()

    @property
    def flag_comment(self) -> str:
        """The flag ticked with the answer ("" when none, or when the flag box did not validate)."""
        return self.flag_form.comment if self.flag_form.is_valid() else ""


def read_answer(batch: Batch, item: Item, data: QueryDict) -> Answer:
    """The posted answer to `item`: its kind's form, the flag box sent with it, and when the item was shown."""
    form = answer_form_for(batch.task, item.payload, data)
    form.is_valid()
    started_at, spent_ms = shown_time(data.get("shown"), batch, item)
    return Answer(form, FlagForm(data), started_at, spent_ms)


def read_side_box(action: str, data: QueryDict) -> SkipForm | FlagForm:
    """The skip box (`action` "skip") or the flag box sent on its own (a reason then is required)."""
    return SkipForm(data) if action == "skip" else FlagForm(data, required=True)


def spent_ms(data: QueryDict, batch: Batch, item: Item) -> int | None:
    """Milliseconds since the item was shown, from the posted timing token (None without a valid one)."""
    return shown_time(data.get("shown"), batch, item)[1]


def with_policy(response: HttpResponse) -> HttpResponse:
    """The response with the item pages' Content-Security-Policy."""
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response
