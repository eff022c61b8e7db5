"""A schema compiled to plain Python checks, for the calls whose values are valid.

jsonschema walks a schema anew for every value (a validator object per subschema, a lookup per
keyword): a searchDrinks result of three drinks costs ~60 descents, ~0.3 ms, on every call. Most
values are valid, and a valid value needs no error messages, only a yes. :func:`compile_checker`
turns the common keyword subset of a schema into nested closures once per API; a value it accepts
is valid, and for a value it rejects :class:`~skillc.runtime.api.schema.SchemaCheck` asks
jsonschema for the problems, so every message stays jsonschema's.

A schema that uses any keyword outside the subset (or a ``$schema`` other than draft 7, whose
meaning the closures follow) compiles to None and is checked by jsonschema alone. Keywords run in
the schema's own order, as jsonschema runs them, so the defaults an input schema fills
(``fill_defaults``) are filled at the same moments.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from typing import Any

from skillc.ir.render import copy_json

Check = Callable[[Any], bool]

# Keywords with no say on validity (format: SchemaCheck gives jsonschema no format checker).
_ANNOTATIONS = frozenset(
    ["title", "description", "default", "examples", "$comment", "readOnly", "writeOnly", "deprecated", "format"]
)
_DRAFT7 = ("http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema")


class _Unsupported(Exception):
    """The schema uses a keyword (or a keyword's form) the closures do not follow."""


def compile_checker(schema: Any, *, fill_defaults: bool) -> Check | None:
    """A function that says whether a value is valid (True: valid, filling input defaults as
    jsonschema does; False: ask jsonschema), or None when the schema needs jsonschema itself."""
    if isinstance(schema, dict) and schema.get("$schema", _DRAFT7[0]) not in _DRAFT7:
        return None
    try:
        return _compile(schema, fill_defaults)
    except _Unsupported:
        return None


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _number,
    # draft 7: 1.0 is an integer
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer()),
}


def _compile(schema: Any, fill: bool) -> Check:
    if schema is True or schema == {}:
        return lambda _x: True
    if schema is False:
        return lambda _x: False
    if not isinstance(schema, dict):
        raise _Unsupported
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS or key == "$schema":
            continue
        if key == "additionalProperties" and "properties" in schema:
            continue  # compiled with properties (it needs their names)
        maker = _KEYWORDS.get(key)
        if maker is None:
            raise _Unsupported
        checks.append(maker(value, schema, fill))
    return _all_of(checks)


# The combinators below loop in plain functions rather than all() over a generator: a check runs
# once per value of a result (~100 times for three drinks), and a generator's set-up costs about
# as much as the test it wraps.


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return lambda _x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)

    def check(x: Any) -> bool:
        for c in checks:  # noqa: SIM110 (a loop, not all(): see above)
            if not c(x):
                return False
        return True

    return check


def _type(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
        raise _Unsupported
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]

    def check(x: Any) -> bool:
        for t in tests:  # noqa: SIM110
            if t(x):
                return True
        return False

    return check


def _properties(value: Any, schema: dict[str, Any], fill: bool) -> Check:
    if not isinstance(value, dict):
        raise _Unsupported
    props = [(name, _compile(sub, fill)) for name, sub in value.items()]
    defaults = [(n, s["default"]) for n, s in value.items() if fill and isinstance(s, dict) and "default" in s]
    extra = _additional_check(schema.get("additionalProperties", True), frozenset(value), fill)

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for name, default in defaults:
            if name not in x:
                x[name] = copy_json(default)
        for name, sub in props:
            if name in x and not sub(x[name]):
                return False
        return extra is None or extra(x)

    return check


def _additional_check(value: Any, known: frozenset[str], fill: bool) -> Check | None:
    if value is True or value == {}:
        return None
    if value is False:
        return lambda x: known.issuperset(x)
    sub = _compile(value, fill)

    def check(x: Any) -> bool:
        for k, v in x.items():  # noqa: SIM110
            if k not in known and not sub(v):
                return False
        return True

    return check


def _additional(value: Any, schema: dict[str, Any], fill: bool) -> Check:
    extra = _additional_check(value, frozenset(), fill)  # no properties: every key is additional
    return lambda x: extra is None or not isinstance(x, dict) or extra(x)


def _required(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise _Unsupported
    names = frozenset(value)
    return lambda x: not isinstance(x, dict) or names <= x.keys()


def _items(value: Any, _schema: dict[str, Any], fill: bool) -> Check:
    if not isinstance(value, dict | bool):
        raise _Unsupported  # the array (tuple) form
    sub = _compile(value, fill)

    def check(x: Any) -> bool:
        if isinstance(x, list):
            for v in x:
                if not sub(v):
                    return False
        return True

    return check


def _enum(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
    # Only strings (and null): jsonschema's equality tells true from 1 and 1 from 1.0 apart.
    if not isinstance(value, list) or not all(isinstance(v, str) or v is None for v in value):
        raise _Unsupported
    allowed = frozenset(value)
    return lambda x: (isinstance(x, str) or x is None) and x in allowed


def _const(value: Any, schema: dict[str, Any], fill: bool) -> Check:
    return _enum([value], schema, fill)


def _bound(test: Callable[[float, float], bool]) -> Callable[[Any, dict[str, Any], bool], Check]:
    def make(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
        if not _number(value):
            raise _Unsupported
        return lambda x: not _number(x) or test(x, value)

    return make


def _length(test: Callable[[int, int], bool], kind: type[Sized]) -> Callable[[Any, dict[str, Any], bool], Check]:
    def make(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Unsupported
        return lambda x: not isinstance(x, kind) or test(len(x), value)

    return make


def _pattern(value: Any, _schema: dict[str, Any], _fill: bool) -> Check:
    from skillc.runtime.api.schema import re2_search  # schema imports this module

    if not isinstance(value, str):
        raise _Unsupported
    return lambda x: not isinstance(x, str) or re2_search(value, x)


_KEYWORDS: dict[str, Callable[[Any, dict[str, Any], bool], Check]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "minimum": _bound(lambda x, v: x >= v),
    "maximum": _bound(lambda x, v: x <= v),
    "exclusiveMinimum": _bound(lambda x, v: x > v),
    "exclusiveMaximum": _bound(lambda x, v: x < v),
    "minLength": _length(lambda n, v: n >= v, str),
    "maxLength": _length(lambda n, v: n <= v, str),
    "minItems": _length(lambda n, v: n >= v, list),
    "maxItems": _length(lambda n, v: n <= v, list),
    "minProperties": _length(lambda n, v: n >= v, dict),
    "maxProperties": _length(lambda n, v: n <= v, dict),
    "pattern": _pattern,
}
