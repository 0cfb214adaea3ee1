from django.urls import path

from agreement.model_runs import views

urlpatterns = [path("", views.index, name="model-runs-index"),
               path("register/", views.register_model, name="model-runs-register"),
               path("run/", views.run_models, name="model-runs-run"),
               path("switch/<id:model_id>/", views.switch, name="model-runs-switch"),
               path("<id:task_id>/", views.task_models, name="model-runs-task"),
               path("<id:task_id>/run/", views.start, name="model-runs-start"),
               path("<id:task_id>/rows/", views.rows, name="model-runs-rows")]
