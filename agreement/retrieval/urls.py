"""HTML routes of the retrieval room, mounted at /retrieval/ (hume/urls.py)."""
from django.urls import path

from agreement.retrieval import views

app_name = "retrieval"
urlpatterns = [
    path("", views.index, name="index"),
    path("upload/", views.upload, name="upload"),
    path("<str:name>/", views.collection, name="collection"),
    path("<str:name>/evaluate/", views.evaluate, name="evaluate"),
]
