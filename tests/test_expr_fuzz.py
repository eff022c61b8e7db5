"""Bad input never escapes as an exception: only diagnostics come out of the parser, and the
evaluator accepts whatever tree the parser returns."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.expr import Expr, Mustache, dependencies, parse_expression, split_mustaches
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.jsvalue import JSValue, to_text
from tests.expr_table import DATA, ROWS

SEEDS = [r.content for r in ROWS]
ALPHABET = st.sampled_from([*"{}[]()'\"\\.,:?!-+*/%<>=&|^~ \n\tab01e中`$_", "{{", "}}", "...", "null"])
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_spans(sink: DiagnosticSink, text: str, line: int, column: int) -> None:
    last_line = line + text.count("\n") + text.count("\r")
    for d in sink:
        assert d.code.startswith("EXPR")
        assert d.file == "f.wxml"
        assert isinstance(d.span, Span)
        assert line <= d.span.line <= last_line
        assert (d.span.end_line, d.span.end_column) > (d.span.line, d.span.column)


def _exercise(expr: Expr) -> None:
    value: JSValue = evaluate(expr, Scope(DATA))
    to_text(value)
    dependencies(expr)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "duplicate"]))
        if action == "insert":
            text = text[:pos] + draw(ALPHABET) + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + 1 :]
        else:
            text = text[:pos] + text[pos : pos + 5] + text[pos:]
    return text


@SETTINGS
@given(st.one_of(mutated(), st.lists(ALPHABET, max_size=30).map("".join), st.text(max_size=40)))
def test_split_mustaches_only_reports_diagnostics(text: str) -> None:
    sink = DiagnosticSink()
    parts = split_mustaches(text, file="f.wxml", line=3, column=5, sink=sink)
    _check_spans(sink, text, 3, 5)
    rebuilt = "".join(p if isinstance(p, str) else "{{" + p.source + "}}" for p in parts)
    # Pieces are returned in order and cover the text (an unclosed mustache lacks its "}}").
    assert rebuilt == text or rebuilt == text + "}}"
    for part in parts:
        if isinstance(part, Mustache) and part.expr is not None:
            _exercise(part.expr)


@SETTINGS
@given(st.one_of(mutated(), st.lists(ALPHABET, max_size=30).map("".join)), st.booleans())
def test_parse_expression_only_reports_diagnostics(source: str, object_form: bool) -> None:
    sink = DiagnosticSink()
    source = source.replace("{{ ", "").replace(" }}", "")
    expr = parse_expression(source, file="f.wxml", line=1, column=1, sink=sink, object_form=object_form)
    _check_spans(sink, source, 1, 1)
    if expr is None:
        assert any(d.severity.value == "error" for d in sink)
    else:
        _exercise(expr)
