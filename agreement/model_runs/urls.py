from django.urls import path

from agreement.model_runs import views

urlpatterns = [path("<int:task_id>/run/", views.start, name="model-runs-start")]
