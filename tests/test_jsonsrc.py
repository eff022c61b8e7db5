"""The positioned JSON parser: same values as json.loads, exact error positions, no crash."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.jsonsrc import JObject, nearest_span, parse_json, pointer

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 2]))
def test_values_match_json_loads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    sink = DiagnosticSink()
    tree = parse_json(text, "x.json", sink)
    assert tree is not None
    assert list(sink) == []
    assert tree.to_python() == json.loads(text)


def _strict(word: str) -> None:
    raise ValueError(f"{word} is not JSON")  # Python's json accepts NaN and Infinity; JSON does not


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_never_raises(text: str) -> None:
    sink = DiagnosticSink()
    tree = parse_json(text, "x.json", sink)
    try:
        expected = json.loads(text, parse_constant=_strict)
    except ValueError:
        expected = None
        if tree is not None:  # only recoverable defects may leave a tree behind
            assert {d.code for d in sink} <= {"JSON002", "JSON003", "JSON004"}
    else:
        if not text.startswith("\ufeff"):
            assert tree is not None
            assert tree.to_python() == expected


def _one(text: str) -> tuple[str, int, int, str]:
    sink = DiagnosticSink()
    parse_json(text, "x.json", sink)
    [d] = list(sink)
    assert d.span is not None
    return d.code, d.span.line, d.span.column, d.message


def test_syntax_error_positions() -> None:
    assert _one('{\n  "a": 1\n  "b": 2\n}') == ("JSON001", 3, 3, "expected ',' or '}' after an object member")
    assert _one('{"a": tru}') == ("JSON001", 1, 7, "unexpected 'tru', expected a value")
    assert _one("{'a': 1}") == ("JSON001", 1, 2, "expected a double-quoted property name")
    assert _one('["a\\q"]') == ("JSON001", 1, 4, "invalid escape '\\q' in string")
    assert _one('{"a": 1 // note\n}') == ("JSON001", 1, 9, "comments are not allowed in JSON")
    assert _one('{"a": [1, 2}') == ("JSON001", 1, 12, "expected ',' or ']' after an array element")
    assert _one('{"a": "x') == ("JSON001", 1, 7, "unterminated string")
    assert _one("") == ("JSON001", 1, 1, "unexpected end of file, expected a value")
    assert _one("{} {}") == ("JSON001", 1, 4, "unexpected text after the end of the JSON value")


def test_recoverable_defects_keep_the_tree() -> None:
    sink = DiagnosticSink()
    tree = parse_json('\ufeff{"a": [1, 2,], "a": 3,}', "x.json", sink)
    assert tree is not None
    assert tree.to_python() == {"a": 3}  # JSON.parse semantics: the last duplicate wins
    assert [d.code for d in sink] == ["JSON004", "JSON002", "JSON003", "JSON002"]


def test_deep_nesting_is_a_diagnostic_not_a_crash() -> None:
    sink = DiagnosticSink()
    assert parse_json("[" * 5000 + "]" * 5000, "x.json", sink) is None
    assert [d.code for d in sink] == ["JSON005"]


def test_spans_point_at_keys_and_values() -> None:
    text = '{\n  "apis": [\n    {"name": "x", "inputSchema": {"type": 3}}\n  ]\n}'
    tree = parse_json(text, "x.json", DiagnosticSink())
    assert isinstance(tree, JObject)
    span = nearest_span(tree, ("apis", 0, "inputSchema", "type"))
    assert (span.line, span.column, span.end_column) == (3, 43, 44)
    key = nearest_span(tree, ("apis", 0, "name"), key=True)
    assert (key.line, key.column) == (3, 6)
    # A path that leaves the tree falls back to the deepest existing ancestor.
    assert nearest_span(tree, ("apis", 0, "nope", "deeper")) == nearest_span(tree, ("apis", 0))
    assert pointer(("apis", 0, "a/b~c")) == "/apis/0/a~1b~0c"
