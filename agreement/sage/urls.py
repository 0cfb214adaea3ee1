from django.urls import path

from agreement.sage import views

app_name = "sage"
urlpatterns = [
    path("", views.index, name="index"),
    path("<int:run_id>/", views.detail, name="detail"),
    path("<int:run_id>/<str:category>.svg", views.plot, name="plot"),
]
