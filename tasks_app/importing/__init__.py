"""Dataset import (admins; docs/import.md): parsing options, writing items atomically. Reading files safely, and
the problems an import reports, are the library layer's (hume/lib/import_reader.py), shared with annotation and
retrieval imports."""
from .items import ImportSummary, check_storable, file_format, import_task, import_upload
from .options import ImportOptions, parse_options

__all__ = ["ImportOptions", "ImportSummary", "check_storable", "file_format", "import_task", "import_upload",
           "parse_options"]
