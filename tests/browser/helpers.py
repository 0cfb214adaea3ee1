"""Steps the loop's browser tests share: open a batch, read the item on screen, submit and wait."""
from __future__ import annotations

from playwright.sync_api import Page

from annotation.models import Annotation, Annotator, Batch


def open_batch(page: Page, base_url: str, batch: Batch) -> int:
    page.goto(f"{base_url}/annotate/b/{batch.pk}/")
    return item_on_screen(page)


def item_on_screen(page: Page) -> int:
    page.wait_for_selector("#answer-form")
    return int(page.get_attribute("#loop > section", "data-item") or 0)


def enter_and_wait(page: Page) -> int | None:
    """Press Enter and wait for htmx to swap in the next item; its id, or None when the batch is done."""
    before = page.get_attribute("#loop > section", "data-item")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "b => { const s = document.querySelector('#loop > section'); return s && s.dataset.item !== b; }", arg=before)
    after = page.get_attribute("#loop > section", "data-item")
    return int(after) if after else None


def stored(annotator: Annotator, batch: Batch) -> dict[int, object]:
    return dict(Annotation.objects.filter(annotator=annotator, batch=batch).values_list("item_id", "value"))
