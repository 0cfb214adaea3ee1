"""The per-model "researchers may run" switch (issue 23): existing rows get the backend's default."""
from django.db import migrations, models


def fill_defaults(apps, schema_editor):
    model = apps.get_model("model_runs", "EmbeddingModel")
    model.objects.filter(backend="openai").update(researchers_may_run=False)
    model.objects.exclude(backend="openai").update(researchers_may_run=True)


class Migration(migrations.Migration):

    dependencies = [
        ("model_runs", "0003_run_protocol"),
    ]

    operations = [
        migrations.AddField(
            model_name="embeddingmodel",
            name="researchers_may_run",
            field=models.BooleanField(
                blank=True, null=True,
                help_text="Researchers may start runs of this model (admins always may). Left empty, it is set from "
                          "the backend when saved: on for local folders and classical metrics, off for remote "
                          "endpoints, which may cost money per request."),
        ),
        migrations.RunPython(fill_defaults, migrations.RunPython.noop),
    ]
