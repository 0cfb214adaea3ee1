"""A ranking's `kind` is its `method` (issue 38 item 5: "kind" meant the task kind, the annotator kind, the
ranking method and the results entry kind; it keeps only the first). The column is renamed in place, so every
row is kept; the stored evaluation rows name their ranking's method under "method" instead of "kind"."""
from django.db import migrations, models


def rows_say_method(apps, schema_editor):
    rename_key(apps, "kind", "method")


def rows_say_kind(apps, schema_editor):
    rename_key(apps, "method", "kind")


def rename_key(apps, old, new):
    Evaluation = apps.get_model("retrieval", "Evaluation")
    for evaluation in Evaluation.objects.exclude(rows=[]).only("pk", "rows"):
        rows = [{(new if key == old else key): value for key, value in row.items()} for row in evaluation.rows]
        Evaluation.objects.filter(pk=evaluation.pk).update(rows=rows)


class Migration(migrations.Migration):
    dependencies = [("retrieval", "0007_ranking")]

    operations = [
        migrations.RenameField(model_name="ranking", old_name="kind", new_name="method"),
        migrations.RunPython(rows_say_method, rows_say_kind),
    ]
