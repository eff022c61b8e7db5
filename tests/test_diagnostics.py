"""Diagnostics: catalogue and docs in sync, compiler-style rendering, stable order."""

from __future__ import annotations

import json

import pytest

from skillc.diagnostics import (
    CATALOGUE,
    Diagnostic,
    DiagnosticSink,
    Severity,
    Span,
    catalogue_markdown,
    render_json,
    render_text,
)

from .conftest import ROOT


def test_docs_match_the_catalogue() -> None:
    docs = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert docs == catalogue_markdown(), "regenerate with: skillc codes --markdown > docs/diagnostics.md"


def test_codes_are_well_formed_and_unique() -> None:
    for code, info in CATALOGUE.items():
        assert code == info.code
        assert code[:-3].isalpha() and code[-3:].isdigit() and code.isupper()
        assert info.summary.endswith(".")


def test_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(KeyError, match="not in the catalogue"):
        DiagnosticSink().emit("NOPE999", "x")


def test_emit_builds_what_make_builds() -> None:
    # emit skips validation for values of exactly the field types; the result must be the
    # validated diagnostic, and anything else must still be validated (coerced or refused).
    span = Span(line=3, column=2, end_line=3, end_column=7)
    cases: list[dict[str, object]] = [
        {},
        {"file": "a.wxml", "span": span, "hint": "h"},
        {"file": "a.wxml", "span": span, "severity": Severity.ERROR},
    ]
    for where in cases:
        sink = DiagnosticSink()
        emitted = sink.emit("TPL010", "m", **where)  # type: ignore[arg-type]
        made = Diagnostic.make("TPL010", "m", **where)  # type: ignore[arg-type]
        assert emitted == made and list(sink) == [made]
        assert emitted.model_fields_set == made.model_fields_set
        assert type(emitted.severity) is Severity
    coerced = DiagnosticSink().emit("TPL010", "m", severity="error")  # type: ignore[arg-type]
    assert coerced.severity is Severity.ERROR
    from_dict = DiagnosticSink().emit("TPL010", "m", span={"line": 1, "column": 2, "end_line": 1, "end_column": 3})  # type: ignore[arg-type]
    assert from_dict.span == Span(line=1, column=2, end_line=1, end_column=3)
    with pytest.raises(ValueError):
        DiagnosticSink().emit("TPL010", "m", file=3)  # type: ignore[arg-type]


def test_text_rendering_with_caret_and_hint() -> None:
    sink = DiagnosticSink()
    sink.emit(
        "MCP005",
        'duplicate API name "a"',
        file="mcp.json",
        span=Span(line=2, column=11, end_line=2, end_column=14),
        hint="rename one",
    )
    sink.emit("SKL002", "SKILL.md is missing")
    text = render_text(sink, {"mcp.json": '{\n  "name": "a",\n}'}, prefix="demo")
    assert text == (
        "demo: error[SKL002]: SKILL.md is missing\n"
        "\n"
        'demo/mcp.json:2:11: error[MCP005]: duplicate API name "a"\n'
        ' 2 |   "name": "a",\n'
        "   |           ^^^\n"
        "  = hint: rename one\n"
    )


def test_order_is_file_line_column() -> None:
    sink = DiagnosticSink()
    sink.emit("JS004", "w", file="b.js", span=Span.point(1, 1))
    sink.emit("JS003", "e", file="a.js", span=Span.point(9, 2))
    sink.emit("JS003", "e", file="a.js", span=Span.point(3, 7))
    sink.emit("JS003", "e", file="a.js", span=Span.point(3, 2))
    assert [(d.file, d.span.line, d.span.column) for d in sink.sorted() if d.span] == [
        ("a.js", 3, 2),
        ("a.js", 3, 7),
        ("a.js", 9, 2),
        ("b.js", 1, 1),
    ]


def test_json_rendering() -> None:
    sink = DiagnosticSink()
    sink.emit("JS004", "not async", file="apis/a.js", span=Span.point(1, 18, 8))
    [obj] = json.loads(render_json(sink, prefix="skill"))
    assert obj == {
        "code": "JS004",
        "severity": "error",
        "message": "not async",
        "file": "apis/a.js",
        "path": "skill/apis/a.js",
        "span": {"line": 1, "column": 18, "end_line": 1, "end_column": 26},
    }


def test_long_lines_are_windowed() -> None:
    sink = DiagnosticSink()
    line = "x" * 500 + "BAD" + "y" * 500
    sink.emit("JSON001", "bad", file="m.json", span=Span.point(1, 501, 3))
    text = render_text(sink, {"m.json": line})
    src, caret = text.splitlines()[1:3]
    assert len(src) < 140
    assert src[caret.index("^") : caret.index("^") + 3] == "BAD"
