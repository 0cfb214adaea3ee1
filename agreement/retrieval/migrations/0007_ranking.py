"""A system's ranking of a collection's queries is a `Ranking`, no longer a `Run` (issue 21, item 5: "run" meant
six things). Tables and columns are renamed in place, so every row is kept; the stored evaluation rows name
their ranking under "ranking" instead of "run". A ranking's status and claim become the job layer's
(hume/jobs/models.py), so a BM25 ranking started from the page is a leased job like the others (issue 21,
item 2)."""
import django.db.models.deletion
from django.db import migrations, models


def rows_say_ranking(apps, schema_editor):
    rename_key(apps, "run", "ranking")


def rows_say_run(apps, schema_editor):
    rename_key(apps, "ranking", "run")


def bm25_rankings_join_the_job_layer(apps, schema_editor):
    """A BM25 ranking a worker was writing under the old claim has no lease: give it one that has lapsed, so the
    job layer's beat sends it to a worker again; its k, if the row has none, is the page's default."""
    from django.utils import timezone

    Ranking = apps.get_model("retrieval", "Ranking")
    Ranking.objects.filter(kind="bm25", status="running").update(lease_expires_at=timezone.now(), attempts=1)
    Ranking.objects.filter(kind="bm25", status__in=["queued", "running"], k__isnull=True).update(k=100)


def rename_key(apps, old, new):
    Evaluation = apps.get_model("retrieval", "Evaluation")
    for evaluation in Evaluation.objects.exclude(rows=[]).only("pk", "rows"):
        rows = [{(new if key == old else key): value for key, value in row.items()} for row in evaluation.rows]
        Evaluation.objects.filter(pk=evaluation.pk).update(rows=rows)


class Migration(migrations.Migration):

    dependencies = [
        ("retrieval", "0006_job_layer"),
        ("model_runs", "0001_initial"),
    ]

    operations = [
        # The old constraints and index name the old field: dropped first (and made again below), so the
        # migration also runs backwards.
        migrations.RemoveConstraint(model_name="runchunk", name="run_chunk_once"),
        migrations.RemoveConstraint(model_name="runentry", name="runentry_unique_doc"),
        migrations.RemoveIndex(model_name="runentry", name="retrieval_r_run_id_7e4b7b_idx"),
        migrations.RenameModel("Run", "Ranking"),
        migrations.RenameModel("RunEntry", "RankingEntry"),
        migrations.RenameModel("RunChunk", "RankingChunk"),
        migrations.RenameField("rankingentry", "run", "ranking"),
        migrations.RenameField("rankingchunk", "run", "ranking"),
        migrations.RenameField("ranking", "base_run", "base_ranking"),
        migrations.RenameField("pool", "runs", "rankings"),
        migrations.RunPython(rows_say_ranking, rows_say_run),
        migrations.AlterModelOptions(
            name='rankingchunk',
            options={'ordering': ['ranking', 'subset', 'doc_start']},
        ),
        migrations.AlterField(
            model_name='evaluation',
            name='digest',
            field=models.CharField(blank=True, help_text='sha256 of the rankings and judgments read.', max_length=64),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='base_ranking',
            field=models.ForeignKey(blank=True, help_text='For a reranked ranking: the ranking whose top-K it reorders.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='reranked', to='retrieval.ranking'),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='collection',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rankings', to='retrieval.collection'),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='depth',
            field=models.PositiveIntegerField(default=0, help_text='The longest list of a query in this ranking.'),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='device',
            field=models.CharField(blank=True, help_text='Where an embedding ranking was computed: cpu, cuda:0, mps (comma-separated when workers on several devices shared it); empty for imported and BM25 rankings.', max_length=100),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='error',
            field=models.TextField(blank=True, help_text='Why a ranking started from the page failed.'),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='kind',
            field=models.CharField(choices=[('imported', 'imported TREC run'), ('embedding', 'embedding model (exact cosine top-K)'), ('bm25', 'BM25 (bm25s)'), ('reranked', "reranker over another ranking's top-K")], default='imported', max_length=20),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed')], default='done', help_text='A ranking started from the page is queued, then ranked by a worker; imported rankings and rankings made by a command are done when written.', max_length=10),
        ),
        migrations.AddIndex(
            model_name='rankingentry',
            index=models.Index(fields=['ranking', 'query', 'rank'], name='retrieval_r_ranking_a1872d_idx'),
        ),
        migrations.AddConstraint(
            model_name='rankingchunk',
            constraint=models.UniqueConstraint(fields=('ranking', 'subset', 'doc_start'), name='ranking_chunk_once'),
        ),
        migrations.AddConstraint(
            model_name='rankingentry',
            constraint=models.UniqueConstraint(fields=('ranking', 'query', 'document'), name='rankingentry_unique_doc'),
        ),
        migrations.AddField(
            model_name='ranking',
            name='attempts',
            field=models.PositiveIntegerField(default=0, help_text='Claims won, including take-overs after a crash.'),
        ),
        migrations.AddField(
            model_name='ranking',
            name='claim_token',
            field=models.UUIDField(blank=True, help_text='Fences writes to the run that holds the claim.', null=True),
        ),
        migrations.AddField(
            model_name='ranking',
            name='claimed_by',
            field=models.CharField(blank=True, help_text="What holds the claim: a Celery message id, or 'cli'.", max_length=255),
        ),
        migrations.AddField(
            model_name='ranking',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='ranking',
            name='holder',
            field=models.CharField(blank=True, help_text='The worker process holding it: host:pid.', max_length=255),
        ),
        migrations.AddField(
            model_name='ranking',
            name='k',
            field=models.PositiveIntegerField(blank=True, help_text='For a ranking a worker writes: how many documents per query it keeps.', null=True),
        ),
        migrations.AddField(
            model_name='ranking',
            name='lease_expires_at',
            field=models.DateTimeField(blank=True, help_text='A running claim not renewed by then is abandoned.', null=True),
        ),
        migrations.AddField(
            model_name='ranking',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='error',
            field=models.TextField(blank=True, help_text='Why the last run failed or could not be queued.'),
        ),
        migrations.AlterField(
            model_name='ranking',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed'), ('cancelled', 'cancelled')], default='queued', max_length=16),
        ),
        migrations.RunPython(bm25_rankings_join_the_job_layer, migrations.RunPython.noop),
    ]
