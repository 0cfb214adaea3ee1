"""HTML routes of the LLM annotator pages (mounted at /llm/)."""
from django.urls import path

from annotation.llm import views as llm_views

app_name = "llm"
urlpatterns = [
    path("", llm_views.llm_home, name="home"),
    path("annotators/new/", llm_views.annotator_create, name="annotator-create"),
    path("annotators/<id:annotator_id>/", llm_views.annotator_detail, name="annotator"),
    path("annotators/<id:annotator_id>/edit/", llm_views.annotator_edit, name="annotator-edit"),
    path("annotators/<id:annotator_id>/runs/", llm_views.run_start, name="run-start"),
    path("runs/<id:run_id>/", llm_views.run_detail, name="run"),
    path("runs/<id:run_id>/<str:action>/", llm_views.run_action, name="run-action"),
    path("panels/new/", llm_views.panel_create, name="panel-create"),
    path("panels/<id:panel_id>/", llm_views.panel_detail, name="panel"),
    path("panels/<id:panel_id>/refresh/", llm_views.panel_refresh, name="panel-refresh"),
    path("panels/<id:panel_id>/runs/", llm_views.panel_run, name="panel-run"),
]
