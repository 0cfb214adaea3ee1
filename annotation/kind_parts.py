"""The parts of a kind that annotation uses (each kind provides them in its folder, kinds/<name>/), checked for
every kind by tasks_app/kind_parts.py."""
from __future__ import annotations

from annotation.core.forms import ANSWER_FORMS
from annotation.llm.prompting import PROMPTS
from tasks_app.core.kinds import KINDS
from tasks_app.kind_parts import Check, template_exists

PARTS: dict[str, Check] = {
    "answer form": lambda kind: kind in ANSWER_FORMS,
    "answer template": lambda kind: kind in ANSWER_FORMS and template_exists(ANSWER_FORMS[kind].template),
    "LLM prompt": lambda kind: kind in PROMPTS,
    "keyboard help": lambda kind: template_exists(getattr(KINDS.get(kind), "keys_help_template", None)),
}
