"""Small English study items of every kind for the model-run tests (hand-written; gold and two humans)."""
from __future__ import annotations

from typing import Any

STS = [
    ("A man is playing a guitar.", "A man plays the guitar.", 4.8),
    ("A woman is slicing an onion.", "Someone is cutting an onion.", 4.2),
    ("A dog runs through the snow.", "A cat sleeps on the sofa.", 0.6),
    ("The stock market fell sharply today.", "Shares dropped steeply on the exchange.", 3.9),
    ("Children are playing football in the park.", "Kids play soccer outside.", 3.6),
    ("He is reading a newspaper.", "The plane landed at the airport.", 0.2),
    ("A chef is cooking pasta.", "A cook prepares spaghetti in a kitchen.", 3.8),
]
STS_HUMANS = {"alice": [5, 4, 1, 4, 3, 0, 4], "bob": [4.5, 4.5, 0.5, 3.5, 4, 0.5, 3]}

RERANKING = [
    {"query": "how to bake bread at home", "candidates": [
        {"id": "c1", "text": "Knead the dough, let it rise and bake it at 220 degrees.", "relevant": 1},
        {"id": "c2", "text": "The football season starts in August.", "relevant": 0},
        {"id": "c3", "text": "A simple homemade loaf needs flour, water, yeast and salt.", "relevant": 1},
        {"id": "c4", "text": "Stock prices rose after the announcement.", "relevant": 0}]},
    {"query": "symptoms of the flu", "candidates": [
        {"id": "c1", "text": "Parliament passed the new budget.", "relevant": 0},
        {"id": "c2", "text": "Influenza causes fever, cough and muscle aches.", "relevant": 1},
        {"id": "c3", "text": "Bananas are rich in potassium.", "relevant": 0},
        {"id": "c4", "text": "Guitar strings should be changed regularly.", "relevant": 0}]},
    {"query": "best way to learn a language", "candidates": [
        {"id": "c1", "text": "Speaking daily with native speakers speeds up language learning.", "relevant": 1},
        {"id": "c2", "text": "The river flooded the village.", "relevant": 0},
        {"id": "c3", "text": "Flashcards help you memorise vocabulary.", "relevant": 1},
        {"id": "c4", "text": "Mount Everest is the highest mountain.", "relevant": 0}]},
]
RERANKING_HUMANS = {
    "alice": [{"c1": 1, "c2": 0, "c3": 1, "c4": 0}, {"c1": 0, "c2": 1, "c3": 0, "c4": 0},
              {"c1": 1, "c2": 0, "c3": 0, "c4": 0}],
    "bob": [{"c1": 1, "c2": 0, "c3": 0, "c4": 0}, {"c1": 0, "c2": 1, "c3": 1, "c4": 0},
            {"c1": 1, "c2": 0, "c3": 1, "c4": 0}],
}

GRADED = [
    {"query": "renewable energy sources", "documents": [
        {"id": "d1", "text": "Solar panels turn sunlight into electricity.", "score": 9},
        {"id": "d2", "text": "Wind turbines generate clean power.", "score": 8},
        {"id": "d3", "text": "Coal plants emit carbon dioxide.", "score": 3},
        {"id": "d4", "text": "The recipe needs two eggs.", "score": 0}]},
    {"query": "training for a marathon", "documents": [
        {"id": "d1", "text": "Long slow runs build endurance for 42 kilometres.", "score": 10},
        {"id": "d2", "text": "Stretching helps runners avoid injuries.", "score": 6},
        {"id": "d3", "text": "The museum opens at nine.", "score": 0},
        {"id": "d4", "text": "Good running shoes matter.", "score": 5}]},
]
GRADED_HUMANS = {
    "alice": [{"d1": 10, "d2": 7, "d3": 2, "d4": 0}, {"d1": 9, "d2": 5, "d3": 0, "d4": 6}],
    "bob": [{"d1": 8, "d2": 8, "d3": 4, "d4": 1}, {"d1": 10, "d2": 7, "d3": 1, "d4": 4}],
}

CLUSTERING = [
    {"sentences": ["The cat chased a mouse.", "Dogs love long walks.", "The parrot repeated my words.",
                   "Interest rates went up again.", "The bank approved the loan.", "Inflation hit a record high.",
                   "The striker scored twice.", "The match ended in a draw.", "Tennis players need fast reflexes."],
     "labels": ["animals", "animals", "animals", "money", "money", "money", "sport", "sport", "sport"]},
    {"sentences": ["Bake the cake for forty minutes.", "Chop the garlic finely.", "Boil the potatoes in salted water.",
                   "The train to Paris is delayed.", "Our flight leaves at dawn.", "Take the bus to the airport."],
     "labels": ["food", "food", "food", "travel", "travel", "travel"]},
]
CLUSTERING_HUMANS = {
    "alice": [["x", "x", "x", "y", "y", "y", "z", "z", "z"], ["a", "a", "a", "b", "b", "b"]],
    "bob": [["1", "1", "2", "3", "3", "3", "2", "2", "2"], ["a", "a", "b", "b", "b", "b"]],
}

