"""A trivial task goes through the real Redis broker to a real worker process and back."""
import pytest

from agreement.tasks import ping


@pytest.mark.worker
def test_a_ping_task_round_trips_through_redis_and_a_worker(start_worker) -> None:
    start_worker()
    result = ping.delay("hello from the test")
    assert result.get(timeout=30) == "hello from the test"
