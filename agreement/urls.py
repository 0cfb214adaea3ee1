"""HTML routes of agreement (under /reports/)."""
from django.urls import path

from agreement import views
from agreement.ppi import views as ppi_views

app_name = "agreement"
urlpatterns = [
    path("", views.report_list, name="list"),
    path("task/<id:task_id>/", views.report_detail, name="detail"),
    path("task/<id:task_id>/status/", views.report_status, name="status"),
    path("task/<id:task_id>/annotator-models/", views.annotator_models, name="annotator_models"),
    path("task/<id:task_id>/recompute/", views.recompute, name="recompute"),
    path("task/<id:task_id>/report.csv", views.export_report, {"fmt": "csv"}, name="export_csv"),
    path("task/<id:task_id>/report.json", views.export_report, {"fmt": "json"}, name="export_json"),
    path("task/<id:task_id>/answers.jsonl", views.export_answers, name="export_answers"),
    path("task/<id:task_id>/charts/<slug:name>.svg", views.report_chart, name="chart"),
    path("task/<id:task_id>/mteb.zip", views.export_mteb, name="export_mteb"),
    path("task/<id:task_id>/ppi/", ppi_views.request_estimate, name="ppi_request"),
    path("task/<id:task_id>/ppi/panel/", ppi_views.panel, name="ppi_panel"),
    path("task/<id:task_id>/ppi/batch/", ppi_views.create_batch, name="ppi_batch"),
]
