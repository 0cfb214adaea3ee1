"""Write the demo campaign's STS pool and its answers (kinds/sts/demo/): run once, the files are committed.

No item-level STS data with human ratings ships with the project (its public HUME results carry scores, not
labels), so the pool is composed for the project, seeded: 600 English caption pairs in the style of the STS
benchmark's video captions, built from people, actions and their paraphrases. Each pair has a true similarity by
its construction (a paraphrase 4.2–5, the same action by someone else about 3, a related action 2–3, the same
person doing something else 1–1.6, unrelated 0–0.5); five raters rate it on the 0–5 scale in steps of 0.5 with
noise of sd 0.5, and the gold is their mean, as the STS benchmark's is. Two of the raters are the demo's people
(alice, bob; `sts-campaign-people.jsonl`: one rating per pair, the person alternating), played back by
`manage.py demo_campaign` for the items the campaign hands them. The LLM judge (`demo-sts-judge`,
`sts-campaign-judge.jsonl`) answers every pair in steps of 0.5, 0.25 too high, with an error whose sd depends on
how hard the pair's kind is (0.45 for paraphrases and unrelated pairs, 1.7 for related ones) and a confidence
that tells that error (about 0.85 where it is small, 0.5 where it is large).

    python scripts/make_demo_campaign_data.py   # rewrites the three files; the same seed gives the same files
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SEED = 34
N_PAIRS = 600
OUT = Path(__file__).resolve().parent.parent / "kinds" / "sts" / "demo"

SUBJECTS = [("A man", "A guy"), ("A woman", "A lady"), ("A boy", "A young boy"), ("A girl", "A little girl"),
            ("Two men", "A pair of men"), ("A chef", "A cook"), ("An old man", "An elderly man"),
            ("A child", "A kid"), ("A musician", "A performer"),
            ("A teenager", "A young person")]
# (action, its paraphrase, a related action): the related one shares the object's domain
ACTIONS = [
    ("is playing a guitar", "is strumming a guitar", "is playing a piano"),
    ("is slicing an onion", "is cutting an onion", "is peeling a potato"),
    ("is riding a bicycle", "is cycling down a road", "is riding a horse"),
    ("is swimming in a pool", "swims in a swimming pool", "is diving into a lake"),
    ("is reading a book", "reads a novel", "is writing a letter"),
    ("is running on a beach", "jogs along the shore", "is walking on a beach"),
    ("is eating a sandwich", "eats a sandwich", "is drinking a coffee"),
    ("is climbing a rock wall", "climbs up a rock face", "is hiking up a hill"),
    ("is playing with a ball", "plays with a ball", "is chasing a frisbee"),
    ("is singing into a microphone", "sings on a stage", "is dancing on a stage"),
    ("is washing a car", "cleans a car with a sponge", "is repairing a bicycle"),
    ("is cooking pasta", "boils some spaghetti", "is baking bread"),
    ("is sleeping on a sofa", "naps on the couch", "is sitting on a sofa"),
    ("is painting a wall", "paints a wall", "is drawing a picture"),
    ("is typing on a laptop", "types on a computer", "is talking on a phone"),
    ("is skiing down a slope", "skis down a mountain", "is snowboarding down a hill"),
]
PLACES = ["in the park", "at home", "in a kitchen", "on a street", "outside", "in the rain"]
# the pair's kind: (share of the pool, true similarity's range, the judge's error sd)
KINDS = {
    "paraphrase": (0.27, (4.2, 5.0), 0.45),
    "other person": (0.16, (2.6, 3.4), 1.7),
    "related action": (0.20, (1.8, 3.0), 1.7),
    "place added": (0.10, (3.4, 4.2), 0.9),
    "same person": (0.12, (0.9, 1.7), 0.9),
    "unrelated": (0.15, (0.0, 0.5), 0.45),
}


def sentence(subject: str, action: str, place: str | None = None) -> str:
    """A caption: the subject, its action (a third-person verb loses the 'is'), and a place."""
    return f"{subject} {action}{' ' + place if place else ''}."


def pair(kind: str, rng: np.random.Generator) -> tuple[str, str]:
    s = SUBJECTS[rng.integers(len(SUBJECTS))]
    a = ACTIONS[rng.integers(len(ACTIONS))]
    if kind == "paraphrase":
        return sentence(s[0], a[0]), sentence(s[rng.integers(2)], a[1])
    if kind == "other person":
        other = SUBJECTS[(SUBJECTS.index(s) + 1 + rng.integers(len(SUBJECTS) - 1)) % len(SUBJECTS)]
        return sentence(s[0], a[0]), sentence(other[0], a[0])
    if kind == "related action":
        return sentence(s[0], a[0]), sentence(s[rng.integers(2)], a[2])
    if kind == "place added":
        return sentence(s[0], a[0]), sentence(s[0], a[1], PLACES[rng.integers(len(PLACES))])
    other_action = ACTIONS[(ACTIONS.index(a) + 1 + rng.integers(len(ACTIONS) - 1)) % len(ACTIONS)]
    if kind == "same person":
        return sentence(s[0], a[0]), sentence(s[0], other_action[0])
    other = SUBJECTS[(SUBJECTS.index(s) + 1 + rng.integers(len(SUBJECTS) - 1)) % len(SUBJECTS)]
    return sentence(s[0], a[0]), sentence(other[0], other_action[0], PLACES[rng.integers(len(PLACES))])


def on_scale(x: np.ndarray | float) -> np.ndarray:
    """To the 0–5 scale in steps of 0.5."""
    return np.clip(np.round(np.asarray(x) * 2) / 2, 0.0, 5.0)


def main() -> None:
    rng = np.random.default_rng(SEED)
    names = list(KINDS)
    kinds = rng.choice(len(names), size=N_PAIRS, p=[KINDS[n][0] for n in names])
    pool, judge, people, seen = [], [], [], set()
    for kind_index in kinds:
        kind = names[kind_index]
        _share, (lo, hi), judge_sd = KINDS[kind]
        first, second = pair(kind, rng)
        while (first, second) in seen:
            first, second = pair(kind, rng)
        seen.add((first, second))
        true = rng.uniform(lo, hi)
        ratings = on_scale(true + rng.normal(0.0, 0.5, size=5))
        item = f"c{len(pool) + 1:03d}"
        pool.append({"id": item, "sentence1": first, "sentence2": second, "score": round(float(ratings.mean()), 2)})
        people.append({"item": item, "annotator": ("alice", "bob")[len(people) % 2], "annotator_agent": "human",
                       "value": float(ratings[0])})
        error_sd = judge_sd * rng.uniform(0.8, 1.2)
        confidence = float(np.clip(1.0 - 0.38 * error_sd + rng.normal(0.0, 0.04), 0.05, 0.99))
        judge.append({"item": item, "annotator": "demo-sts-judge", "annotator_agent": "llm",
                      "value": float(on_scale(true + 0.25 + rng.normal(0.0, error_sd))),
                      "confidence": round(confidence, 2)})
    for path, rows in ((OUT / "sts-campaign-eng.jsonl", pool), (OUT / "answers" / "sts-campaign-judge.jsonl", judge),
                       (OUT / "answers" / "sts-campaign-people.jsonl", people)):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    gold = np.array([r["score"] for r in pool])
    said = np.array([r["value"] for r in judge])
    rated = np.array([r["value"] for r in people])
    print(f"{len(pool)} pairs; people's mean {rated.mean():.3f} sd {rated.std():.3f}; judge's ρ with the people "
          f"{np.corrcoef(said, rated)[0, 1]:.3f}, with the gold {np.corrcoef(said, gold)[0, 1]:.3f}; "
          f"bias {np.mean(said - rated):+.3f}")


if __name__ == "__main__":
    main()
