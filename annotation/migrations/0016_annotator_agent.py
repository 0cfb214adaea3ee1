"""The annotator's `kind` (human or llm) is its `agent`: `kind` is the task kind's word (docs/style.md, "Naming").
A rename of the column: every row keeps its value. The LLM configs' and panels' choice filters follow the name
(no change in the database)."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0015_batch_hands_out")]

    operations = [
        migrations.RenameField(model_name="annotator", old_name="kind", new_name="agent"),
        migrations.AlterField(
            model_name="llmannotatorconfig", name="annotator",
            field=models.OneToOneField(limit_choices_to={"agent": "llm"}, on_delete=django.db.models.deletion.CASCADE,
                                       related_name="llm_config", to="annotation.annotator")),
        migrations.AlterField(
            model_name="llmjudgepanel", name="judges",
            field=models.ManyToManyField(limit_choices_to={"agent": "llm"}, related_name="llm_panels",
                                         to="annotation.annotator")),
    ]
