"""An imported results entry's `kind` (model or human reference) is its `agent`, the word the leaderboard's rows
and the annotators share for what produced the scores (docs/style.md, "Naming"). A rename: every row keeps its
value."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("agreement", "0009_report_annotator_agent")]

    operations = [migrations.RenameField(model_name="resultmodel", old_name="kind", new_name="agent")]
