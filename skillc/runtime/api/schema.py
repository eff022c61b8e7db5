"""Arguments against inputSchema (with defaults applied) and structuredContent against outputSchema.

Every regular expression of a schema (``pattern``, the keys of ``patternProperties``, and the
``patternProperties`` that ``additionalProperties`` consults) runs on RE2, which matches in time
linear in the input: no pattern can backtrack without bound. A pattern RE2 cannot compile
(backreferences, lookaround) is not silently run on Python's ``re``: the check reports it
(:attr:`SchemaCheck.unsupported`) and the call chain refuses the call (``RUN040``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from skillc.frontend.jsonsrc import pointer
from skillc.frontend.patterns import compiled, unsupported_patterns
from skillc.frontend.upload_formats import upload_fields
from skillc.ir.render import copy_json
from skillc.runtime.api.schema_fast import compile_checker


def _scalar(text: str) -> str:
    """RE2 matches UTF-8; a lone surrogate is matched as U+FFFD (it has no UTF-8 form)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def re2_search(pattern: str, text: str) -> bool:
    """``re.search`` on RE2; a pattern RE2 refuses never matches (the call is refused before this runs)."""
    program = compiled(pattern)
    return not isinstance(program, str) and program.search(_scalar(text)) is not None


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not re2_search(patrn, instance):
        yield jsonschema.exceptions.ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, pattern_properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in pattern_properties.items():
        for k, v in instance.items():
            if re2_search(patrn, k):
                yield from validator.descend(v, subschema, path=k, schema_path=patrn)


def _additional(instance: dict[str, Any], schema: Any) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    for prop in instance:
        if prop not in properties and not any(re2_search(p, prop) for p in patterns):
            yield prop


def _additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield jsonschema.exceptions.ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            listed = ", ".join(repr(each) for each in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield jsonschema.exceptions.ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


def _linear(base: Any) -> Any:
    """``base`` with every regular expression keyword on RE2."""
    overrides = {"pattern": _pattern, "patternProperties": _pattern_properties}
    if "additionalProperties" in base.VALIDATORS:
        overrides["additionalProperties"] = _additional_properties
    return jsonschema.validators.extend(base, overrides)


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
        self.unsupported = unsupported_patterns(schema)
        # Arguments WeChat fills with a local upload path (format image / file): refused as unsupported_format.
        self.uploads = upload_fields(schema)
        base = _linear(jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator))
        cls = _with_defaults(base) if fill_defaults else base
        self._validator = cls(schema)
        # A valid value (most are) is told by closures compiled here; jsonschema words the problems.
        self._valid = compile_checker(schema, fill_defaults=fill_defaults)

    def problems(self, instance: Any) -> list[SchemaProblem]:
        """Validate (and, for inputs, fill defaults in place); problems sorted by pointer."""
        if self._valid is not None and self._valid(instance):
            return []
        errors = sorted(self._validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        return [SchemaProblem(pointer(e.absolute_path), e.message) for e in errors]
