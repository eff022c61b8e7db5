"""Fuzzing the WXML parser and lowering: any text gives a tree and diagnostics, never an exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.diagnostics import CATALOGUE, DiagnosticSink
from skillc.frontend.wxml import document_to_json, parse_wxml
from skillc.ir.lower import lower_document

from .conftest import COFFEE

FILE = "components/card/index.wxml"
CARDS = [
    (COFFEE / f"components/{name}/index.wxml").read_text(encoding="utf-8")
    for name in ("drink-list", "order-confirm", "payment-result")
]
# Fragments that exercise every lexer state and recovery path.
PIECES = [
    "<",
    ">",
    "/>",
    "</",
    "<view",
    "</view>",
    "<text>",
    "</text>",
    "<wxs>",
    "</wxs>",
    "<!--",
    "-->",
    "{{",
    "}}",
    '"',
    "'",
    "=",
    " ",
    "\n",
    "&lt;",
    "&#",
    "wx:if",
    "wx:for",
    "wx:elif",
    "wx:else",
    'bindtap="a"',
    "<template",
    'is="x"',
    'name="x"',
    "<include",
    "<import",
    'src="a.wxml"',
    "a",
    "{",
    "}",
    "\\",
    "<block>",
    "</block>",
]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    sink = DiagnosticSink()
    doc = parse_wxml(text, file=FILE, sink=sink)
    document_to_json(doc)
    files = {FILE: text, "components/card/a.wxml": text}
    lower_document(doc, load=files.get, sink=sink).to_json()
    for diag in sink:
        assert diag.code in CATALOGUE
        if diag.span is not None:
            assert (diag.span.end_line, diag.span.end_column) > (diag.span.line, diag.span.column)


@SETTINGS
@given(st.text(max_size=300))
def test_random_text(text: str) -> None:
    check(text)


@SETTINGS
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_random_markup(text: str) -> None:
    check(text)


@SETTINGS
@given(
    st.sampled_from(CARDS),
    st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 8), st.sampled_from(["", *PIECES])), max_size=6),
)
def test_mutated_coffee_cards(card: str, edits: list[tuple[int, int, str]]) -> None:
    text = card
    for at, cut, insert in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut :]
    check(text)
