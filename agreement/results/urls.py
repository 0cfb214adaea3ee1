"""HTML routes of the model comparison, mounted at /results/ (hume/urls.py)."""
from django.urls import path

from agreement.results import views

app_name = "results"
urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("pending/", views.pending, name="pending"),
    path("tasks/", views.tasks, name="tasks"),
    path("tasks/<str:task>/", views.task_detail, name="task"),
    path("tasks/<str:task>/plot.<str:fmt>", views.plot, name="task-plot"),
    path("plot.<str:fmt>", views.plot, name="plot"),
    path("figures/<str:number>.<str:fmt>", views.paper_figure, name="paper-figure"),
    path("export/table-<str:table>.<str:fmt>", views.paper_table, name="paper-table"),
    path("export/leaderboard.<str:fmt>", views.export_leaderboard, name="export-leaderboard"),
    path("export/tasks.<str:fmt>", views.export_tasks, name="export-tasks"),
    path("import/", views.import_page, name="import"),
    path("models/", views.models, name="models"),
    path("models/revisions/<id:pk>/current/", views.make_current, name="make-current"),
    path("models/<id:pk>/unpin/", views.unpin, name="unpin"),
    path("mapping/", views.mapping, name="mapping"),
    path("mapping/<id:pk>/", views.edit_mapping, name="edit-mapping"),
]
