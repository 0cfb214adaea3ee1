"""HTML routes of the annotator's loop (under /annotate/)."""
from django.urls import path

from annotation.core import views

app_name = "annotation"
urlpatterns = [
    path("", views.home, name="home"),
    path("b/<id:batch_id>/", views.batch_page, name="batch"),
    path("b/<id:batch_id>/items/<id:item_id>/", views.item_page, name="item"),
    path("b/<id:batch_id>/items/<id:item_id>/back/", views.back, name="back"),
    path("b/<id:batch_id>/items/<id:item_id>/answer/", views.answer, name="answer"),
    path("b/<id:batch_id>/items/<id:item_id>/skip/", views.skip, name="skip"),
    path("b/<id:batch_id>/items/<id:item_id>/flag/", views.flag, name="flag"),
]
