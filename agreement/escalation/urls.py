from django.urls import path

from agreement.escalation import views

app_name = "escalation"
urlpatterns = [
    path("", views.index, name="index"),
    path("<id:plan_id>/", views.detail, name="detail"),
    path("<id:plan_id>/batch/", views.batch, name="batch"),
]
