"""API routes of agreement (under /api/v1/)."""
from django.urls import path

from agreement import api

urlpatterns = [
    path("reports/", api.report_list, name="api-report-list"),
    path("reports/<id:task_id>/", api.report_detail, name="api-report-detail"),
    path("reports/<id:task_id>/compute/", api.compute, name="api-report-compute"),
    path("campaigns/", api.campaign_list, name="api-campaign-list"),
    path("campaigns/start/", api.campaign_start, name="api-campaign-start"),
    path("campaigns/<str:name>/", api.campaign_detail, name="api-campaign-detail"),
    path("campaigns/<str:name>/stop/", api.campaign_stop, name="api-campaign-stop"),
]
