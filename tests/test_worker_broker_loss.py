"""The worker outlives its broker: Redis stopped while jobs flow and started again, every queued job runs once
(issue 23, item 1: the worker died with `AttributeError: 'NoneType' object has no attribute 'hostname'`; the
cause and the fix are in hume/broker.py).

Everything is real and under production settings (DEBUG off): a redis-server of the test's own with its data on
disk (tests/throwaway_redis.py; the shared Redis is never touched), a Celery worker started as scripts/run
starts it (embedded beat, prefork pool of two), and a client sending a job every 20 ms throughout. Each job
writes one line when it has run (tests/broker_loss_worker_settings.py), so a lost job is a missing line and a
job run twice a repeated one."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from celery import Celery

from tests.conftest import REPO, database_url_for_subprocess, stop_process
from tests.throwaway_redis import ThrowawayRedis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
SAFE_KEY = "broker-loss-test-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def client_for(url: str) -> Celery:
    app = Celery("broker-loss-client", broker=url, set_as_current=False)
    app.conf.update(broker_transport="hume.broker:Transport", task_default_queue="celery",
                    broker_connection_retry=False, broker_connection_max_retries=0)
    return app


class Sender(threading.Thread):
    """Sends job 0, 1, 2, … every 20 ms until stopped; remembers which sends the broker accepted."""

    def __init__(self, app: Celery) -> None:
        super().__init__(daemon=True)
        self.app, self.accepted, self.refused, self.stopping = app, [], [], threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stopping.is_set():
            try:
                self.app.send_task("tests.record_job", (n,), retry=False)
                self.accepted.append(n)
            except Exception:  # the broker is down: this job was never queued
                self.refused.append(n)
            n += 1
            time.sleep(0.02)


def wait_until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout:g}s: {what}")


def runs(log: Path) -> Counter:
    return Counter(int(line) for line in log.read_text().split()) if log.exists() else Counter()


def test_redis_stopped_and_started_under_load_the_same_worker_runs_every_queued_job_once(tmp_path: Path) -> None:
    redis = ThrowawayRedis(data_dir=tmp_path)
    redis.start()
    log, worker_log = tmp_path / "done.log", tmp_path / "worker.log"
    env = {**os.environ, "DEBUG": "false", "SECRET_KEY": SAFE_KEY, "ALLOWED_HOSTS": "localhost",
           "DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": redis.url,
           "DJANGO_SETTINGS_MODULE": "tests.broker_loss_worker_settings",
           "HUME_TEST_JOB_LOG": str(log), "HUME_TEST_JOB_SECONDS": "0.15"}
    with worker_log.open("w") as output:
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "hume", "worker", "-B", "--without-gossip",
                                   "--without-mingle", "--loglevel=INFO", "--concurrency=2", "-n", "broker-loss@%h"],
                                  cwd=REPO, env=env, start_new_session=True, stdout=output, stderr=output)
    app = client_for(redis.url)
    sender = Sender(app)
    try:
        wait_until(lambda: bool(app.control.ping(timeout=0.5)), 60, "the worker answers a ping")
        sender.start()
        wait_until(lambda: len(runs(log)) >= 20, 60, "jobs flow")  # a busy machine starts slowly
        redis.stop()  # killed outright while jobs run, are prefetched and are being sent
        before = len(sender.accepted)
        time.sleep(4)
        redis.start()  # same port, same data folder
        wait_until(lambda: len(sender.accepted) >= before + 20, 60, "sends accepted again")
        sender.stopping.set()
        sender.join(timeout=10)
        assert sender.refused, "some sends should have met the stopped broker"
        assert before >= 20
        wait_until(lambda: set(runs(log)) >= set(sender.accepted), 120, "every accepted job ran")
        time.sleep(2)  # let a duplicate, if any, show up
        done = runs(log)
        assert worker.poll() is None, worker_log.read_text()[-3000:]
        text = worker_log.read_text()
        assert "Unrecoverable error" not in text and "AttributeError" not in text, text[-3000:]
        assert "Connection to broker lost" in text  # the loss happened under the worker, not only the client
        assert [n for n, times in done.items() if times > 1] == []  # no job ran twice
        assert set(done) - set(sender.accepted) <= set(sender.refused)  # nothing ran that was never sent
    finally:
        sender.stopping.set()
        stop_process(worker)
        redis.stop()


def delivered_then_broker_lost(redis: ThrowawayRedis, transport: str):
    """Two messages delivered to a consumer and not acknowledged; then Redis is killed and the connection
    collected, as the worker does on a lost broker; the channel's pool is gone, as after its close."""
    from kombu import Connection, Consumer, Producer, Queue

    queue = Queue("broker-loss")
    with Connection(redis.url) as sender:
        for n in (1, 2):
            Producer(sender).publish({"n": n}, routing_key=queue.name, declare=[queue])
    connection = Connection(redis.url, transport=transport)
    channel, got = connection.default_channel, []
    Consumer(channel, [queue], callbacks=[lambda body, message: got.append(message)], accept=["json"]).consume()
    while len(got) < 2:
        connection.drain_events(timeout=5)
    redis.stop()
    try:
        connection.collect(socket_timeout=0.1)
    except Exception:  # the worker ignores what the collect raises; so does this
        pass
    channel._disconnect_pools()
    return got, queue


def test_stock_kombu_acknowledging_after_the_broker_loss_raises_the_worker_killing_attribute_error(
        tmp_path: Path) -> None:
    redis = ThrowawayRedis(data_dir=tmp_path)
    redis.start()
    try:
        got, _ = delivered_then_broker_lost(redis, "redis")
        with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'hostname'"):
            got[0].ack()
    finally:
        redis.stop()


def test_with_hume_broker_the_late_acknowledgement_is_stored_and_the_other_message_put_back(tmp_path: Path) -> None:
    from kombu import Connection, Consumer
    from redis.exceptions import ConnectionError as RedisConnectionError

    from hume import broker

    redis = ThrowawayRedis(data_dir=tmp_path)
    redis.start()
    try:
        got, queue = delivered_then_broker_lost(redis, "hume.broker:Transport")
        with pytest.raises(RedisConnectionError):  # a connection error: Celery logs it and carries on
            got[0].ack()
        assert broker.owed() == ({got[1].delivery_tag}, {got[0].delivery_tag})
        redis.start()
        again = []
        with Connection(redis.url, transport="hume.broker:Transport") as connection:  # its channel settles them
            Consumer(connection.default_channel, [queue], accept=["json"],
                     callbacks=[lambda body, message: (again.append(body["n"]), message.ack())]).consume()
            connection.drain_events(timeout=5)
            with pytest.raises(TimeoutError):
                connection.drain_events(timeout=1)
        assert again == [2]  # message 1 was acknowledged late, message 2 put back and delivered once
        assert broker.owed() == (set(), set())
    finally:
        redis.stop()
