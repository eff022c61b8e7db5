"""The WXML parser's committed LALR tables (skillc/frontend/wxml/generated.py) are the ones
wxml.lark gives, and stale tables are never used: the parser is then built from the grammar."""

from __future__ import annotations

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import document_to_json, generated, parse_wxml, tables
from skillc.frontend.wxml import parser as wxml_parser

from .conftest import COFFEE, ROOT


def test_committed_tables_are_for_this_grammar_and_lark() -> None:
    # When this fails, regenerate: .venv/bin/python -m skillc.frontend.wxml.tables
    assert tables.load_tables(tables.GRAMMAR.read_text(encoding="utf-8")) is not None


def parse_all() -> list[object]:
    out: list[object] = []
    for path in sorted([*COFFEE.rglob("*.wxml"), *(ROOT / "tests" / "fixtures").rglob("*.wxml")]):
        sink = DiagnosticSink()
        doc = parse_wxml(path.read_text(encoding="utf-8"), file=path.name, sink=sink)
        out.append((document_to_json(doc), [d.model_dump() for d in sink]))
    for text in BROKEN:
        sink = DiagnosticSink()
        doc = parse_wxml(text, file="bad.wxml", sink=sink)
        out.append((document_to_json(doc), [d.model_dump() for d in sink]))
    return out


# Each restarts the parser after an error somewhere else in the tables.
BROKEN = [
    "<view a='{{x}}'><text>a</vie>\n<b c=>",
    "<view <text>",
    "<wxs module='m'>var a = 1;",
    "<!-- open",
    '<view a="{{ b " c>{{ d </view>',
    "</a></b><c/><d e f='g'/>< view>",
]


@pytest.mark.parametrize("stale", ["GRAMMAR_SHA256", "LARK_VERSION"])
def test_stale_tables_are_not_used(stale: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tables = parse_all()
    grammar = tables.GRAMMAR.read_text(encoding="utf-8")
    monkeypatch.setattr(generated, stale, "stale")
    assert tables.load_tables(grammar) is None
    monkeypatch.setattr(wxml_parser._local, "parser", None)  # this thread builds its parser again
    built: list[object] = []
    real = wxml_parser.Lark  # type: ignore[attr-defined]

    def counting(*args: object, **kwargs: object) -> object:
        built.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(wxml_parser, "Lark", counting)
    counting._load_from_dict = real._load_from_dict  # type: ignore[attr-defined]
    assert parse_all() == with_tables
    assert built == [grammar]  # built from the grammar, once
