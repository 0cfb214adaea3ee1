"""A judge's cost beside its tokens (optional prices per 1k tokens), and the 1,024-in-flight limit."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from annotation.llm.run_control import create_run
from annotation.llm.run_executor import execute_run
from tests.llm_helpers import API_KEY_ENV, make_judge, make_task
from tests.llm_server import ChatServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_llm_endpoints")]


def test_a_runs_cost_is_its_tokens_at_the_judges_prices_on_the_page_and_in_the_api(carol, monkeypatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-cost-1")
    task, _items, answers = make_task("sts", 3)
    with ChatServer(answers) as server:
        judge = make_judge("judge-priced", server.base_url, price_per_1k_input=Decimal("0.40"),
                           price_per_1k_output=Decimal("1.60"))
        run = create_run(judge.annotator, task=task)
        execute_run(run.pk)
    run.refresh_from_db()
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    # e.g. gpt-4.1-mini's list prices, $0.40 / $1.60 per million, are 0.0004 / 0.0016 per 1k: here per 1k 0.40 / 1.60
    expected = (Decimal(run.prompt_tokens) * Decimal("0.40") + Decimal(run.completion_tokens) * Decimal("1.60")) / 1000
    assert run.cost == expected.quantize(Decimal("0.0001"))
    client = APIClient()
    client.force_authenticate(carol)
    assert Decimal(client.get(f"/api/v1/llm/runs/{run.pk}/").json()["cost"]) == run.cost
    client.force_login(carol)
    assert f"cost {run.cost} at the configured prices" in client.get(f"/llm/runs/{run.pk}/").content.decode()


def test_without_prices_there_is_no_cost_figure_and_concurrency_goes_to_1024(monkeypatch) -> None:
    judge = make_judge("judge-unpriced", "http://127.0.0.1:9/v1", max_concurrency=1024)
    assert judge.cost(1000, 1000) is None
    assert judge.cost(2000, 500) is None
    judge.price_per_1k_output = Decimal("2")
    assert judge.cost(2000, 500) == Decimal("1.0000")  # input unpriced counts as free
    judge.max_concurrency = 1025
    with pytest.raises(ValidationError) as error:
        judge.full_clean()
    assert set(error.value.message_dict) == {"max_concurrency"}
