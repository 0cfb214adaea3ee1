"""HTML routes of tasks_app (under /tasks/)."""
from django.urls import path

from . import task_actions, views

app_name = "tasks_app"
urlpatterns = [
    path("", views.task_list, name="list"),
    path("import/", views.task_import, name="import"),
    path("imports/<id:job_id>/", views.import_job, name="import-job"),
    path("<id:task_id>/", views.task_detail, name="detail"),
    path("<id:task_id>/sample/", task_actions.task_sample, name="sample"),
    path("<id:task_id>/instructions/", task_actions.task_instructions, name="instructions"),
]
