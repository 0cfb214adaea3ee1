"""likert's samples: records with gold, a valid answer, import files and model-run data (kinds/samples.py)."""
from __future__ import annotations

import random

from kinds.samples import DemoTask, KindSamples


def report_answer(gold: dict[str, float], rng: random.Random) -> dict[str, float]:
    """The gold, moved by a point now and then."""
    rng.random()  # the draw that decides "changed or not" for the other kinds; kept so the sequence stays
    return {"overall": min(7, max(1, gold["overall"] + rng.choice([-1, 0, 0, 1])))}

SAMPLES = KindSamples(
    task_fields={'axes': ['overall', 'coherence'], 'scale_min': 1, 'scale_max': 7, 'scale_step': 1},
    records=[{'id': 'l1',
              'context': 'Article about a new bridge opening in the city.',
              'text': 'A new bridge opened, easing traffic.',
              'scores': {'overall': 6, 'coherence': 7}}],
    valid_answer=lambda payload: {"overall": 4, "coherence": 4},
    form_data=lambda payload: {"a0": "4", "a1": "4"},
    telltale_gold=({"overall": 5.271828, "coherence": 6.314159}, ["5.271828", "6.314159"]),
    import_options={'axes': 'overall,coherence'},
    import_records=[{'id': 'l1',
                     'context': 'Solar panels got better.',
                     'text': 'Panels improved.',
                     'scores': {'overall': 6, 'coherence': 7}}],
    import_gold={'l1': {'overall': 6, 'coherence': 7}},
    import_csv=(['id', 'context', 'text', 'overall', 'coherence'],
                [['l1', 'Solar panels got better.', 'Panels improved.', '6', '7']]),
    model_records=[{'context': 'The museum will close for renovation from May to September.',
                    'text': 'The museum closes for renovations over the summer.',
                    'scores': {'overall': 7, 'coherence': 6}},
                   {'context': 'A new vaccine reduced infections by 90 percent in trials.',
                    'text': 'Trials show the vaccine cuts infections sharply.',
                    'scores': {'overall': 6, 'coherence': 7}},
                   {'context': 'The bridge was closed after cracks were found.',
                    'text': 'The weather will be sunny tomorrow.',
                    'scores': {'overall': 1, 'coherence': 3}},
                   {'context': 'The author won a prize for her first novel.',
                    'text': 'A debut novelist received an award.',
                    'scores': {'overall': 6, 'coherence': 6}},
                   {'context': 'Farmers expect a poor harvest due to drought.',
                    'text': 'Drought may hurt crops.',
                    'scores': {'overall': 4, 'coherence': 5}}],
    model_humans={'alice': [{'overall': 6, 'coherence': 6},
                            {'overall': 7, 'coherence': 6},
                            {'overall': 1, 'coherence': 2},
                            {'overall': 5, 'coherence': 6},
                            {'overall': 4, 'coherence': 4}],
                  'bob': [{'overall': 7, 'coherence': 7},
                          {'overall': 6, 'coherence': 6},
                          {'overall': 2, 'coherence': 3},
                          {'overall': 6, 'coherence': 5},
                          {'overall': 5, 'coherence': 5}]},
    report_records=lambda: [{"context": f"c{i}", "text": f"t{i}", "scores": {"overall": 1 + i % 7}} for i in range(12)],
    report_gold=lambda record: record["scores"],
    report_answer=report_answer,
    report_charts=('scores', 'scatter-gold', 'scatter-pair'),
    scorer_sample=(
        {i: {"alice": {"overall": i + 1}, "bob": {"overall": min(i + 2, 7)}} for i in range(5)},
        {i: {"overall": i + 1} for i in range(5)},
    ),
    model_task_fields={'axes': ['overall', 'coherence']},
    report_task_fields={"axes": ["overall"]},
    ppi_record=lambda i: {"context": "c", "text": f"t{i}"},
    ppi_answer=lambda rng: {"overall": int(rng.integers(1, 8)), "coherence": int(rng.integers(1, 8))},
    ppi_task_fields={"axes": ["overall", "coherence"]},
    demo=(
        DemoTask(name='Summary quality (English)', language='eng-Latn', file='likert-eng.jsonl', overlap=2,
                 axes=['overall', 'accuracy', 'coherence']),
    ),
)
