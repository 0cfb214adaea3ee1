"""A system's ranking of a collection's queries is a `Ranking`, no longer a `Run` (issue 21, item 5: "run" meant
six things). Tables and columns are renamed in place, so every row is kept; the stored evaluation rows name
their ranking under "ranking" instead of "run"."""
import django.db.models.deletion
from django.db import migrations, models


def rows_say_ranking(apps, schema_editor):
    rename_key(apps, "run", "ranking")


def rows_say_run(apps, schema_editor):
    rename_key(apps, "ranking", "run")


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
        migrations.RemoveConstraint(
            model_name='rankingchunk',
            name='run_chunk_once',
        ),
        migrations.RemoveConstraint(
            model_name='rankingentry',
            name='runentry_unique_doc',
        ),
        migrations.RemoveIndex(
            model_name='rankingentry',
            name='retrieval_r_run_id_7e4b7b_idx',
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
        ]
