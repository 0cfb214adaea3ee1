"""HTML routes of the retrieval room, mounted at /retrieval/ (hume/urls.py)."""
from django.urls import path

from agreement.retrieval import views

app_name = "retrieval"
urlpatterns = [
    path("", views.index, name="index"),
    path("upload/", views.upload, name="upload"),
    path("<str:name>/", views.collection, name="collection"),
    path("<str:name>/evaluate/", views.evaluate, name="evaluate"),
    path("<str:name>/runs/", views.runs_panel, name="runs"),
    path("<str:name>/runs/import/", views.import_trec_run, name="import_run"),
    path("<str:name>/runs/bm25/", views.start_bm25, name="bm25_run"),
    path("<str:name>/runs/model/", views.start_model, name="model_run"),
    path("<str:name>/pool/", views.pool, name="pool"),
    path("<str:name>/pools/<id:pool_id>/batch/", views.judging_batch, name="judging_batch"),
]
