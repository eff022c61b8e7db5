"""A narrow, fast test that a JSON Schema is valid Draft 7, so most manifests never need jsonschema.

`skillc check` meta-validates every inputSchema and outputSchema of mcp.json, and importing
jsonschema (with attrs, referencing, rpds and its format checkers) costs more than checking any
real manifest. Real schemas use a handful of keywords, and for those the Draft 7 meta-schema's
rules come down to a few type tests. :func:`plainly_valid` says True only for a schema built from
those keywords that passes them; anything else (another keyword, ``$schema``, a value that is not
plainly right) is False and goes to jsonschema, which alone words the diagnostics. True must
therefore imply that jsonschema finds no error: tests/test_plain_schema.py holds it to that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _any(_value: Any) -> bool:
    return True


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    # jsonschema also takes 2.0 as an integer; leaving that to it keeps this test simple.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _array(value: Any) -> bool:
    return isinstance(value, list)


def _unique_strings(value: Any, *, non_empty: bool = False) -> bool:
    return (
        isinstance(value, list)
        and (bool(value) or not non_empty)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return _unique_strings(value, non_empty=True) and all(v in _SIMPLE_TYPES for v in value)


def _schemas(value: Any) -> bool:
    """The meta-schema's schemaArray: at least one schema."""
    return isinstance(value, list) and bool(value) and all(plainly_valid(v) for v in value)


def _schema_map(value: Any) -> bool:
    return isinstance(value, dict) and all(plainly_valid(v) for v in value.values())


def _items(value: Any) -> bool:
    return plainly_valid(value) or _schemas(value)


# Keyword -> the test its value must pass: the Draft 7 meta-schema's rule for it, or a narrower one.
_KEYWORDS: dict[str, Callable[[Any], bool]] = {
    "type": _type,
    "properties": _schema_map,
    "required": _unique_strings,
    "items": _items,
    "additionalProperties": lambda v: plainly_valid(v),
    "title": _string,
    "description": _string,
    "format": _string,
    "pattern": _string,  # the meta-schema's format "regex" is not asserted when a schema is checked
    "default": _any,
    "const": _any,
    "examples": _array,
    "enum": _array,
    "minimum": _number,
    "maximum": _number,
    "exclusiveMinimum": _number,
    "exclusiveMaximum": _number,
    "multipleOf": _positive,
    "minLength": _count,
    "maxLength": _count,
    "minItems": _count,
    "maxItems": _count,
    "minProperties": _count,
    "maxProperties": _count,
    "uniqueItems": _boolean,
    "allOf": _schemas,
    "anyOf": _schemas,
    "oneOf": _schemas,
    "not": lambda v: plainly_valid(v),
}


def plainly_valid(schema: Any) -> bool:
    """True when ``schema`` is certainly a valid Draft 7 schema; False when jsonschema must decide.

    Recursion follows the schema's nesting, which the manifest check bounds (MAX_SCHEMA_DEPTH).
    """
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        test = _KEYWORDS.get(key)
        if test is None or not test(value):
            return False
    return True
