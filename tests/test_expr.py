"""The {{ }} parser: trees, spans, dependencies, diagnostics for every rejected feature, limits."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from skillc.diagnostics import Diagnostic, DiagnosticSink, Span, render_text
from skillc.frontend.expr import (
    MAX_DEPTH,
    MAX_NESTING,
    UNDEFINED,
    ArrayLit,
    Binary,
    Call,
    Conditional,
    Expr,
    Ident,
    Index,
    Literal,
    Logical,
    Member,
    Mustache,
    ObjectLit,
    Property,
    Spread,
    Unary,
    dependencies,
    parse_expression,
    split_mustaches,
)


def parse(source: str, *, object_form: bool = False) -> tuple[Expr | None, list[Diagnostic]]:
    sink = DiagnosticSink()
    expr = parse_expression(source, file="c/index.wxml", line=1, column=1, sink=sink, object_form=object_form)
    return expr, list(sink)


def ok(source: str, *, object_form: bool = False) -> Expr:
    expr, diags = parse(source, object_form=object_form)
    assert diags == [], diags
    assert expr is not None
    return expr


def sexpr(e: Expr | Property) -> object:
    """A compact shape of a tree, spans left out, for structural assertions."""
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Ident):
        return e.name
    if isinstance(e, Member):
        return (".", sexpr(e.obj), e.prop)
    if isinstance(e, Index):
        return ("[]", sexpr(e.obj), sexpr(e.index))
    if isinstance(e, ArrayLit):
        return ["arr", *(sexpr(i) for i in e.items)]
    if isinstance(e, ObjectLit):
        return ["obj", *(sexpr(i) for i in e.entries)]
    if isinstance(e, Property):
        return (e.key, sexpr(e.value))
    if isinstance(e, Spread):
        return ("...", sexpr(e.arg))
    if isinstance(e, Unary):
        return (e.op, sexpr(e.arg))
    if isinstance(e, Binary | Logical):
        return (e.op, sexpr(e.left), sexpr(e.right))
    if isinstance(e, Conditional):
        return ("?:", sexpr(e.test), sexpr(e.consequent), sexpr(e.alternate))
    assert isinstance(e, Call)
    return ("call", sexpr(e.callee), *(sexpr(a) for a in e.args))


# --------------------------------------------------------------------------------------
# Trees and precedence
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "shape"),
    [
        ("1 + 2 * 3", ("+", 1, ("*", 2, 3))),
        ("1 - 2 - 3", ("-", ("-", 1, 2), 3)),
        ("a || b && c", ("||", "a", ("&&", "b", "c"))),
        ("a | b ^ c & d", ("|", "a", ("^", "b", ("&", "c", "d")))),
        ("a == b < c", ("==", "a", ("<", "b", "c"))),
        ("a < b << c", ("<", "a", ("<<", "b", "c"))),
        ("a << b + c", ("<<", "a", ("+", "b", "c"))),
        ("a === b !== c", ("!==", ("===", "a", "b"), "c")),
        ("a ? b : c ? d : e", ("?:", "a", "b", ("?:", "c", "d", "e"))),
        ("a ? b ? c : d : e", ("?:", "a", ("?:", "b", "c", "d"), "e")),
        ("a || b ? c : d", ("?:", ("||", "a", "b"), "c", "d")),
        ("!a.b", ("!", (".", "a", "b"))),
        ("--a", ("-", ("-", "a"))),
        ("(a + b) * c", ("*", ("+", "a", "b"), "c")),
        ("order.lines[0].price", (".", ("[]", (".", "order", "lines"), 0), "price")),
        ("[1, 'x', null, undefined]", ["arr", 1, "x", None, UNDEFINED]),
        ("[1][0]", ("[]", ["arr", 1], 0)),
        ("{a, b: 1, ...c}", ["obj", ("a", "a"), ("b", 1), ("...", "c")]),
        ("{if: 1}", ["obj", ("if", 1)]),
        (".5 + 5. + 1.25", ("+", ("+", 0.5, 5), 1.25)),
        ("true && false", ("&&", True, False)),
        ("a.if", (".", "a", "if")),
        ("typeof", "typeof"),
    ],
)
def test_parses_with_javascript_precedence(source: str, shape: object) -> None:
    assert sexpr(ok(source)) == shape


def test_object_form_is_the_brace_less_object_of_template_data() -> None:
    assert sexpr(ok("a, b: c + 1, ...d", object_form=True)) == ["obj", ("a", "a"), ("b", ("+", "c", 1)), ("...", "d")]
    assert sexpr(ok("...item", object_form=True)) == ["obj", ("...", "item")]
    assert sexpr(ok("item", object_form=True)) == ["obj", ("item", "item")]


def test_spans_are_absolute_one_based_and_end_exclusive() -> None:
    sink = DiagnosticSink()
    expr = parse_expression("a + bb", file="f.wxml", line=4, column=10, sink=sink)
    assert isinstance(expr, Binary)
    assert expr.span == Span(line=4, column=10, end_line=4, end_column=16)
    assert expr.right.span == Span(line=4, column=14, end_line=4, end_column=16)


def test_spans_follow_newlines_inside_the_expression() -> None:
    sink = DiagnosticSink()
    expr = parse_expression("a +\n  bb", file="f.wxml", line=4, column=10, sink=sink)
    assert isinstance(expr, Binary)
    assert expr.right.span == Span(line=5, column=3, end_line=5, end_column=5)


def test_large_integers_become_the_double_javascript_holds() -> None:
    lit = ok("9007199254740993")
    assert isinstance(lit, Literal) and lit.value == 9007199254740992.0


# --------------------------------------------------------------------------------------
# split_mustaches
# --------------------------------------------------------------------------------------


def test_split_keeps_literal_text_and_positions() -> None:
    sink = DiagnosticSink()
    parts = split_mustaches("Hi {{ name }}!\n{{n}}", file="f.wxml", line=2, column=7, sink=sink)
    assert list(sink) == []
    assert [p if isinstance(p, str) else p.source for p in parts] == ["Hi ", " name ", "!\n", "n"]
    first, second = parts[1], parts[3]
    assert isinstance(first, Mustache) and isinstance(second, Mustache)
    assert first.span == Span(line=2, column=10, end_line=2, end_column=20)
    assert first.expr is not None and first.expr.span == Span(line=2, column=13, end_line=2, end_column=17)
    assert second.span == Span(line=3, column=1, end_line=3, end_column=6)


def test_split_without_mustaches_returns_the_text() -> None:
    sink = DiagnosticSink()
    assert split_mustaches("plain }} text", file="f", line=1, column=1, sink=sink) == ["plain }} text"]
    assert split_mustaches("", file="f", line=1, column=1, sink=sink) == []


@pytest.mark.parametrize(
    ("text", "sources"),
    [
        ("{{ '}}' }}", [" '}}' "]),
        ('{{ "a}}b" + c }}', [' "a}}b" + c ']),
        ("{{ {a: 1} }}", [" {a: 1} "]),
        ("{{a}}}", ["a", "}"]),
        ("{{ 'it\\'s }}' }}", [" 'it\\'s }}' "]),
    ],
)
def test_closing_braces_inside_strings_and_objects_do_not_end_the_mustache(text: str, sources: list[str]) -> None:
    sink = DiagnosticSink()
    parts = split_mustaches(text, file="f", line=1, column=1, sink=sink)
    assert [p.source if isinstance(p, Mustache) else p for p in parts] == sources


def test_object_literal_closing_into_the_mustache_warns() -> None:
    sink = DiagnosticSink()
    parts = split_mustaches("{{ {a: {b: 1}} }}", file="f.wxml", line=1, column=1, sink=sink)
    assert [(d.code, d.span) for d in sink] == [("EXPR014", Span(line=1, column=13, end_line=1, end_column=15))]
    assert isinstance(parts[0], Mustache) and parts[0].expr is not None


def test_unterminated_mustache_is_reported_and_kept() -> None:
    sink = DiagnosticSink()
    parts = split_mustaches("ab {{ c", file="f.wxml", line=1, column=1, sink=sink)
    assert [(d.code, d.message, d.span) for d in sink] == [
        ("EXPR002", "'{{' is never closed by '}}'", Span(line=1, column=4, end_line=1, end_column=6))
    ]
    assert parts == ["ab ", Mustache(" c", None, Span(line=1, column=4, end_line=1, end_column=8))]


def test_unterminated_string_inside_a_mustache_names_the_string() -> None:
    sink = DiagnosticSink()
    split_mustaches("{{ 'abc }}", file="f.wxml", line=1, column=1, sink=sink)
    assert [(d.code, d.span) for d in sink] == [("EXPR003", Span(line=1, column=4, end_line=1, end_column=11))]


# --------------------------------------------------------------------------------------
# dependencies
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "paths"),
    [
        ("order.lines[0].price", {("order", "lines", 0, "price")}),
        ("a[i]", {("a",), ("i",)}),
        ("a[i].b", {("a",), ("i",)}),
        ("a['k'].b", {("a", "k", "b")}),
        ("a[1.0]", {("a", 1)}),
        ("list.length > 0 ? list[0].name : empty", {("list", "length"), ("list", 0, "name"), ("empty",)}),
        ("{x: a, ...b}", {("a",), ("b",)}),
        ("[a, -b]", {("a",), ("b",)}),
        ("1 + 'x'", set()),
        ("[a, b][i]", {("a",), ("b",), ("i",)}),
        ("items.join(sep)", {("items",), ("sep",)}),
    ],
)
def test_dependencies_are_static_paths(source: str, paths: set[tuple[str | int, ...]]) -> None:
    expr, _ = parse(source)
    assert expr is not None
    assert dependencies(expr) == frozenset(paths)


# --------------------------------------------------------------------------------------
# Rejected features: exact diagnostics, and golden renderings
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "code", "message", "columns", "tree_kept"),
    [
        ("1.5e3", "EXPR004", "exponent literal '1.5e3' is not supported by WeChat's compiler", (1, 6), False),
        ("0x1F", "EXPR004", "number literal '0x1F' is not supported by WeChat's compiler", (1, 5), False),
        ("+a", "EXPR005", "unary '+' is not supported by WeChat's compiler", (1, 2), True),
        (
            "x.slice(1)",
            "EXPR006",
            "function calls are not supported in WXML expressions; WeChat renders them as empty",
            (1, 11),
            True,
        ),
        ("typeof a", "EXPR007", "'typeof' is not supported in WXML expressions", (1, 7), False),
        ("a ?? b", "EXPR007", "operator '??' is not supported in WXML expressions", (3, 5), False),
        (
            "'ab'.length",
            "EXPR009",
            "member access on a literal or a parenthesized expression is not supported by WeChat's compiler",
            (5, 6),
            True,
        ),
        ("价格", "EXPR010", "unexpected character '价': names in WXML expressions must be ASCII", (1, 2), False),
        ("[...a]", "EXPR011", "spread '...' in an array literal is not supported by WeChat's compiler", (2, 5), True),
        ("a b", "EXPR001", "unexpected token 'b'", (3, 4), False),
        ("a +", "EXPR001", "unexpected end of expression", (4, 5), False),
        ("{}", "EXPR001", "empty object literal {} is not supported by WeChat's compiler", (1, 3), False),
        ("{'k': 1}", "EXPR001", "object key \"'k'\" is not supported: keys must be plain names", (2, 5), False),
        ("[1, 2,]", "EXPR001", "trailing comma in an array literal", (6, 7), False),
        ("-!a", "EXPR001", "unexpected token '!' after unary '-'", (2, 3), False),
        ("'abc", "EXPR003", "unterminated string literal", (1, 5), False),
        ("07.5", "EXPR001", "invalid number '07.5'", (1, 5), False),
    ],
)
def test_rejected_feature_reports_exact_diagnostic(
    source: str, code: str, message: str, columns: tuple[int, int], tree_kept: bool
) -> None:
    expr, diags = parse(source)
    assert [(d.code, d.message, d.span) for d in diags] == [
        (code, message, Span(line=1, column=columns[0], end_line=1, end_column=columns[1]))
    ]
    # A call compiles in wcc (its value is undefined), so it is the one warning of this table.
    assert diags[0].severity.value == ("warning" if code == "EXPR006" else "error")
    assert (expr is not None) == tree_kept


@pytest.mark.parametrize(
    ("source", "code", "message"),
    [
        ("010", "EXPR012", "number '010' has a leading zero; WeChat reads it as 8"),
        ("'a\\nb'", "EXPR013", "backslash escape in a string literal: WeChat does not decode it like JavaScript"),
        ("", "EXPR015", "empty {{ }} renders as empty text"),
    ],
)
def test_warnings_keep_the_expression(source: str, code: str, message: str) -> None:
    expr, diags = parse(source)
    assert [(d.code, d.message, d.severity.value) for d in diags] == [(code, message, "warning")]
    assert expr is not None


def test_escapes_are_decoded_like_javascript() -> None:
    expr, _ = parse(r"'\u0041\x42\n\'\\\q'")
    assert isinstance(expr, Literal) and expr.value == "AB\n'\\q"


# One template per rejected feature; the golden file shows exactly what a user sees.
GOLDEN_CASES = {
    "exponent": "<view>{{ price * 1.5e3 }}</view>",
    "hex": "<view>{{ 0xff }}</view>",
    "unary_plus": "<view>{{ +count }}</view>",
    "call": "<view>{{ name.toUpperCase() }}</view>",
    "js_operator": "<view>{{ a ?? 'none' }}</view>",
    "typeof": "<view>{{ typeof a }}</view>",
    "member_on_literal": "<view>{{ 'abc'.length }}</view>",
    "non_ascii_name": "<view>{{ 价格 }}</view>",
    "array_spread": "<view>{{ [...a, 1] }}</view>",
    "unterminated": "<view>{{ a + b </view>",
    "unterminated_string": "<view>{{ 'abc }}</view>",
    "object_braces": '<template is="t" data="{{ {a: {b: 1}} }}"/>',
    "escape": "<view>{{ 'it\\'s' }}</view>",
    "leading_zero": "<view>{{ 010 }}</view>",
    "empty": "<view>{{ }}</view>",
    "too_deep": "<view>{{ " + "(" * 70 + "a" + ")" * 70 + " }}</view>",
    "syntax": "<view>{{ a b }}</view>",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_rendered_diagnostics_golden(name: str, snapshot: SnapshotAssertion) -> None:
    source = GOLDEN_CASES[name]
    sink = DiagnosticSink()
    # Text nodes and attribute values start at the character after `>` or `="`.
    start = source.index('"{{') + 1 if '"{{' in source else source.index(">") + 1
    end = source.index("</view>") if "</view>" in source else source.index('"/>')
    split_mustaches(source[start:end], file="components/card/index.wxml", line=1, column=start + 1, sink=sink)
    assert len(sink) >= 1
    assert render_text(sink, {"components/card/index.wxml": source}) == snapshot


# --------------------------------------------------------------------------------------
# Limits: deep input gives a diagnostic, never RecursionError
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "(" * 2000 + "a" + ")" * 2000,
        "a?b:" * 2000 + "c",
        "-" * 2000 + "a",
        "!" * 2000 + "a",
        "[" * 2000 + "]" * 2000,
        "{a:" * 2000 + "1" + "}" * 2000,
        "a" + "+a" * 5000,
        "a" + ".b" * 5000,
        "a" + "[0]" * 5000,
    ],
    ids=["parens", "ternary-chain", "minus-chain", "not-chain", "arrays", "objects", "plus-chain", "members", "index"],
)
def test_deep_nesting_gives_a_diagnostic_not_recursion_error(source: str) -> None:
    expr, diags = parse(source)
    assert expr is None
    assert [d.code for d in diags][-1] == "EXPR008"
    assert diags[-1].message in (
        f"expression is nested more than {MAX_NESTING} levels deep",
        f"expression is more than {MAX_DEPTH} operations deep",
    )


def test_nesting_within_the_limits_parses() -> None:
    depth = MAX_NESTING - 2
    assert sexpr(ok("(" * depth + "a" + ")" * depth)) == "a"
    chain = ok("a" + "+a" * (MAX_DEPTH - 1))
    assert isinstance(chain, Binary)


def test_fast_spans_behave_like_validated_spans() -> None:
    sink = DiagnosticSink()
    expr = parse_expression("ab", file="f", line=2, column=3, sink=sink)
    assert expr is not None
    validated = Span(line=2, column=3, end_line=2, end_column=5)
    assert expr.span == validated and hash(expr.span) == hash(validated)
    assert expr.span.model_dump() == validated.model_dump()
    assert Span.model_validate(expr.span.model_dump()) == expr.span
