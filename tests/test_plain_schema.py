"""frontend/plain_schema.py against jsonschema: whatever it calls plainly valid, the Draft 7
meta-schema accepts, so skipping jsonschema for it can never hide an MCP008/MCP009."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.frontend.plain_schema import plainly_valid

from .conftest import COFFEE

_META = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)

KEYWORDS = (
    "type", "properties", "required", "items", "additionalProperties", "title", "description", "format",
    "pattern", "default", "const", "examples", "enum", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "minProperties",
    "maxProperties", "uniqueItems", "allOf", "anyOf", "oneOf", "not",
    # Keywords plain_schema leaves to jsonschema, and names that are no keyword at all.
    "$schema", "$ref", "patternProperties", "dependencies", "x-vendor",
)  # fmt: skip
TYPE_NAMES = ("array", "boolean", "integer", "null", "number", "object", "string", "String", "int", "")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.5, -2.0, 2.0, float("nan")]),
    st.sampled_from(TYPE_NAMES),
)
names = st.sampled_from(["a", "b", "c"])


def _value(keyword: str, children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value the meta-schema takes for ``keyword``, sometimes a near miss or anything."""
    types = st.sampled_from(TYPE_NAMES[:7])
    good: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(types, st.lists(types, min_size=1, max_size=3, unique=True)),
        "required": st.lists(names, max_size=3, unique=True),
        "properties": st.dictionaries(names, children, max_size=3),
        "items": st.one_of(children, st.lists(children, min_size=1, max_size=2)),
        "enum": st.lists(scalars, max_size=3),
        "examples": st.lists(scalars, max_size=2),
        "uniqueItems": st.booleans(),
        "multipleOf": st.sampled_from([1, 2, 0.5]),
    }
    miss: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(st.sampled_from(TYPE_NAMES), st.lists(st.sampled_from(TYPE_NAMES), max_size=3)),
        "required": st.lists(st.one_of(names, st.integers(0, 1)), max_size=3),
        "items": st.lists(children, max_size=1),
        "multipleOf": st.sampled_from([0, -1, 0.0, True, "1"]),
    }
    for key in ("additionalProperties", "not"):
        good[key] = children
    for key in ("allOf", "anyOf", "oneOf"):
        good[key], miss[key] = st.lists(children, min_size=1, max_size=2), st.lists(children, max_size=1)
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        good[key], miss[key] = st.sampled_from([-1, 0, 2, 0.5]), st.sampled_from([True, "1", None])
    for key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        good[key], miss[key] = st.integers(0, 3), st.sampled_from([-1, 1.0, 1.5, True, "1"])
    for key in ("title", "description", "format", "pattern"):
        good[key] = st.text(max_size=3)
    valid = good.get(keyword, scalars)
    return st.one_of(*[valid] * 12, miss.get(keyword, scalars), scalars, children)


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # The keywords plain_schema knows come first and most often; the others make it defer.
    keyword_values = st.one_of(*[st.sampled_from(KEYWORDS[:-5])] * 6, st.sampled_from(KEYWORDS[-5:])).flatmap(
        lambda k: st.tuples(st.just(k), _value(k, children))
    )
    objects = st.lists(keyword_values, max_size=4).map(dict)
    return st.one_of(st.booleans(), objects, objects, objects)


leaves = st.one_of(st.booleans(), st.sampled_from([{}, {"type": "string"}, {"type": "integer", "minimum": 0}]))
schemas = st.recursive(st.one_of(leaves, leaves, leaves, scalars), _schemas, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(schemas)
def test_plainly_valid_implies_the_meta_schema_accepts(schema: Any) -> None:
    if plainly_valid(schema):
        assert list(_META.iter_errors(schema)) == [], schema


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strin"},
        {"type": []},
        {"type": ["string", "string"]},
        {"type": ["string", 1]},
        {"required": ["a", "a"]},
        {"required": "a"},
        {"required": [1]},
        {"minLength": -1},
        {"maxItems": True},
        {"minimum": "1"},
        {"multipleOf": 0},
        {"items": []},
        {"items": [{"type": "nope"}]},
        {"properties": {"a": {"type": 3}}},
        {"properties": []},
        {"additionalProperties": {"enum": 1}},
        {"anyOf": []},
        {"not": 1},
        {"uniqueItems": "yes"},
        {"description": 1},
        {"enum": {}},
        {"examples": 1},
        "object",
        None,
    ],
)
def test_what_the_meta_schema_rejects_is_never_plainly_valid(schema: Any) -> None:
    assert list(_META.iter_errors(schema)) != []
    assert not plainly_valid(schema)


