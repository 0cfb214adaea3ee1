"""The assignment's hold on an item is a `Hold` (was `Lease`): `lease` is the job layer's word (hume/jobs/lease.py;
docs/style.md, "Naming"). Renames only — the table, `held_at` (was `leased_at`), `Batch.hold_seconds` (was
`lease_seconds`), the related names, two constraints and two indexes; every row keeps its values."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_annotator_agent")]

    operations = [
        migrations.RemoveConstraint(model_name="batch", name="batch_lease_positive"),
        migrations.RenameField(model_name="batch", old_name="lease_seconds", new_name="hold_seconds"),
        migrations.AddConstraint(
            model_name="batch",
            constraint=models.CheckConstraint(condition=models.Q(("hold_seconds__gte", 1)), name="batch_hold_positive")),
        migrations.RemoveConstraint(model_name="lease", name="one_lease_per_annotator_item"),
        migrations.RenameModel(old_name="Lease", new_name="Hold"),
        migrations.RenameField(model_name="hold", old_name="leased_at", new_name="held_at"),
        migrations.AlterField(
            model_name="hold", name="annotator",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="holds",
                                    to="annotation.annotator")),
        migrations.AlterField(
            model_name="hold", name="batch_item",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="holds",
                                    to="annotation.batchitem")),
        migrations.AddConstraint(
            model_name="hold",
            constraint=models.UniqueConstraint(fields=("batch_item", "annotator"), name="one_hold_per_annotator_item")),
        migrations.RenameIndex(model_name="hold", new_name="hold_annotator_expires_idx",
                               old_name="annotation__annotat_03cb85_idx"),
        migrations.RenameIndex(model_name="hold", new_name="hold_expires_idx", old_name="annotation__expires_93f692_idx"),
    ]
