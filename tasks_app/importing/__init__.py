"""Dataset import (admins; docs/import.md): reading files safely, parsing options, writing items atomically."""
from hume.lib.import_reader import MAX_PROBLEMS, ImportFailed, ImportProblem, ProblemLog, iter_jsonl, read_lines

from .items import ImportSummary, check_storable, file_format, import_task, import_upload
from .options import ImportOptions, parse_options

__all__ = [
    "MAX_PROBLEMS", "ImportFailed", "ImportOptions", "ImportProblem", "ImportSummary", "ProblemLog",
    "check_storable", "file_format", "import_task", "import_upload", "iter_jsonl", "parse_options", "read_lines",
]