def test_the_usual_schemas_are_plainly_valid() -> None:
    # The point of the fast path: the schemas real skills write skip jsonschema altogether.
    manifest = json.loads((COFFEE / "mcp.json").read_text("utf-8"))
    schemas = [api[key] for api in manifest["apis"] for key in ("inputSchema", "outputSchema") if key in api]
    assert len(schemas) >= 4
    assert all(plainly_valid(s) for s in schemas)
    assert plainly_valid({})
    assert plainly_valid(True)
    assert plainly_valid({"type": ["string", "null"], "pattern": "^[a-z]+$", "maxLength": 8, "default": None})


def test_keywords_it_does_not_know_go_to_jsonschema() -> None:
    assert not plainly_valid({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert not plainly_valid({"type": "object", "patternProperties": {"^a": {}}})
    assert not plainly_valid({"x-vendor": 1})
    assert not plainly_valid({"minLength": 2.0})  # an integer to jsonschema, left to it


def _random_schema(rng: random.Random, depth: int = 0) -> Any:
    """A schema that is mostly right, with a near miss about one value in ten (uniform choices,
    unlike hypothesis's, which favour the odd branches and so rarely build a valid schema)."""
    if depth > 3 or rng.random() < 0.15:
        return rng.choice([True, False, {}, {"type": "string"}, 1, None])
    schema: dict[str, Any] = {}
    for keyword in rng.sample(KEYWORDS[:-5], rng.randint(1, 4)):
        schema[keyword] = _random_value(rng, keyword, depth)
    if rng.random() < 0.05:
        schema[rng.choice(KEYWORDS[-5:])] = "x"
    return schema


def _random_value(rng: random.Random, keyword: str, depth: int) -> Any:
    child = lambda: _random_schema(rng, depth + 1)  # noqa: E731
    miss = rng.random() < 0.1
    if keyword == "type":
        pool = TYPE_NAMES if miss else TYPE_NAMES[:7]
        return (
            rng.choice(pool)
            if rng.random() < 0.6
            else [rng.choice(pool) for _ in range(rng.randint(0 if miss else 1, 3))]
        )
    if keyword == "required":
        return [rng.choice(["a", "b", "c", 1] if miss else ["a", "b", "c"]) for _ in range(rng.randint(0, 3))]
    if keyword == "properties":
        return {rng.choice("abc"): child() for _ in range(rng.randint(0, 3))}
    if keyword in ("additionalProperties", "not"):
        return child()
    if keyword == "items":
        return child() if rng.random() < 0.5 else [child() for _ in range(rng.randint(0 if miss else 1, 2))]
    if keyword in ("allOf", "anyOf", "oneOf"):
        return [child() for _ in range(rng.randint(0 if miss else 1, 2))]
    if keyword.startswith(("min", "max")) and keyword not in ("minimum", "maximum"):
        return rng.choice([-1, 1.0, 1.5, True, "1"]) if miss else rng.randint(0, 3)
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        return rng.choice([True, "1", None, 0, -1]) if miss else rng.choice([1, 2, 0.5])
    if keyword in ("enum", "examples"):
        return rng.choice([1, "a", {}]) if miss else [rng.choice([1, "a", None]) for _ in range(rng.randint(0, 2))]
    if keyword == "uniqueItems":
        return rng.choice([1, "true", None]) if miss else rng.random() < 0.5
    if keyword in ("default", "const"):
        return rng.choice([1, "a", None, [], {}])
    return rng.choice([1, None, []]) if miss else rng.choice(["", "a", "^[a-z]+$"])


def test_plainly_valid_agrees_with_the_meta_schema_on_many_mostly_right_schemas() -> None:
    rng = random.Random(16)
    plain = rejected = 0
    for _ in range(4000):
        schema = _random_schema(rng)
        valid = not list(_META.iter_errors(schema))
        if plainly_valid(schema):
            assert valid, schema
            plain += 1
        rejected += not valid
    # Both kinds were well represented: the implication was tested, and not only vacuously.
    assert plain > 1000 and rejected > 1000
