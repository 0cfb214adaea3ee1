"""graded_relevance's samples: records with gold, a valid answer, import files and model-run data (kinds/samples.py)."""
from __future__ import annotations

import random

from kinds.samples import DemoTask, KindSamples


def report_answer(gold: dict[str, float], rng: random.Random) -> dict[str, int]:
    """The gold, each score moved two points now and then."""
    rng.random()  # the draw that decides "changed or not" for the other kinds; kept so the sequence stays
    return {key: min(10, max(0, int(value) + rng.choice([-2, 0, 0, 2]))) for key, value in gold.items()}

SAMPLES = KindSamples(
    task_fields={'scale_min': 0, 'scale_max': 10, 'scale_step': 1},
    records=[{'id': 'g1',
              'query': 'symptoms of flu',
              'documents': [{'id': 'x1', 'text': 'Fever, cough and aching muscles are typical.', 'score': 9},
                            {'id': 'x2', 'text': 'Flu vaccines are updated every year.', 'score': 4}]}],
    valid_answer=lambda payload: {d["id"]: 5 for d in payload["documents"]},
    form_data=lambda payload: {f"d{i}": "5" for i, _ in enumerate(payload["documents"])},
    telltale_gold=({"x1": 8.123457, "x2": 2.654321}, ["8.123457", "2.654321"]),
    import_options={},
    import_records=[{'id': 'g1',
                     'query': 'vitamin D deficiency',
                     'documents': [{'id': 'd1', 'text': 'Fatigue and bone pain.', 'score': 9},
                                   {'id': 'd2', 'text': 'Sunlight.', 'score': 3}]}],
    import_gold={'g1': {'d1': 9.0, 'd2': 3.0}},
    import_csv=None,
    model_records=[{'query': 'renewable energy sources',
                    'documents': [{'id': 'd1', 'text': 'Solar panels turn sunlight into electricity.', 'score': 9},
                                  {'id': 'd2', 'text': 'Wind turbines generate clean power.', 'score': 8},
                                  {'id': 'd3', 'text': 'Coal plants emit carbon dioxide.', 'score': 3},
                                  {'id': 'd4', 'text': 'The recipe needs two eggs.', 'score': 0}]},
                   {'query': 'training for a marathon',
                    'documents': [{'id': 'd1',
                                   'text': 'Long slow runs build endurance for 42 kilometres.',
                                   'score': 10},
                                  {'id': 'd2', 'text': 'Stretching helps runners avoid injuries.', 'score': 6},
                                  {'id': 'd3', 'text': 'The museum opens at nine.', 'score': 0},
                                  {'id': 'd4', 'text': 'Good running shoes matter.', 'score': 5}]}],
    model_humans={'alice': [{'d1': 10, 'd2': 7, 'd3': 2, 'd4': 0}, {'d1': 9, 'd2': 5, 'd3': 0, 'd4': 6}],
                  'bob': [{'d1': 8, 'd2': 8, 'd3': 4, 'd4': 1}, {'d1': 10, 'd2': 7, 'd3': 1, 'd4': 4}]},
    report_records=lambda: [{"query": f"q{i}", "documents": [{"id": f"d{j}", "text": f"d{i}-{j}", "score": (4 - j) * 2}
                                                             for j in range(5)]} for i in range(4)],
    report_gold=lambda record: {d["id"]: d["score"] for d in record["documents"]},
    report_answer=report_answer,
    report_charts=('scores', 'scatter-gold', 'scatter-pair'),
    scorer_sample=(
        {"q": {"alice": {"d1": 8, "d2": 2}, "bob": {"d1": 6, "d2": 4}}},
        {"q": {"d1": 2, "d2": 0}},
    ),
    model_task_fields={},
    report_task_fields={},
    llm_record=lambda marker, i: ({"id": marker, "query": f"{marker} how do vaccines work", "documents": [
        {"id": "d1", "text": "mRNA vaccines deliver instructions", "score": 7.77},  # a gold no prompt may show
        {"id": "d2", "text": "a recipe for bread", "score": 0}]}, {"d1": 7 + i % 3, "d2": i % 2}),
    prompt_needles=["Most documents should score below 7", '"d1": <score>, "d2": <score>'],
    ppi_record=lambda i: {"query": f"q{i}", "documents": [{"id": "d1", "text": "x"}, {"id": "d2", "text": "y"},
                                                        {"id": "d3", "text": "z"}]},
    ppi_answer=lambda rng: {d: int(rng.integers(0, 11)) for d in ("d1", "d2", "d3")},
    demo=(
        DemoTask(name='Graded relevance (English)', language='eng-Latn', file='relevance-eng.jsonl', overlap=2,
                 scale=(0, 10), step=1),
    ),
)
