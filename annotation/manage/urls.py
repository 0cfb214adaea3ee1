"""Admin pages under /manage/: annotators, batches, assignments, progress."""
from django.urls import path

from annotation.manage import views

app_name = "manage"
urlpatterns = [
    path("", views.manage_home, name="home"),
    path("annotators/", views.annotator_list, name="annotator_list"),
    path("annotators/new/", views.annotator_create, name="annotator_create"),
    path("annotators/<id:annotator_id>/", views.annotator_detail, name="annotator_detail"),
    path("annotators/<id:annotator_id>/active/", views.annotator_set_active, name="annotator_set_active"),
    path("batches/", views.batch_list, name="batch_list"),
    path("batches/new/", views.batch_create, name="batch_create"),
    path("batches/bulk/", views.batch_bulk_create, name="batch_bulk_create"),
    path("batches/<id:batch_id>/", views.batch_detail, name="batch_detail"),
    path("batches/<id:batch_id>/edit/", views.batch_edit, name="batch_edit"),
    path("batches/<id:batch_id>/open/", views.batch_set_open, name="batch_set_open"),
    path("batches/<id:batch_id>/assignees/", views.batch_assign, name="batch_assign"),
    path("batches/<id:batch_id>/<str:part>.csv", views.batch_export, name="batch_export"),
    path("assignments/<id:assignment_id>/", views.assignment_detail, name="assignment_detail"),
    path("assignments/<id:assignment_id>/remove/", views.assignment_remove, name="assignment_remove"),
    path("annotations/<id:annotation_id>/", views.annotation_detail, name="annotation_detail"),
]
