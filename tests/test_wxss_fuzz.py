"""Fuzzing: any text, and mutations of the coffee stylesheets, give diagnostics, never an exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import parse_style_attribute, parse_wxss, stylesheet_json
from skillc.ir.styles import ElementKey, StyleResolver, compile_stylesheet
from skillc.ir.viewport import Viewport

from .conftest import COFFEE

SHEETS = [
    (COFFEE / "components" / c / "index.wxss").read_text() for c in ("drink-list", "order-confirm", "payment-result")
]
# Characters that matter to the CSS tokenizer, so random text reaches the interesting paths.
CSS_ALPHABET = st.sampled_from(
    [*"{}()[];:,.#>+~*@!/\\'\"- \n\tabcdrpx0123456789%", "/*", "*/", "url(", "@media", "@import"]
)


def _run(text: str) -> None:
    sink = DiagnosticSink()
    files = {"c/a.wxss": text, "c/b.wxss": text[: len(text) // 2]}
    sheet = parse_wxss(text, file="c/a.wxss", sink=sink, load=files.get)
    stylesheet_json(sheet)
    compiled = compile_stylesheet(sheet, sink=sink)
    for diag in sink:
        assert diag.span is None or diag.span.line >= 1
    resolver = StyleResolver(compiled, Viewport(color_scheme="dark"))
    resolver.resolve([ElementKey("view", None, ("card",))], ElementKey("text", "x", ("title", "a")), text[:40])
    parse_style_attribute(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text(text: str) -> None:
    _run(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(CSS_ALPHABET, max_size=120).map("".join))
def test_css_shaped_text(text: str) -> None:
    _run(text)


@settings(max_examples=120, deadline=None)
@given(
    sheet=st.sampled_from(SHEETS),
    cuts=st.lists(
        st.tuples(
            st.integers(0, 2000), st.integers(0, 40), st.sampled_from(["", "}", "{", ";", '"', ">", ":", "(", "/*"])
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_coffee_sheets(sheet: str, cuts: list[tuple[int, int, str]]) -> None:
    text = sheet
    for at, length, insert in cuts:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + length :]
    _run(text)
