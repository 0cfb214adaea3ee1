"""The task kinds as tasks_app and the apps after it use them: the registry (kinds/kind_registry.py) and what the
kinds share (kinds/base.py). A kind itself lives in its folder under kinds/; nothing here lists the kinds."""
from kinds.base import (
    STRATA_FIELDS,
    Config,
    ParsedRecord,
    TaskConfig,
    TaskKind,
    ValidationProblem,
    canonical_json,
    content_digest,
    id_string,
    read_strata,
)
from kinds.kind_registry import KIND_CHOICES, KINDS, get_kind, kind_choices

__all__ = ["KINDS", "KIND_CHOICES", "STRATA_FIELDS", "Config", "ParsedRecord", "TaskConfig", "TaskKind",
           "ValidationProblem", "canonical_json", "content_digest", "get_kind", "id_string", "kind_choices",
           "read_strata"]
