"""One way to run a job (issue 38, item 1): the job layer (hume/jobs/) alone writes a job's lease and status
columns, every job type is capped, and no recovery finder lives outside the layer (docs/architecture.md,
"The job layer").

The writes are counted statically over the app code (migrations and tests aside): an ORM `.update(...)` of a
job model naming a lease or status column, a `Lease.write(...)` naming one, raw SQL `UPDATE … SET` of the
lease columns (or of `status` on a job model's table), and an assignment to `.status` / a lease column in a
function that saves, a status or lease column passed through a layer verb, spread into one from a dict or
given as `QuerySet.update_or_create` defaults. Before this change: 21 such writes in 11 files by this count (the
issue's count said 25 in 12); 2 uncapped job types (the report, the split-ranking chunk); 4 `apply_async`
re-sends in 3 tasks.py (the countdown loops); 5 dead finders. After: 0, 0, 0, 0."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from hume.jobs import outbox, recovery
from hume.jobs.lease import exhausted_message
from hume.jobs.models import LEASE_FIELDS
from hume.jobs.registry import TYPES

REPO = Path(__file__).resolve().parent.parent
APPS = ("measures", "kinds", "hume", "tasks_app", "annotation", "agreement")
LEASE_COLUMNS = {"claim_token", "lease_expires_at", "holder", "claimed_by", "attempts"}
# The layer's verbs that take more columns as keywords: a status or lease column passed through them is a write
# the caller made, not the layer.
LAYER_VERBS = {"write", "finish", "fail", "release", "submit", "start", "cancel"}
SQL_LEASE = re.compile(r"\bUPDATE\b[\s\S]*\bSET\b[\s\S]*\b(lease_expires_at|claim_token)\s*=", re.I)
SQL_STATUS = re.compile(r"\bUPDATE\s+\{([^}]*)\}[^;]*?\bSET\b[\s\S]*?\bstatus\s*=", re.I)


def app_files() -> Iterator[tuple[str, ast.Module]]:
    for app in APPS:
        for path in sorted((REPO / app).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if not rel.startswith("hume/jobs/") and "/migrations/" not in rel:
                yield rel, ast.parse(path.read_text(), filename=rel)


def job_models() -> set[str]:
    """Names of the concrete job models: classes whose base is `Job`."""
    names = set()
    for _, tree in app_files():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "Job" for b in node.bases):
                names.add(node.name)
    return names


def root_name(node: ast.expr) -> str:
    """The name a call chain starts from: `Report` in `Report.objects.filter(...).update`."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def fstring_text(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                   for v in node.values if isinstance(v, ast.Constant | ast.FormattedValue))


def job_column_writes() -> list[str]:
    jobs = job_models()
    return sorted({write for rel, tree in app_files() for write in writes_in(rel, tree, jobs)})


def writes_in(rel: str, tree: ast.Module, jobs: set[str]) -> list[str]:
    """The writes of lease or status columns of the job models ``jobs`` in one module."""
    found: list[str] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        saves = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "save"
                    for n in ast.walk(fn))
        spreads = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                      and n.func.attr in {"update", *LAYER_VERBS} and any(k.arg is None for k in n.keywords)
                      for n in ast.walk(fn))
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                named = {k.arg for k in node.keywords if k.arg} & set(LEASE_FIELDS)
                on_job = node.func.attr == "update" and root_name(node.func.value) in jobs
                through_layer = node.func.attr in LAYER_VERBS and named & (LEASE_COLUMNS | {"status"})
                if (on_job and named & (LEASE_COLUMNS | {"status", "error"})) or through_layer:
                    found.append(f"{rel}:{node.lineno} {node.func.attr}({', '.join(sorted(named))})")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "update_or_create" and root_name(node.func.value) in jobs:
                defaults = [k.value for k in node.keywords if k.arg == "defaults" and isinstance(k.value, ast.Dict)]
                keys = {k.value for d in defaults for k in d.keys if isinstance(k, ast.Constant)}
                if keys & (LEASE_COLUMNS | {"status"}):
                    found.append(f"{rel}:{node.lineno} update_or_create(defaults={{{', '.join(sorted(keys))}}})")
            if isinstance(node, ast.Dict) and spreads:  # {"status": …} spread into an update or a lease's write
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)} & (LEASE_COLUMNS | {"status"})
                if keys:
                    found.append(f"{rel}:{node.lineno} {{{', '.join(sorted(keys))}}} spread into a write")
            if isinstance(node, ast.Assign) and saves:
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and target.attr in LEASE_COLUMNS | {"status"}:
                        found.append(f"{rel}:{node.lineno} .{target.attr} = … .save()")
    for node in ast.walk(tree):
        text = (node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                else fstring_text(node) if isinstance(node, ast.JoinedStr) else None)
        if text is None:
            continue
        status_on = SQL_STATUS.search(text)
        if SQL_LEASE.search(text) or (status_on and any(re.search(rf"\b{m}\b", status_on.group(1)) for m in jobs)):
            found.append(f"{rel}:{node.lineno} SQL UPDATE … SET of a lease or status column")
    return found


