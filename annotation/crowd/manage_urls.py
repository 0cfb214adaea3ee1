"""The researcher's pages of crowd studies (under /manage/studies/)."""
from django.urls import path

from annotation.crowd import manage

app_name = "studies"
urlpatterns = [
    path("new/<id:batch_id>/", manage.create_link, name="create"),
    path("<id:link_id>/", manage.detail, name="detail"),
    path("<id:link_id>/open/", manage.set_open, name="set_open"),
    path("<id:link_id>/participants/<id:participant_id>/exclude/", manage.exclude, name="exclude"),
    path("<id:link_id>/participants/<id:participant_id>/include/", manage.include, name="include"),
    path("<id:link_id>/participants/<id:participant_id>/release/", manage.release, name="release"),
    path("<id:link_id>/<str:which>.csv", manage.export, name="export"),
]
