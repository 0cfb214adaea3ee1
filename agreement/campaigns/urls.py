"""HTML routes of campaigns (under /campaigns/)."""
from django.urls import path

from agreement.campaigns import views

app_name = "campaigns"
urlpatterns = [
    path("", views.campaign_list, name="list"),
    path("<str:name>/", views.campaign_detail, name="detail"),
    path("<str:name>/stop/", views.campaign_stop, name="stop"),
]
