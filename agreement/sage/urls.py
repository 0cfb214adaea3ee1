from django.urls import path

from agreement.sage import views

app_name = "sage"
urlpatterns = [
    path("", views.index, name="index"),
    path("<id:run_id>/", views.detail, name="detail"),
    path("<id:run_id>/<str:category>.svg", views.plot, name="plot"),
]
