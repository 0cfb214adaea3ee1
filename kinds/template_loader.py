"""Templates in the kinds' folders: `kinds/<name>/<file>` is <the folder of kind <name>>/templates/<file>.

A kind's templates (its payload, its answer partial, its keyboard help) live in its own folder, so a kind is
one folder; this loader (in settings.TEMPLATES) finds them through the registry, so a kind registered from
anywhere (a copy of a folder in a test, too) brings its templates with it."""
from __future__ import annotations

from collections.abc import Iterator

from django.core.exceptions import SuspiciousFileOperation
from django.template import Origin
from django.template.loaders.filesystem import Loader as FilesystemLoader
from django.utils._os import safe_join

from kinds.kind_registry import kind_folder


class Loader(FilesystemLoader):
    def get_template_sources(self, template_name: str) -> Iterator[Origin]:
        prefix, _, rest = template_name.partition("/")
        name, _, file_name = rest.partition("/")
        folder = kind_folder(name) if prefix == "kinds" and file_name else None
        if folder is None:
            return
        try:
            path = safe_join(folder / "templates", file_name)
        except SuspiciousFileOperation:  # ../ out of the kind's templates: not ours
            return
        yield Origin(name=path, template_name=template_name, loader=self)
