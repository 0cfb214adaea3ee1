"""The embedded default under a crowd (issue 36, item 3): no "database is locked" reaches a participant.

A real server on a SQLite file, as the embedded mode runs it (`manage.py runserver`, hume/settings.py's SQLite
options), with a busy timeout of 20 ms (SQLITE_BUSY_TIMEOUT) and another connection that holds the write lock
for 250 ms in every 500 ms: the busy moments a crowd makes on a loaded machine, made certain. Six participants
at once go through the whole study (arrival, instructions, every answer). Without hume/sqlite_busy.py their
writes met "database is locked" and the pages answered 500 (SQLITE_LOCKED_RETRIES=0 shows the moments are
met); with it, every page is a page, every participant completes, every answer is stored once.
"""
from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PARTICIPANTS, QUOTA = 6, 3
N_ITEMS = PARTICIPANTS * QUOTA + 5
SEED = f"""
from annotation.core.batches import BatchSpec, create_batch
from annotation.crowd import studies
from tasks_app.models import Item, Task
for run in ("0", "6"):
    task = Task.objects.create(name=f"Busy {{run}}", kind="classification", language="eng-Latn",
                               labels=["positive", "negative"])
    Item.objects.bulk_create(Item(task=task, uid=f"busy-{{run}}-{{i}}", external_id=str(i), position=i,
                                  payload={{"text": f"Busy sentence {{i}}."}}) for i in range({N_ITEMS}))
    batch, _ = create_batch(BatchSpec(task=task, overlap=1))
    link = studies.create_study_link(batch, studies.LinkSettings(quota={QUOTA}, minutes=30, completion_code="BUSY"))
    print(run, link.token)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A migrated SQLite file with a study link per test (quota 3, k = 1, room for everyone: a run that meets
    500s leaves held items behind); (file, env, {SQLITE_LOCKED_RETRIES: token})."""
    path = tmp_path_factory.mktemp("busy") / "busy.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "DJANGO_SETTINGS_MODULE": "hume.settings",
           "DEBUG": "true", "CROWD_ARRIVALS_PER_MINUTE": "1000", "SQLITE_BUSY_TIMEOUT": "0.02"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
    seeded = subprocess.run([sys.executable, "manage.py", "shell", "-c", SEED], cwd=REPO, env=env, check=True,
                            capture_output=True, text=True)
    return path, env, dict(line.split() for line in seeded.stdout.strip().splitlines()[-2:])


def hold_the_lock(path: Path, stop: threading.Event) -> None:
    """Another writer: the write lock for 250 ms in every 500 ms."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    while not stop.is_set():
        conn.execute("BEGIN IMMEDIATE")
        time.sleep(0.25)
        conn.execute("COMMIT")
        time.sleep(0.25)
    conn.close()


def participate(port: int, token: str, name: str, statuses: Counter, ends: dict, lock: threading.Lock) -> None:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    base = f"http://127.0.0.1:{port}"

    def fetch(path: str, form: dict | None = None) -> str:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            with opener.open(base + path, data=data, timeout=60) as response:
                status, page = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, page = error.code, error.read().decode(errors="replace")
        with lock:
            statuses[status] += 1
        for _ in range(20):  # the busy page loads the participant's page again by itself
            again = re.search(r'id="study-busy".*?href="([^"]+)"', page, re.S)
            if again is None:
                break
            with lock:
                statuses["busy page"] += 1
            time.sleep(1)
            page = fetch(again.group(1))
        return page

    page = fetch(f"/study/{token}/?participant={name}")
    for _ in range(QUOTA + 5):
        if 'id="completion-code"' in page or "csrfmiddlewaretoken" not in page:
            break
        form = {key: found.group(1) for key in ("csrfmiddlewaretoken", "tab", "item", "shown")
                if (found := re.search(rf'name="{key}" value="([^"]*)"', page))}
        form |= {"action": "answer", "label": "positive"} if "item" in form else {"action": "instructions"}
        page = fetch(f"/study/{token}/run/", form)
    ends[name] = 'id="completion-code">BUSY<' in page


def crowd(database: tuple[Path, dict[str, str], dict[str, str]], retries: str) -> tuple[Counter, dict]:
    path, env, tokens = database
    token = tokens[retries]
    port = free_port()
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                              cwd=REPO, env={**env, "SQLITE_LOCKED_RETRIES": retries}, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop, statuses, ends, lock = threading.Event(), Counter(), {}, threading.Lock()
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz/", timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        holder = threading.Thread(target=hold_the_lock, args=(path, stop))
        holder.start()
        people = [threading.Thread(target=participate, args=(port, token, f"{retries}-p{i}", statuses, ends, lock))
                  for i in range(PARTICIPANTS)]
        for person in people:
            person.start()
        for person in people:
            person.join(timeout=240)
    finally:
        stop.set()
        server.terminate()
        server.wait(timeout=30)
    holder.join()
    return statuses, ends


def answers_of(path: Path, prefix: str) -> list[int]:
    conn = sqlite3.connect(path)
    rows = conn.execute("""SELECT COUNT(a.id) FROM annotation_participant p LEFT JOIN annotation_annotation a
                           ON a.annotator_id = p.annotator_id WHERE p.platform_id LIKE ? GROUP BY p.id""",
                        (f"{prefix}-%",)).fetchall()
    conn.close()
    return [n for (n,) in rows]


def test_without_retries_the_participants_meet_the_locked_database(database):
    statuses, _ = crowd(database, "0")
    assert statuses[500] + statuses["busy page"] > 0, statuses


def test_a_crowd_on_sqlite_gets_pages_never_a_500_and_completes(database):
    statuses, ends = crowd(database, "6")
    assert not [code for code in statuses if isinstance(code, int) and code >= 500], statuses
    assert ends == {f"6-p{i}": True for i in range(PARTICIPANTS)}, (ends, statuses)
    assert answers_of(database[0], "6") == [QUOTA] * PARTICIPANTS
