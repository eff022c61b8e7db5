"""JavaScript value semantics (ir/jsvalue.py) and the evaluator (ir/expreval.py)."""

from __future__ import annotations

import math

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.expr import parse_expression
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.jsvalue import (
    UNDEFINED,
    JSValue,
    add,
    get_member,
    loose_equals,
    number_to_string,
    strict_equals,
    to_boolean,
    to_int32,
    to_number,
    to_string,
    to_text,
)


def ev(source: str, data: dict[str, JSValue] | None = None, scope: Scope | None = None) -> JSValue:
    expr = parse_expression(source, file="f", line=1, column=1, sink=DiagnosticSink())
    assert expr is not None
    return evaluate(expr, scope or Scope(data or {}))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1, "1"),
        (1.5, "1.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-0.0, "0"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2.5e25, "2.5e+25"),
        (100.0, "100"),
        (-12.5, "-12.5"),
        (2**60, "1152921504606847000"),
    ],
)
def test_number_to_string_matches_javascript(value: float, text: str) -> None:
    assert number_to_string(value) == text


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("  42  ", 42),
        ("", 0),
        ("0x1A", 26),
        ("1e3", 1000),
        ("-Infinity", -math.inf),
        ("1_000", math.nan),
        ("12px", math.nan),
        (None, 0),
        (True, 1),
        ([], 0),
        ([7], 7),
        ([1, 2], math.nan),
        ({}, math.nan),
        (UNDEFINED, math.nan),
    ],
)
def test_to_number(value: JSValue, number: float) -> None:
    got = to_number(value)
    assert (math.isnan(got) and math.isnan(number)) or got == number


def test_conversions() -> None:
    assert to_string([1, None, [2, UNDEFINED], "x"]) == "1,,2,,x"
    assert to_string({"a": 1}) == "[object Object]"
    assert to_text(UNDEFINED) == "" and to_text(None) == "null" and to_string(UNDEFINED) == "undefined"
    samples: list[JSValue] = [[], {}, "0", "", 0, -0.0, math.nan, None, UNDEFINED]
    assert [to_boolean(v) for v in samples] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
    ]
    assert to_int32(2**31) == -(2**31) and to_int32(-1.9) == -1 and to_int32(math.inf) == 0


def test_member_access() -> None:
    assert get_member("a😀b", "length") == 4  # UTF-16 code units, as in JavaScript
    assert get_member("abc", 1) == "b" and get_member("abc", "01") is UNDEFINED
    assert get_member([1, 2], 1.0) == 2 and get_member([1, 2], -1) is UNDEFINED
    assert get_member({"a": 1}, "toString") is UNDEFINED
    assert get_member({"__proto__": 1}, "__proto__") is UNDEFINED
    assert get_member(None, "a") is UNDEFINED and get_member({"a": 1}, None) is UNDEFINED
    assert get_member(5, "toFixed") is UNDEFINED


def test_equality() -> None:
    obj: dict[str, JSValue] = {"a": 1}
    assert loose_equals(None, UNDEFINED) and not strict_equals(None, UNDEFINED)
    assert loose_equals("1", 1) and not strict_equals("1", 1)
    assert not loose_equals(True, "true") and loose_equals([0], False)
    assert loose_equals(obj, obj) and not loose_equals({"a": 1}, {"a": 1})
    assert strict_equals(1, 1.0) and not strict_equals(True, 1)
    assert not loose_equals(math.nan, math.nan)


def test_add_keeps_integers_and_concatenates_strings() -> None:
    assert add(1, 2) == 3 and isinstance(add(1, 2), int)
    assert add(0.5, 0.5) == 1 and isinstance(add(0.5, 0.5), int)
    assert add("a", None) == "anull" and add(UNDEFINED, "x") == "undefinedx"
    assert add(2**53, 2**53) == 2**54 and isinstance(add(2**53, 2**53), float)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("order.lines[0].price * order.lines[0].qty", 29.700000000000003),
        ("missing.deep.path", UNDEFINED),
        ("list.length", 2),
        ("list[1].name", "b"),
        ("n || 'dflt'", "dflt"),
        ("list.length > 1 ? 'many' : 'one'", "many"),
        ("{...o, k: 1}", {"x": 1, "k": 1}),
        ("{...o}", {"x": 1}),
        ("{...s}", "str"),
        ("[...list]", [{"name": "a"}, {"name": "b"}]),
        ("list.slice(1)", UNDEFINED),
        ("-0", 0),
        ("z * -1", -0.0),
        ("7 / 2", 3.5),
        ("6 / 2", 3),
        ("-7 % 2", -1),
        ("1 << 40", 256),
        ("'b' > 'a' && 'B' < 'a'", True),
    ],
)
def test_evaluate(source: str, value: JSValue) -> None:
    data: dict[str, JSValue] = {
        "order": {"lines": [{"price": 9.9, "qty": 3}]},
        "list": [{"name": "a"}, {"name": "b"}],
        "n": None,
        "o": {"x": 1},
        "s": "str",
        "z": 0,
    }
    got = ev(source, data)
    assert got == value and type(got) is type(value)
    if isinstance(value, float) and value == 0:
        assert math.copysign(1.0, got) == math.copysign(1.0, value)  # type: ignore[arg-type]


def test_scope_chain_resolves_loop_variables_first() -> None:
    data: dict[str, JSValue] = {"item": "outer", "title": "T"}
    inner = Scope(data).child({"item": "inner", "index": 3})
    assert ev("item + index + title", scope=inner) == "inner3T"
    assert ev("item", scope=Scope(data)) == "outer"
    assert inner.lookup("toString") is UNDEFINED


def test_evaluate_never_raises_on_odd_data() -> None:
    data: dict[str, JSValue] = {"big": 10**400, "nan": math.nan, "deep": [[[[[[]]]]]], "u": "\ud800"}
    for source in ("big + 1", "big * big", "big | 0", "nan > 1", "deep + ''", "u.length", "u + big", "-big"):
        ev(source, data)
    assert ev("big + ''", data) == "Infinity"
