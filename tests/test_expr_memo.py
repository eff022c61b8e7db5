"""Each distinct one-line {{ }} source is parsed once; every other place gets that tree moved there.

What a place gets must be what parsing there gives: the tree with its own spans, and the
diagnostics with its own file, line and column, in the same order. Nothing of the first file
or place may reach another.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.expr import nodes, relocate
from skillc.frontend.expr import parser as expr_parser
from skillc.frontend.expr.nodes import Expr
from skillc.frontend.wxml import parse_wxml
from skillc.ir.lower import lower_document

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expr_parser, "_MEMO", {})


def _memo_parse(
    source: str, file: str, line: int, column: int, *, object_form: bool = False, attribute: bool = False
) -> tuple[Expr | None, list[Diagnostic]]:
    sink = DiagnosticSink()
    tree = expr_parser.parse_expression(
        source, file=file, line=line, column=column, sink=sink, object_form=object_form, attribute=attribute
    )
    return tree, list(sink)


def _fresh_parse(
    source: str, file: str, line: int, column: int, *, object_form: bool = False, attribute: bool = False
) -> tuple[Expr | None, list[Diagnostic]]:
    sink = DiagnosticSink()
    tree, _ = expr_parser._parse(source, file, line, column, sink, object_form, attribute)
    return tree, list(sink)


def test_two_files_report_the_same_expression_at_their_own_places() -> None:
    source = " fmt(price) + +count "  # a call (EXPR006) and a unary '+' (EXPR005)
    first_tree, first = _memo_parse(source, "components/a/index.wxml", 2, 5)
    second_tree, second = _memo_parse(source, "components/b/index.wxml", 7, 20)
    assert [(d.code, d.file, d.span.line, d.span.column) for d in first if d.span] == [
        ("EXPR006", "components/a/index.wxml", 2, 6),
        ("EXPR005", "components/a/index.wxml", 2, 19),
    ]
    assert [(d.code, d.file, d.span.line, d.span.column) for d in second if d.span] == [
        ("EXPR006", "components/b/index.wxml", 7, 21),
        ("EXPR005", "components/b/index.wxml", 7, 34),
    ]
    assert (first_tree, first) == _fresh_parse(source, "components/a/index.wxml", 2, 5)
    assert (second_tree, second) == _fresh_parse(source, "components/b/index.wxml", 7, 20)
    assert first_tree is not None and second_tree is not None
    assert first_tree.span.line == 2 and second_tree.span.line == 7


def test_lowering_two_files_reports_each_at_its_own_line_and_column() -> None:
    texts = {
        "components/a/index.wxml": '<view class="{{ fmt(kind) }}">a</view>',
        "components/b/index.wxml": '<view>\n  <text>b</text>\n    <view class="{{ fmt(kind) }}"/>\n</view>',
    }
    found = []
    for file, text in texts.items():
        sink = DiagnosticSink()
        lower_document(parse_wxml(text, file=file, sink=sink), load=lambda _p: None, sink=sink)
        found += [(d.file, d.span.line, d.span.column) for d in sink if d.code == "EXPR006" and d.span]
    assert found == [("components/a/index.wxml", 1, 17), ("components/b/index.wxml", 3, 21)]


def test_a_source_met_again_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parses = 0
    real = expr_parser._Parser.tokenize

    def counting(self: expr_parser._Parser) -> None:
        nonlocal parses
        parses += 1
        real(self)

    monkeypatch.setattr(expr_parser._Parser, "tokenize", counting)
    for line in range(1, 6):
        _memo_parse("a ? b : 'c'", "t.wxml", line, 3 * line)
    assert parses == 1
    _memo_parse("a ? b : 'c'", "t.wxml", 1, 1, attribute=True)  # another reading: parsed once more
    assert parses == 2


def _sources() -> list[str]:
    """Every mustache of the fixtures and examples, and sources that fail or warn."""
    found: set[str] = set()
    for path in [*(ROOT / "tests" / "fixtures").rglob("*.wxml"), *(ROOT / "examples").rglob("*.wxml")]:
        found.update(re.findall(r"\{\{(.*?)\}\}", path.read_text(encoding="utf-8")))
    found.update(
        [
            "a +",
            "'open",
            "`t`",
            "1e3",
            "010",
            "a in b",
            "typeof a",
            "[1, ...b]",
            "{a, ...b}",
            "f(1)(2)",
            "'a\\'b'",
            "a.b[0].c",
            "-(!a)",
            "x ?? y",
            "",
            "  ",
            "a\n+ b",
            "(" * 70 + "a" + ")" * 70,
            " + ".join(["a"] * 150),
            "\u00e9t\u00e9",
        ]
    )
    return sorted(found)


def test_every_source_at_every_place_is_what_a_parse_there_gives() -> None:
    rng = random.Random(3)
    sources = _sources()
    assert len(sources) > 100
    for source in sources:
        for object_form, attribute in ((False, False), (False, True), (True, True)):
            for _ in range(3):
                file = rng.choice(["a.wxml", "b/c.wxml"])
                line, column = rng.randint(1, 400), rng.randint(1, 120)
                got = _memo_parse(source, file, line, column, object_form=object_form, attribute=attribute)
                want = _fresh_parse(source, file, line, column, object_form=object_form, attribute=attribute)
                assert got == want, (source, line, column)


def test_every_node_class_can_be_moved() -> None:
    classes = {c for c in vars(nodes).values() if isinstance(c, type) and issubclass(c, Expr) and c is not Expr}
    assert classes <= set(relocate._MOVE)


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expr_parser, "_MEMO_LIMIT", 10)
    for i in range(25):
        _memo_parse(f"a + {i}", "t.wxml", 1, 1)
        assert len(expr_parser._MEMO) <= 10
