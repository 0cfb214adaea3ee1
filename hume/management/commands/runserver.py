"""Django's development server (with staticfiles' static serving, as before) on a longer listen queue: the
embedded default serves with `manage.py runserver` (scripts/run), and Django's WSGIServer keeps 10 connections
waiting to be accepted, so a crowd arriving at once (300 participants within a minute, docs/crowd.md "Under
load") had connections refused while its one process was busy. The kernel caps the queue at
net.core.somaxconn (4096 on current Linux). Found before Django's own runserver because `hume` is listed first
in INSTALLED_APPS."""
from __future__ import annotations

from django.contrib.staticfiles.management.commands.runserver import Command as StaticfilesRunserver
from django.core.servers.basehttp import WSGIServer

LISTEN_QUEUE = 1024


class LongQueueWSGIServer(WSGIServer):
    request_queue_size = LISTEN_QUEUE


class Command(StaticfilesRunserver):
    server_cls = LongQueueWSGIServer
