from django.urls import path

from agreement.model_runs import views

urlpatterns = [path("<id:task_id>/run/", views.start, name="model-runs-start"),
               path("<id:task_id>/rows/", views.rows, name="model-runs-rows")]
