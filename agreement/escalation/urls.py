from django.urls import path

from agreement.escalation import views

app_name = "escalation"
urlpatterns = [
    path("", views.index, name="index"),
    path("<int:plan_id>/", views.detail, name="detail"),
    path("<int:plan_id>/batch/", views.batch, name="batch"),
]
