"""The compiled schema checks (skillc/runtime/api/schema_fast.py) say "valid" exactly when
jsonschema does, fill input defaults as jsonschema does, and spare jsonschema the valid values."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from skillc.runtime.api.schema import SchemaCheck
from skillc.runtime.api.schema_fast import compile_checker

from .conftest import COFFEE

MANIFEST = json.loads((COFFEE / "mcp.json").read_text())

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 5}}, "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 3},
    {"type": "array", "items": {"enum": ["x", "y", None]}, "minItems": 1, "maxItems": 2},
    {"type": "object", "minProperties": 1, "maxProperties": 1},
    {"const": "only"},
    {"type": "number", "exclusiveMaximum": 10},
    {"type": "string", "pattern": "^d[0-9]+$"},
    {"type": "array", "items": False},
    {"required": ["k"], "properties": {"k": {"type": "boolean"}}},
    {"required": ["a", "b"]},
    {"type": "array", "items": {"type": "string"}},
    {"type": ["integer", "string", "null"]},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "integer"}},
]
VALUES: list[Any] = [
    None, True, False, 0, 1, 1.0, 2.5, 5, 6, -1, 10, 9.99, "", "x", "y", "ab", "abcd", "only", "d12", "dx",
    [], ["x"], ["x", "y"], ["x", "y", "x"], ["z"], [1], [None],
    {}, {"a": 1}, {"a": 1.0}, {"a": True}, {"a": 0}, {"a": "s"}, {"a": "s", "b": 1}, {"b": 2}, {"b": 0},
    {"k": True}, {"k": 1}, {"a": 3, "k": False},
    ["x", 1], ["x", "y", 3], {"a": 1, "b": "s"}, {"a": 1, "b": 2},
]  # fmt: skip


def coffee_schemas() -> list[dict[str, Any]]:
    return [s for api in MANIFEST["apis"] for s in (api.get("inputSchema"), api.get("outputSchema")) if s]


@pytest.mark.parametrize("schema", SCHEMAS + coffee_schemas(), ids=lambda s: json.dumps(s)[:60])
def test_the_compiled_check_agrees_with_jsonschema_on_every_value(schema: dict[str, Any]) -> None:
    fast = compile_checker(schema, fill_defaults=False)
    assert fast is not None  # every keyword here is in the compiled subset
    check = SchemaCheck(schema, fill_defaults=False)
    for value in VALUES:
        slow_valid = not list(check._validator.iter_errors(copy.deepcopy(value)))
        assert fast(copy.deepcopy(value)) is slow_valid, value


def test_the_coffee_results_are_told_valid_without_jsonschema() -> None:
    search = next(a for a in MANIFEST["apis"] if a["name"] == "searchDrinks")
    check = SchemaCheck(search["outputSchema"], fill_defaults=False)

    class Refuses:
        def iter_errors(self, _instance: Any) -> Any:
            raise AssertionError("jsonschema ran on a valid value")

    valid = check._validator
    check._validator = Refuses()
    drink = {"id": "d01", "name": "Latte", "price": 20, "image": "https://img.example/d01.jpg", "tags": ["hot"]}
    assert check.problems({"keyword": "latte", "drinks": [drink], "total": 1}) == []
    # An invalid value is worded by jsonschema, as before.
    check._validator = valid
    problems = check.problems({"drinks": [{**drink, "price": "20"}], "total": 1})
    assert [str(p) for p in problems] == ["/drinks/0/price: '20' is not of type 'number'"]


def test_input_defaults_are_filled_as_jsonschema_fills_them() -> None:
    schema = next(a for a in MANIFEST["apis"] if a["name"] == "confirmOrder")["inputSchema"]
    check = SchemaCheck(schema, fill_defaults=True)
    assert check._valid is not None
    args = {"drinkId": "d01"}
    assert check.problems(args) == []
    slow = {"drinkId": "d01"}
    assert not list(check._validator.iter_errors(slow))
    assert args == slow and "size" in args


def test_keywords_outside_the_subset_leave_the_schema_to_jsonschema() -> None:
    for schema in (
        {"anyOf": [{"type": "string"}]},
        {"$ref": "#/definitions/x", "definitions": {"x": {}}},
        {"type": "object", "patternProperties": {"^a": {}}},
        {"enum": [1, True]},  # jsonschema tells 1 from true
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"},
    ):
        assert compile_checker(schema, fill_defaults=False) is None, schema
