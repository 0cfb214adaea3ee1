from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "agreement.retrieval"
    label = "retrieval"
    verbose_name = "Retrieval collections, runs, pools and graded relevance"
