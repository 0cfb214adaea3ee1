"""reranking's samples: records with gold, a valid answer, import files and model-run data (kinds/samples.py)."""
from __future__ import annotations

import random

from kinds.samples import DemoTask, KindSamples


def report_answer(gold: dict[str, int], rng: random.Random) -> dict[str, int]:
    """The gold, each judgement flipped now and then."""
    rng.random()  # the draw that decides "changed or not" for the other kinds; kept so the sequence stays
    return {key: (1 - value if rng.random() < 0.2 else value) for key, value in gold.items()}

SAMPLES = KindSamples(
    task_fields={},
    records=[{'id': 'r1',
              'query': 'how do bees make honey',
              'instruction': 'Mark passages that answer the query.',
              'candidates': [{'id': 'p1', 'text': 'Bees collect nectar and evaporate it in the hive.', 'relevant': 1},
                             {'id': 'p2', 'text': 'Honey badgers are fearless.', 'relevant': 0},
                             {'id': 'p3', 'text': 'Enzymes in bees turn nectar sugars into honey.', 'relevant': 1}]},
             {'id': 'r2',
              'query': 'capital of Denmark',
              'candidates': [{'id': 'q1', 'text': 'Copenhagen is the capital of Denmark.', 'relevant': 1},
                             {'id': 'q2', 'text': "Aarhus is Denmark's second city.", 'relevant': 0}]}],
    valid_answer=lambda payload: {c["id"]: 0 for c in payload["candidates"]},
    form_data=lambda payload: {f"c{i}": "0" for i, _ in enumerate(payload["candidates"])},
    telltale_gold=({"p1": 1, "p2": 0, "p3": 1, "marker": "GOLDRERANK-4d5e"}, ["GOLDRERANK-4d5e"]),
    import_options={},
    import_records=[{'id': 'q1',
                     'query': 'how do vaccines work',
                     'instruction': 'Judge the passage.',
                     'candidates': [{'id': 'p1', 'text': 'They train immunity.', 'relevant': 1},
                                    {'id': 'p2', 'text': 'Paris is in France.', 'relevant': 0}]},
                    {'id': 'q2',
                     'query': 'capital of Denmark',
                     'positive': ['Copenhagen is the capital.'],
                     'negative': ['Oslo is in Norway.', 'Cats sleep a lot.']}],
    import_gold={'q1': {'p1': 1, 'p2': 0}},
    import_csv=None,
    model_records=[{'query': 'how to bake bread at home',
                    'candidates': [{'id': 'c1',
                                    'text': 'Knead the dough, let it rise and bake it at 220 degrees.',
                                    'relevant': 1},
                                   {'id': 'c2', 'text': 'The football season starts in August.', 'relevant': 0},
                                   {'id': 'c3',
                                    'text': 'A simple homemade loaf needs flour, water, yeast and salt.',
                                    'relevant': 1},
                                   {'id': 'c4', 'text': 'Stock prices rose after the announcement.', 'relevant': 0}]},
                   {'query': 'symptoms of the flu',
                    'candidates': [{'id': 'c1', 'text': 'Parliament passed the new budget.', 'relevant': 0},
                                   {'id': 'c2',
                                    'text': 'Influenza causes fever, cough and muscle aches.',
                                    'relevant': 1},
                                   {'id': 'c3', 'text': 'Bananas are rich in potassium.', 'relevant': 0},
                                   {'id': 'c4',
                                    'text': 'Guitar strings should be changed regularly.',
                                    'relevant': 0}]},
                   {'query': 'best way to learn a language',
                    'candidates': [{'id': 'c1',
                                    'text': 'Speaking daily with native speakers speeds up language learning.',
                                    'relevant': 1},
                                   {'id': 'c2', 'text': 'The river flooded the village.', 'relevant': 0},
                                   {'id': 'c3', 'text': 'Flashcards help you memorise vocabulary.', 'relevant': 1},
                                   {'id': 'c4', 'text': 'Mount Everest is the highest mountain.', 'relevant': 0}]}],
    model_humans={'alice': [{'c1': 1, 'c2': 0, 'c3': 1, 'c4': 0},
                            {'c1': 0, 'c2': 1, 'c3': 0, 'c4': 0},
                            {'c1': 1, 'c2': 0, 'c3': 0, 'c4': 0}],
                  'bob': [{'c1': 1, 'c2': 0, 'c3': 0, 'c4': 0},
                          {'c1': 0, 'c2': 1, 'c3': 1, 'c4': 0},
                          {'c1': 1, 'c2': 0, 'c3': 1, 'c4': 0}]},
    report_records=lambda: [{"query": f"q{i}",
                             "candidates": [{"id": f"c{j}", "text": f"c{i}-{j}", "relevant": int(j < 2)}
                                            for j in range(5)]}
                            for i in range(4)],
    report_gold=lambda record: {c["id"]: c["relevant"] for c in record["candidates"]},
    report_answer=report_answer,
    report_charts=('scores', 'confusion', 'distribution'),
    scorer_sample=(
        {"q": {"alice": {"c1": 1, "c2": 0, "c3": 0}, "bob": {"c1": 1, "c2": 1, "c3": 0}}},
        {"q": {"c1": 1, "c2": 0, "c3": 1}},
    ),
    model_task_fields={},
    report_task_fields={},
    llm_record=lambda marker, i: ({"id": marker, "query": f"{marker} query", "candidates": [
        {"id": "c1", "text": "first candidate", "relevant": 1}, {"id": "c2", "text": "second", "relevant": 0}]},
        {"c1": 1, "c2": i % 2}),
    prompt_needles=['"c1": 0 or 1, "c2": 0 or 1', "<<<CANDIDATE c2\nsecond\n>>>"],
    demo=(
        DemoTask(name='Passage relevance (English)', language='eng-Latn', file='reranking-eng.jsonl', overlap=2,
                 mteb_task_name='WikipediaRerankingMultilingual', mteb_subset='en'),
        DemoTask(name='Passage relevance (Arabic)', language='ara-Arab', file='reranking-ara.jsonl', overlap=1,
                 mteb_task_name='WikipediaRerankingMultilingual', mteb_subset='ar'),
    ),
)