_SPORT = ["The team won the championship.", "He scored a goal in the final minute.",
          "The tennis match lasted five hours.",
          "She broke the world record in the sprint.", "The coach praised his players.",
          "Fans cheered as the race began.", "The goalkeeper saved a penalty."]
_FOOD = ["Add salt and pepper to the soup.", "Bake the bread until golden.", "Fry the onions in butter.",
         "The sauce needs fresh basil.", "Whisk the eggs with sugar.", "Roast the chicken for an hour.",
         "Simmer the beans slowly."]
CLASSIFICATION = [{"text": t, "label": "sport"} for t in _SPORT] + [{"text": t, "label": "food"} for t in _FOOD]
CLASSIFICATION_HUMANS = {
    "alice": ["sport"] * 7 + ["food"] * 7,
    "bob": ["sport"] * 6 + ["food"] * 8,
}

PAIRWISE = [
    {"context": "The city council approved a new park downtown.",
     "a": "Council approves downtown park.", "b": "Local bakery wins award.", "preferred": "a"},
    {"context": "Scientists found water ice on the moon's south pole.",
     "a": "Researchers discover a new dinosaur.", "b": "Ice found at lunar south pole.", "preferred": "b"},
    {"context": "The company reported record profits this quarter.",
     "a": "Firm posts its highest quarterly profit.", "b": "Company announces record earnings.", "preferred": "tie"},
    {"context": "Heavy rain caused floods across the region.",
     "a": "Floods hit the region after heavy rain.", "b": "A new phone was released.", "preferred": "a"},
    {"context": "The orchestra performed Beethoven's ninth symphony.",
     "a": "Stock markets closed higher.", "b": "Orchestra plays Beethoven's Ninth.", "preferred": "b"},
]
PAIRWISE_HUMANS = {"alice": ["a", "b", "a", "a", "b"], "bob": ["a", "b", "b", "a", "b"]}

LIKERT = [
    {"context": "The museum will close for renovation from May to September.",
     "text": "The museum closes for renovations over the summer.", "scores": {"overall": 7, "coherence": 6}},
    {"context": "A new vaccine reduced infections by 90 percent in trials.",
     "text": "Trials show the vaccine cuts infections sharply.", "scores": {"overall": 6, "coherence": 7}},
    {"context": "The bridge was closed after cracks were found.",
     "text": "The weather will be sunny tomorrow.", "scores": {"overall": 1, "coherence": 3}},
    {"context": "The author won a prize for her first novel.",
     "text": "A debut novelist received an award.", "scores": {"overall": 6, "coherence": 6}},
    {"context": "Farmers expect a poor harvest due to drought.",
     "text": "Drought may hurt crops.", "scores": {"overall": 4, "coherence": 5}},
]
LIKERT_HUMANS = {
    "alice": [{"overall": 6, "coherence": 6}, {"overall": 7, "coherence": 6}, {"overall": 1, "coherence": 2},
              {"overall": 5, "coherence": 6}, {"overall": 4, "coherence": 4}],
    "bob": [{"overall": 7, "coherence": 7}, {"overall": 6, "coherence": 6}, {"overall": 2, "coherence": 3},
            {"overall": 6, "coherence": 5}, {"overall": 5, "coherence": 5}],
}


def records(kind: str) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """(records with gold, {annotator: answers in item order}) for a kind."""
    if kind == "sts":
        return [{"sentence1": a, "sentence2": b, "score": s} for a, b, s in STS], STS_HUMANS
    return {"reranking": (RERANKING, RERANKING_HUMANS), "graded_relevance": (GRADED, GRADED_HUMANS),
            "clustering": (CLUSTERING, CLUSTERING_HUMANS), "classification": (CLASSIFICATION, CLASSIFICATION_HUMANS),
            "pairwise": (PAIRWISE, PAIRWISE_HUMANS), "likert": (LIKERT, LIKERT_HUMANS)}[kind]


TASK_FIELDS: dict[str, dict[str, Any]] = {
    "classification": {"labels": ["food", "sport"]},
    "likert": {"axes": ["overall", "coherence"]},
}


def build_model_task(kind: str, name: str | None = None) -> Any:
    from tests.report_builders import answers_from_columns, build_task, import_answers

    recs, humans = records(kind)
    task = build_task(kind, name or f"models-{kind}", recs, **TASK_FIELDS.get(kind, {}))
    import_answers(task, answers_from_columns(humans))
    return task
