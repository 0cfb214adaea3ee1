"""HTML routes of the model comparison, mounted at /results/ (hume/urls.py)."""
from django.urls import path

from agreement.results import admin_pages, downloads, views

app_name = "results"
urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("pending/", views.pending, name="pending"),
    path("tasks/", views.tasks, name="tasks"),
    path("tasks/<str:task>/", views.task_detail, name="task"),
    path("tasks/<str:task>/plot.<str:fmt>", downloads.plot, name="task-plot"),
    path("plot.<str:fmt>", downloads.plot, name="plot"),
    path("figures/<str:number>.<str:fmt>", downloads.paper_figure, name="paper-figure"),
    path("export/table-<str:table>.<str:fmt>", downloads.paper_table, name="paper-table"),
    path("export/leaderboard.<str:fmt>", downloads.export_leaderboard, name="export-leaderboard"),
    path("export/tasks.<str:fmt>", downloads.export_tasks, name="export-tasks"),
    path("import/", admin_pages.import_page, name="import"),
    path("models/", admin_pages.models, name="models"),
    path("models/revisions/<id:pk>/current/", admin_pages.make_current, name="make-current"),
    path("models/<id:pk>/unpin/", admin_pages.unpin, name="unpin"),
    path("mapping/", admin_pages.mapping, name="mapping"),
    path("mapping/<id:pk>/", admin_pages.edit_mapping, name="edit-mapping"),
]
