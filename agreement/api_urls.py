"""API routes of agreement (under /api/v1/)."""
from django.urls import path

from agreement import api

urlpatterns = [
    path("reports/", api.report_list, name="api-report-list"),
    path("reports/<id:task_id>/", api.report_detail, name="api-report-detail"),
    path("reports/<id:task_id>/compute/", api.compute, name="api-report-compute"),
]
