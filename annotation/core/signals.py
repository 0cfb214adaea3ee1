"""Signals other apps listen to. Bulk writes send no post_save, so they announce themselves here."""
from django.dispatch import Signal

# Sent inside the transaction of a bulk annotation write, with `task_id`; listeners defer work to on_commit.
annotations_imported = Signal()

# Sent when an admin asks to recompute a judge panel's mean and agreement, with `panel_id`. Agreement owns
# that work (agreement/core/judge_panels.py) and enqueues it after commit; with no listener nothing would run.
judge_panel_refresh_requested = Signal()

# Sent when a worker lets an LLM run go with nothing left to send (done, failed, cancelled or paused), when a message
# finds it inactive, and when an admin cancels one, with `run_id`, after the run's row is written. A campaign
# waiting for its judge's run listens (agreement/campaigns/review_queue.py `judge_run_finished`); a receiver reads
# the run's status itself.
llm_run_finished = Signal()

# Sent when a participant of a study link finds nothing left for them in the link's batch (annotation/crowd/
# studies.py `move_on`), with `link_id`, that `batch_id` and the participant's `annotator_id`, inside their
# request. A campaign whose people are that link points it at a batch with an item for them, drawing the next
# batch when none has one (agreement/campaigns/reviewing.py `link_ran_dry`); with no listener the participant's
# run ends as the link's batch is out of items.
study_link_ran_dry = Signal()
