"""Static files in the kinds' folders: `kinds/<name>/<file>` is <the folder of kind <name>>/static/<file>.

A kind's browser behaviour (STS's slider, clustering's groups panel) lives in its own folder, so a kind is one
folder; this finder (in settings.STATICFILES_FINDERS) finds the files through the registry, so `{% static %}`,
whitenoise and `collectstatic` serve them like any other, and a kind registered from anywhere (a copy of a
folder in a test, too) brings its scripts with it. The kind names the ones its answer partial needs in its
definition's `scripts`; the item pages load them without naming a kind."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder, searched_locations
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import FileSystemStorage
from django.utils._os import safe_join

from kinds.kind_registry import KINDS, kind_folder

PREFIX = "kinds"


def static_folders() -> Iterator[tuple[str, Path]]:
    """(URL prefix `kinds/<name>`, the kind's static/ folder) of every registered kind that has one."""
    for name in KINDS:
        folder = kind_folder(name)
        if folder is not None and (folder / "static").is_dir():
            yield f"{PREFIX}/{name}", folder / "static"


class KindStaticFinder(BaseFinder):
    def find(self, path: str, find_all: bool = False, **kwargs):
        find_all = find_all or kwargs.get("all", False)  # Django < 6.1 may still pass `all`
        prefix, _, rest = path.partition("/")
        name, _, file_name = rest.partition("/")
        folder = kind_folder(name) if prefix == PREFIX and file_name else None
        if folder is None:
            return [] if find_all else None
        root = folder / "static"
        if str(root) not in searched_locations:
            searched_locations.append(str(root))
        try:
            found = Path(safe_join(root, file_name))
        except SuspiciousFileOperation:  # ../ out of the kind's static folder: not ours
            found = None
        match = str(found) if found is not None and found.is_file() else None
        if find_all:
            return [match] if match else []
        return match

    def list(self, ignore_patterns):
        for prefix, root in static_folders():
            storage = FileSystemStorage(location=root)
            storage.prefix = prefix
            yield from ((path, storage) for path in utils.get_files(storage, ignore_patterns))
