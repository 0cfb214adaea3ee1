"""HTML routes of the retrieval room, mounted at /retrieval/ (hume/urls.py).

A system's ranking of a collection's queries was once called a "run" here, and its pages lived under
``<name>/runs/``. Those addresses still answer: each sends a permanent redirect that keeps the method and
the body (308), so a bookmark, or a script posting a BM25 ranking to the old address, keeps working.
"""
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse

from agreement.retrieval import views

app_name = "retrieval"


def moved(to: str) -> Callable[..., HttpResponse]:
    """A view answering an old address with a permanent redirect to route ``to`` (query string kept)."""
    def view(request: HttpRequest, **kwargs: object) -> HttpResponse:
        target = reverse(f"retrieval:{to}", kwargs=kwargs)
        query = request.META.get("QUERY_STRING", "")
        return redirect(f"{target}?{query}" if query else target, permanent=True, preserve_request=True)
    return view


urlpatterns = [
    path("", views.index, name="index"),
    path("upload/", views.upload, name="upload"),
    path("<str:name>/", views.collection, name="collection"),
    path("<str:name>/evaluate/", views.evaluate, name="evaluate"),
    path("<str:name>/rankings/", views.rankings_panel, name="rankings"),
    path("<str:name>/rankings/import/", views.import_trec_ranking, name="import_ranking"),
    path("<str:name>/rankings/bm25/", views.start_bm25, name="bm25_ranking"),
    path("<str:name>/rankings/model/", views.start_model, name="model_ranking"),
    path("<str:name>/pool/", views.pool, name="pool"),
    path("<str:name>/pools/<id:pool_id>/batch/", views.judging_batch, name="judging_batch"),
    # The addresses of before the rename (run → ranking).
    path("<str:name>/runs/", moved("rankings")),
    path("<str:name>/runs/import/", moved("import_ranking")),
    path("<str:name>/runs/bm25/", moved("bm25_ranking")),
    path("<str:name>/runs/model/", moved("model_ranking")),
]
