"""Arguments against inputSchema (with defaults applied) and structuredContent against outputSchema."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from skillc.frontend.jsonsrc import pointer
from skillc.ir.render import copy_json


def _with_defaults(base: Any) -> Any:
    """A validator class that fills ``default`` of missing properties before checking them."""
    properties = base.VALIDATORS["properties"]

    def fill(validator: Any, props: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "object") and validator.is_type(props, "object"):
            for name, sub in props.items():
                if isinstance(sub, dict) and "default" in sub and name not in instance:
                    instance[name] = copy_json(sub["default"])
        yield from properties(validator, props, instance, schema)

    return jsonschema.validators.extend(base, {"properties": fill})


@dataclass(frozen=True)
class SchemaProblem:
    pointer: str  # JSON pointer into the instance, "" for the whole value
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


class SchemaCheck:
    """A compiled schema; build once per API (building costs far more than validating)."""

    def __init__(self, schema: dict[str, Any], *, fill_defaults: bool) -> None:
        base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
        cls = _with_defaults(base) if fill_defaults else base
        self._validator = cls(schema)

    def problems(self, instance: Any) -> list[SchemaProblem]:
        """Validate (and, for inputs, fill defaults in place); problems sorted by pointer."""
        errors = sorted(self._validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        return [SchemaProblem(pointer(e.absolute_path), e.message) for e in errors]