def test_the_scanner_finds_the_kinds_of_write_it_counts() -> None:
    """The count below is only as good as its scanner: each form it looks for is found in a sample."""
    sample = ast.parse('''
def a():
    Report.objects.filter(pk=1).update(status="done")
def b(lease):
    lease.write(lease_expires_at=None)
def c(run):
    run.status = "queued"
    run.save()
def d(cursor, table):
    cursor.execute(f"UPDATE {table} SET lease_expires_at = %s WHERE id = %s")
def e(cursor):
    LLMRequest.objects.update(status="failed")  # not a job model: a request's own state
def f(lease):
    lease.release(attempts=0)
def g(lease):
    fields = {"status": "done", "stage": ""}
    lease.write(**fields)
def h():
    Report.objects.update_or_create(task_id=1, defaults={"status": "queued"})
''')
    assert sorted((write.split(" ", 1)[0] for write in writes_in("sample", sample, {"Report"})),
                  key=lambda at: int(at.split(":")[1])) == [
        "sample:3", "sample:5", "sample:7", "sample:10", "sample:14", "sample:16", "sample:19"]
    assert root_name(sample.body[0].body[0].value.func.value) == "Report"
    assert {"Report", "ModelRun", "RunChunk", "Ranking", "RankingChunk", "LLMRun", "ImportJob"} <= job_models()


def test_no_code_outside_the_job_layer_writes_a_lease_or_status_column() -> None:
    assert job_column_writes() == []


def test_every_registered_job_type_has_an_attempt_cap(settings) -> None:  # type: ignore[no-untyped-def]
    assert len(TYPES) >= 11
    caps = {name: job_type.cap() for name, job_type in TYPES.items()}
    assert caps == {name: settings.JOB_MAX_ATTEMPTS for name in TYPES}
    settings.JOB_MAX_ATTEMPTS = 5
    assert {job_type.cap() for job_type in TYPES.values()} == {5}


def test_no_recovery_finder_outside_the_layer() -> None:
    """The five finders only tests called are gone; the layer's `recovery.lapsed_keys` and `recovery.waiting`
    are the one finder every type goes through."""
    defined = {node.name for _, tree in app_files() for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert defined & {"dead_chunks", "dead_scorings", "dead_split_rankings", "dead_or_waiting_reports",
                      "resumable_chunks"} == set()


@pytest.mark.django_db(transaction=True)
def test_a_report_whose_workers_keep_dying_fails_on_the_cap_instead_of_a_fourth_claim(settings) -> None:  # type: ignore[no-untyped-def]
    """The report used to be claimed with no cap: a report that killed every worker was re-claimed for ever."""
    from agreement.core.reports import claim
    from agreement.models import Report
    from tests.report_builders import build_task

    task = build_task("classification", "capped-report", [{"text": "t", "label": "a"}], labels=["a", "b"])
    Report.objects.create(task=task)
    for attempt in range(settings.JOB_MAX_ATTEMPTS):
        assert claim(task.pk, f"message-{attempt}") is not None  # a worker takes it ... and dies
        Report.objects.filter(task=task).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert recovery.lapsed_keys(TYPES["report"]) == [task.pk]
    assert claim(task.pk, "message-last") is None
    report = Report.objects.get(task=task)
    assert (report.status, report.attempts, report.error) == ("failed", 3, exhausted_message(3))
    # asked for again (new answers, a user's button), it starts afresh with its attempts back
    from agreement.core.report_queue import request_report

    with transaction.atomic():  # the message waits in the outbox: no worker here
        request_report(task.pk)
        outbox.UnsentMessage.objects.all().delete()
    report.refresh_from_db()
    assert (report.status, report.attempts, report.error) == ("queued", 0, "")


@pytest.mark.django_db(transaction=True)
def test_a_split_ranking_chunk_whose_workers_keep_dying_fails_its_ranking_on_the_cap(settings) -> None:  # type: ignore[no-untyped-def]
    """The split-ranking chunk used to be claimed with no cap; now the chunk fails on the cap and its ranking
    fails with the chunk named (the parent-with-chunks barrier of hume/jobs/control.py)."""
    from agreement.model_runs.models import EmbeddingModel
    from agreement.retrieval import split_rankings
    from agreement.retrieval.models import Collection, RankingChunk
    from tests.retrieval_helpers import load_minifact

    load_minifact()
    call_command("add_model", "minilm", "--backend", "sentence-transformers", "--shipped", stdout=StringIO())
    collection = Collection.objects.get()
    with transaction.atomic():  # its messages wait in the outbox: no worker here
        ranking = split_rankings.start_split_embedding_ranking(collection, "capped", EmbeddingModel.objects.get(), k=2,
                                                               docs_per_chunk=10**6)
        outbox_rows = list(outbox.UnsentMessage.objects.values_list("pk", flat=True))
        outbox.UnsentMessage.objects.filter(pk__in=outbox_rows).delete()
    RankingChunk.objects.filter(ranking=ranking).exclude(pk=RankingChunk.objects.filter(ranking=ranking)
                                                           .order_by("pk").first().pk).delete()
    chunk = RankingChunk.objects.get(ranking=ranking)
    for _ in range(settings.JOB_MAX_ATTEMPTS):
        assert split_rankings.claim_chunk(ranking.pk) is not None
        RankingChunk.objects.filter(pk=chunk.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert split_rankings.work(ranking.pk) == 0
    chunk.refresh_from_db()
    ranking.refresh_from_db()
    assert (chunk.status, chunk.attempts, chunk.error) == ("failed", 3, exhausted_message(3))
    assert ranking.status == "failed"
    assert ranking.error.startswith("chunk of documents 1-") and "taken 3 times and never finished" in ranking.error


def test_no_task_reschedules_itself_by_hand() -> None:
    """A job's message comes back only through the layer (`recovery.look_again`): no `apply_async` with a
    countdown outside hume/jobs/ (there were three such loops: the report, the model-run chunk, the LLM run)."""
    loops = [f"{rel}:{node.lineno}" for rel, tree in app_files() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply_async"]
    assert loops == []
