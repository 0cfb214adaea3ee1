"""sts's samples: records with gold, a valid answer, import files and model-run data (kinds/samples.py)."""
from __future__ import annotations

import random

from kinds.samples import DemoTask, KindSamples


def report_answer(gold: float, rng: random.Random) -> float:
    """The gold, moved by up to a point."""
    rng.random()  # the draw that decides "changed or not" for the other kinds; kept so the sequence stays
    return min(5.0, max(0.0, gold + rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0])))

SAMPLES = KindSamples(
    task_fields={'scale_min': 0, 'scale_max': 5, 'scale_step': 0.5},
    records=[{'id': 's1',
              'sentence1': 'A man is playing a guitar.',
              'sentence2': 'A person plays an instrument.',
              'score': 3.8},
             {'id': 's2', 'sentence1': 'The cat sleeps.', 'sentence2': 'Stocks fell sharply today.', 'score': 0}],
    valid_answer=lambda payload: 1.5,
    form_data=lambda payload: {"score": "1.5"},
    telltale_gold=(3.141593, ["3.141593"]),
    import_options={'scale': '0,5', 'step': '0.5'},
    import_records=[{'id': 's1',
                     'sentence1': 'A man plays guitar.',
                     'sentence2': 'Someone plays a guitar.',
                     'score': 4.8},
                    {'id': 's2', 'sentence1': 'A dog runs.', 'sentence2': 'Stocks fell.', 'score': 0}],
    import_gold={'s1': 4.8, 's2': 0},
    import_csv=(['id', 'sentence1', 'sentence2', 'score'],
                [['s1', 'A man plays guitar.', 'Someone plays a guitar.', '4.8'],
                 ['s2', 'A dog runs.', 'Stocks fell.', '0']]),
    model_records=[{'sentence1': 'A man is playing a guitar.', 'sentence2': 'A man plays the guitar.', 'score': 4.8},
                   {'sentence1': 'A woman is slicing an onion.',
                    'sentence2': 'Someone is cutting an onion.',
                    'score': 4.2},
                   {'sentence1': 'A dog runs through the snow.',
                    'sentence2': 'A cat sleeps on the sofa.',
                    'score': 0.6},
                   {'sentence1': 'The stock market fell sharply today.',
                    'sentence2': 'Shares dropped steeply on the exchange.',
                    'score': 3.9},
                   {'sentence1': 'Children are playing football in the park.',
                    'sentence2': 'Kids play soccer outside.',
                    'score': 3.6},
                   {'sentence1': 'He is reading a newspaper.',
                    'sentence2': 'The plane landed at the airport.',
                    'score': 0.2},
                   {'sentence1': 'A chef is cooking pasta.',
                    'sentence2': 'A cook prepares spaghetti in a kitchen.',
                    'score': 3.8}],
    model_humans={'alice': [5, 4, 1, 4, 3, 0, 4], 'bob': [4.5, 4.5, 0.5, 3.5, 4, 0.5, 3]},
    report_records=lambda: [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": round(i * 5 / 11 * 2) / 2}
                            for i in range(12)],
    report_gold=lambda record: record["score"],
    report_answer=report_answer,
    report_charts=('scores', 'scatter-gold', 'scatter-pair'),
    scorer_sample=(
        {i: {"alice": float(i), "bob": float(i) + 0.5 * (i % 2)} for i in range(6)},
        {i: float(i) for i in range(6)},
    ),
    model_task_fields={},
    report_task_fields={},
    llm_record=lambda marker, i: ({"id": marker, "sentence1": f"{marker} a cat sits", "sentence2": "a cat is sitting",
                             "score": 4.25}, [3.5, 2.0, 4.5, 1.0][i % 4]),
    prompt_needles=["from 0 (completely different) to 5 (equivalent), in steps of 0.5", "<<<SENTENCE 2"],
    ppi_record=lambda i: {"sentence1": f"a{i}", "sentence2": f"b{i}"},
    ppi_answer=lambda rng: float(rng.integers(0, 11)) / 2,
    demo=(
        DemoTask(name='STS (English)', language='eng-Latn', file='sts-eng.jsonl', overlap=2,
                 answers='answers/sts-eng.jsonl', scale=(0, 5), step=0.5, mteb_task_name='STS22', mteb_subset='en'),
        DemoTask(name='STS (Arabic)', language='ara-Arab', file='sts-ara.jsonl', overlap=1, scale=(0, 5), step=0.5,
                 mteb_task_name='STS22', mteb_subset='ar'),
        DemoTask(name='STS (Danish)', language='dan-Latn', file='sts-dan.jsonl', overlap=1, scale=(0, 5), step=0.5),
        # the demo campaign's task: an LLM judge's answers with confidences on every pair, no batch of its own
        # (`manage.py demo_campaign` starts the campaign that hands its items out; scripts/make_demo_campaign_data.py)
        DemoTask(name='STS campaign (English)', language='eng-Latn', file='sts-campaign-eng.jsonl',
                 instructions='instructions.md', answers='answers/sts-campaign-judge.jsonl', scale=(0, 5), step=0.5,
                 batch=False),
    ),
)
