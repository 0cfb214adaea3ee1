"""The API's JSON parser: DRF's, with a body nested too deeply answered 400 instead of a crash.

Python's decoder recurses once per level and raised RecursionError (a 500) on a body nested 100,000 deep;
no request of this API nests more than a few levels."""
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class JSONBodyParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - request body: nested too deeply") from None
