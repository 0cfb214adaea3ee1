"""The participant's pages of a crowd study (under /study/): public, reached only with a link's token."""
from django.urls import path

from annotation.crowd import views

app_name = "crowd"
urlpatterns = [
    path("<str:token>/", views.arrive, name="arrive"),
    path("<str:token>/run/", views.run, name="run"),
    path("<str:token>/take-over/", views.take_over, name="take_over"),
]
