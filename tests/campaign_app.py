"""The campaign tests' shared study (tests/test_campaigns.py, tests/test_campaign_pages.py and the browser test):
a seeded STS task with an LLM judge on every item, and a person answering through the loop API."""
from __future__ import annotations

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Annotator
from tests.campaign_study import STS_JUDGE_NOISE, sts_pool
from tests.report_builders import build_task, import_answers

JUDGE = "judge-llm"
HEADLINE_SEED = 7  # the simulated pool's seed (tests/campaign_study.py `sts_pool`)


def sts_study(name: str, seed: int = HEADLINE_SEED, n_items: int = 1500, judge: bool = True,
              judge_noise: float = STS_JUDGE_NOISE) -> tuple[object, dict[str, float]]:
    """A 0–5 STS task (steps of 0.1) of the simulated pool's pairs, the judge's whole-number answers imported on
    every item; returns the task and the people's true value per external id."""
    people, judge_values = sts_pool(seed, n_items, judge_noise)
    records = [{"id": str(i), "sentence1": f"first sentence {i}", "sentence2": f"second sentence {i}"}
               for i in range(n_items)]
    task = build_task("sts", name, records, scale_min=0, scale_max=5, scale_step=0.1)
    if judge:
        import_answers(task, [{"item": str(i), "annotator": JUDGE, "annotator_agent": "llm",
                               "value": float(judge_values[i])} for i in range(n_items)])
    return task, {str(i): float(people[i]) for i in range(n_items)}


def api_as(annotator: Annotator) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=annotator.user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def answer_everything(client: APIClient, truth_by_pk: dict[int, float]) -> int:
    """Answer every item the loop hands this person, in its order, with the people's true value; returns how many."""
    answered = 0
    for row in client.get("/api/v1/my/batches/").json():
        while True:
            response = client.get(row["next_url"])
            if response.status_code == 204:  # nothing left for me (the campaign may have stopped)
                break
            assert response.status_code == 200, response.content
            data = response.json()
            posted = client.post(data["answer_url"], {"value": truth_by_pk[data["item"]["id"]]}, format="json")
            assert posted.status_code == 201, posted.content
            answered += 1
    return answered
