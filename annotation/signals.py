"""Signals other apps listen to. Bulk writes send no post_save, so they announce themselves here."""
from django.dispatch import Signal

# Sent inside the transaction of a bulk annotation write, with `task_id`; listeners defer work to on_commit.
annotations_imported = Signal()
