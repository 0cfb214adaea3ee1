"""clustering's samples: records with gold, a valid answer, import files and model-run data (kinds/samples.py)."""
from __future__ import annotations

import random

from kinds.samples import DemoTask, KindSamples


def report_answer(gold: list[str], rng: random.Random) -> list[int]:
    """The gold sets as numbers, the first text moved to the last one's set now and then."""
    labels = list(gold)
    if rng.random() < 0.3:
        labels[0] = labels[-1]
    return [ord(label[0]) - ord("x") for label in labels]

SAMPLES = KindSamples(
    task_fields={},
    records=[{'id': 'k1',
              'sentences': ['Goal in the last minute',
                            'Striker signs for a new club',
                            'Rain expected tomorrow',
                            'Sunny weekend ahead',
                            'Coach sacked after defeat'],
              'labels': ['sport', 'sport', 'weather', 'weather', 'sport']}],
    valid_answer=lambda payload: ["x"] * len(payload["sentences"]),
    form_data=lambda payload: {f"t{i}": "x" for i, _ in enumerate(payload["sentences"])},
    telltale_gold=(["GOLDCLUSTER-a1", "GOLDCLUSTER-a1", "GOLDCLUSTER-b2", "GOLDCLUSTER-b2", "GOLDCLUSTER-a1"],
                   ["GOLDCLUSTER"]),
    import_options={},
    import_records=[{'id': 'k1', 'sentences': ['Aarhus', 'Bergen', 'Odense'], 'labels': ['dk', 'no', 'dk']}],
    import_gold={'k1': ['dk', 'no', 'dk']},
    import_csv=None,
    model_records=[{'sentences': ['The cat chased a mouse.',
                                  'Dogs love long walks.',
                                  'The parrot repeated my words.',
                                  'Interest rates went up again.',
                                  'The bank approved the loan.',
                                  'Inflation hit a record high.',
                                  'The striker scored twice.',
                                  'The match ended in a draw.',
                                  'Tennis players need fast reflexes.'],
                    'labels': ['animals',
                               'animals',
                               'animals',
                               'money',
                               'money',
                               'money',
                               'sport',
                               'sport',
                               'sport']},
                   {'sentences': ['Bake the cake for forty minutes.',
                                  'Chop the garlic finely.',
                                  'Boil the potatoes in salted water.',
                                  'The train to Paris is delayed.',
                                  'Our flight leaves at dawn.',
                                  'Take the bus to the airport.'],
                    'labels': ['food', 'food', 'food', 'travel', 'travel', 'travel']}],
    model_humans={'alice': [['x', 'x', 'x', 'y', 'y', 'y', 'z', 'z', 'z'], ['a', 'a', 'a', 'b', 'b', 'b']],
                  'bob': [['1', '1', '2', '3', '3', '3', '2', '2', '2'], ['a', 'a', 'b', 'b', 'b', 'b']]},
    report_records=lambda: [{"sentences": [f"s{i}-{j}" for j in range(6)], "labels": ["x", "x", "y", "y", "z", "z"]}
                            for i in range(3)],
    report_gold=lambda record: record["labels"],
    report_answer=report_answer,
    report_charts=('scores', 'distribution'),
    scorer_sample=({"s": {"alice": [0, 0, 1], "bob": [0, 1, 1]}}, {"s": ["a", "a", "b"]}),
    model_task_fields={},
    report_task_fields={},
    llm_record=lambda marker, i: ({"id": marker, "sentences": [f"{marker} cats", "dogs", "stocks", "bonds"],
                             "labels": ["pets", "pets", "money", "money"]},
                            {"1": "animals", "2": "animals", "3": "fin", "4": "fin"}),
    prompt_needles=['"4": "<cluster name>"', "<<<TEXT 3\nstocks\n>>>"],
    demo=(
        DemoTask(name='Paper topics (English)', language='eng-Latn', file='clustering-eng.jsonl', overlap=2,
                 mteb_task_name='ArxivClusteringP2P', mteb_subset='default'),
        DemoTask(name='Cities by country (Danish)', language='dan-Latn', file='clustering-dan.jsonl', overlap=1),
    ),
)
