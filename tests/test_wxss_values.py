"""WXSS values are checked against each supported property's grammar (WXSS022), and a bad one
is dropped as a browser drops it: the previous valid declaration of the property applies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.check import check_path
from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.package import load_skill
from skillc.frontend.wxss import SUPPORTED_PROPERTIES, parse_wxss, span_text
from skillc.frontend.wxss.grammar import has_grammar
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.styles import ElementKey, StyleResolver, compile_stylesheet
from skillc.ir.viewport import Viewport

from .conftest import FIXTURES

_LENGTH = "a length (px, rpx, vw, em, rem or %; 0 needs no unit) or calc()"
_UNIT_HINT = "a length needs a unit: write {0}px or {0}rpx (only 0 may go without)"
_HEX_HINT = "'#{0}' is not a colour: a hex colour has 3, 4, 6 or 8 digits 0-9 and a-f"
_COLOUR = "a colour (#rgb, #rrggbb, rgb(), rgba(), hsl(), a colour name, transparent)"


def _diags(css: str) -> list[tuple[str, Severity, str, str, str | None]]:
    sink = DiagnosticSink()
    parse_wxss(css, file="c/index.wxss", sink=sink)
    return [(d.code, d.severity, span_text(d.span), d.message, d.hint) for d in sink]  # type: ignore[arg-type]


# declaration -> (span of the value, what the message says is expected, hint)
INVALID: dict[str, tuple[str, str, str | None]] = {
    "width: 10qq": ("1:13-1:17", f"auto or {_LENGTH}, not negative",
                    "'qq' is not a CSS unit; lengths in cards use px, rpx, vw, em, rem or %"),
    "color: #ggg": ("1:13-1:17", _COLOUR, _HEX_HINT.format("ggg")),
    "color: #12345": ("1:13-1:19", _COLOUR, _HEX_HINT.format("12345")),
    "color: blurple": ("1:13-1:20", _COLOUR, None),
    "margin: 1px 2px 3px 4px 5px": ("1:14-1:33", f"one to four of auto or {_LENGTH}", None),
    "font-size: 12": ("1:17-1:19", f"{_LENGTH}, not negative, or a keyword such as small", _UNIT_HINT.format("12")),
    "width: 100": ("1:13-1:16", f"auto or {_LENGTH}, not negative", _UNIT_HINT.format("100")),
    "padding: -4rpx": ("1:15-1:20", f"one to four of {_LENGTH}, not negative", "this property cannot be negative"),
    "width: 30deg": ("1:13-1:18", f"auto or {_LENGTH}, not negative", None),
    "border: 1px solid red blue": ("1:14-1:32", "a width, a style and a colour, such as 1px solid #eee", None),
    "border-radius: 4px / 2px / 1px": ("1:21-1:36",
                                       "one to four lengths or percentages (0 or more), optionally / one to four more",
                                       None),
    "display: flexbox": ("1:15-1:22", "none, inline, inline-block, block or flex", "did you mean 'flex'?"),
    "opacity: half": ("1:15-1:19", "a number (0 to 1) or a percentage", None),
    "font-weight: heavy": ("1:19-1:24", "normal, bold, bolder, lighter or a number from 1 to 1000", None),
    "flex: 1 auto 1": ("1:12-1:20", "none, auto, or grow [shrink] [basis] such as 1 1 0", None),
    "text-align: middle": ("1:18-1:24", "one of center, end, justify, justify-all, left, match-parent, right or start",
                           None),
    "text-align: centre": ("1:18-1:24", "one of center, end, justify, justify-all, left, match-parent, right or start",
                           "did you mean 'center'?"),
    "box-shadow: 2px #000": ("1:18-1:26", "none, or [inset] x y [blur [spread]] [colour], separated by commas", None),
    "background: linear-gradient(#fff, #gg0000)": (
        "1:18-1:48", "background layers: a colour, url() or gradient, position / size, repeat",
        _HEX_HINT.format("gg0000"),
    ),
    "transform: rotate(45)": ("1:17-1:27",
                              "none or transform functions: translate(), scale(), rotate(), skew(), matrix()", None),
    "line-height: -1": ("1:19-1:21", "normal, a number (1.5) or a length or percentage, 0 or more", None),
    "-wx-line-clamp: 1.5": ("1:22-1:25", "a whole number of lines, 1 or more", None),
    "width: env(safe-area-inset-middle)": ("1:13-1:40", f"auto or {_LENGTH}, not negative", None),
    "width: inherit 1px": ("1:13-1:24", f"auto or {_LENGTH}, not negative", None),
}  # fmt: skip


@pytest.mark.parametrize("decl", sorted(INVALID))
def test_invalid_value_is_reported_at_the_value(decl: str) -> None:
    span, expected, hint = INVALID[decl]
    name, value = decl.split(": ", 1)
    message = f"'{value}' is not a valid {name}: expected {expected}; the declaration is ignored"
    assert _diags(f".a {{ {decl} }}") == [("WXSS022", Severity.WARNING, span, message, hint)]


def test_long_values_are_clipped_in_the_message() -> None:
    [(_, _, _, message, _)] = _diags(
        ".a { background-image: linear-gradient(to right, #ffffff 0%, #eeeeee 50%, #qqq 100%) }"
    )
    assert message.startswith("'linear-gradient(to right..., #qqq 100%)' is not a valid background-image")


VALID = [
    # colours: every form tinycss2.color4 reads
    "color: rebeccapurple", "color: #abc", "color: #abcd", "color: #aabbcc", "color: #aabbccdd",
    "color: rgb(1, 2, 3)", "color: rgba(1, 2, 3, 0.5)", "color: rgb(1 2 3 / 50%)", "color: hsl(30 60% 40%)",
    "color: hsla(30, 60%, 40%, 0.2)", "color: hwb(10 20% 30%)", "color: transparent", "color: currentColor",
    "color: RED", "border-color: red #fff transparent currentcolor",
    # lengths
    "width: 10px", "width: 10rpx", "width: 10vw", "width: 1.5em", "width: 2rem", "width: 50%", "width: 0",
    "width: auto", "width: calc(100% - 30rpx)", "width: calc((100% - 2 * 8rpx) / 3)", "height: min(10px, 5vw)",
    "padding-bottom: env(safe-area-inset-bottom)", "padding-bottom: env(safe-area-inset-bottom, 12px)",
    "padding-bottom: constant(safe-area-inset-bottom)",
    "margin: 0 auto", "margin: -4rpx 1px 2px", "margin: 1px 2px 3px 4px", "top: -10rpx", "max-width: none",
    "left: calc(50% - 1px)",
    # unitless numbers where CSS takes them
    "line-height: 1.5", "line-height: 24px", "line-height: normal", "opacity: 0.5", "opacity: 50%",
    "flex: 1", "flex: 1 1 0", "flex: 0 0 120rpx", "flex: auto", "flex: none", "flex: 1 0%", "font-weight: 600",
    "font-weight: bold", "order: -1", "flex-grow: 2", "-wx-line-clamp: 2", "aspect-ratio: 16 / 9",
    "aspect-ratio: 1", "aspect-ratio: auto 4 / 3",
    # shorthands and their arities
    "border: 1px solid #eee", "border: none", "border: solid", "border-top: 2rpx solid rgba(0, 0, 0, 0.1)",
    "border-width: 1px 0", "border-style: solid none", "border-radius: 8rpx", "border-radius: 50%",
    "border-radius: 8rpx 8rpx 0 0 / 4rpx", "border-top-left-radius: 4px 8px",
    "background: #fff", "background: url(a.png) no-repeat center / cover",
    "background: linear-gradient(135deg, #c8742c 0%, #8a4b1c 100%)", "background: none",
    "background: url(a.png) left top / 100% auto no-repeat, #fff",
    "background-image: linear-gradient(to right, rgba(255, 255, 255, 0), #fff)",
    "background-image: radial-gradient(circle at center, #fff, #000)", "background-size: 100% 100%",
    "background-size: cover", "background-position: center top", "background-repeat: no-repeat",
    "box-shadow: 0 4rpx 12rpx rgba(0, 0, 0, 0.08)", "box-shadow: inset 0 0 0 1px #eee, 0 1px 2px #000",
    "box-shadow: none", "text-shadow: 0 1px 2px #000",
    "font: 14px sans-serif", "font: italic bold 28rpx/1.4 \"PingFang SC\", sans-serif", "font: 600 12px/20px Arial",
    "font-size: 28rpx", "font-size: small", "font-family: \"PingFang SC\", Helvetica Neue, sans-serif",
    "transform: translate(10rpx, -50%) rotate(45deg) scale(1.05)", "transform: none", "transform: translateX(0)",
    "transform-origin: left top", "transform-origin: 50% 50% 0", "filter: blur(4px)", "filter: none",
    "flex-flow: row wrap", "justify-content: space-between", "align-items: center", "white-space: nowrap",
    "text-overflow: ellipsis", "vertical-align: middle", "vertical-align: -2px", "letter-spacing: 1rpx",
    "word-break: break-all", "box-sizing: border-box", "visibility: hidden", "pointer-events: none",
    "text-indent: 2em", "mask-image: linear-gradient(#000, transparent)",
    # CSS-wide keywords alone
    "width: inherit", "color: initial", "margin: unset",
]  # fmt: skip


@pytest.mark.parametrize("decl", VALID)
def test_valid_value_passes(decl: str) -> None:
    assert _diags(f".a {{ {decl} }}") == []


def test_every_supported_property_has_a_value_grammar() -> None:
    assert [p for p in sorted(SUPPORTED_PROPERTIES) if not has_grammar(p)] == []


def _resolve(css: str, inline: str | None = None, cls: str = "a") -> dict[str, str]:
    sheet = parse_wxss(css, file="c/index.wxss", sink=DiagnosticSink())
    return dict(StyleResolver(compile_stylesheet(sheet)).resolve([], ElementKey("view", None, (cls,)), inline))


def test_a_bad_value_is_dropped_and_the_previous_declaration_wins() -> None:
    css = ".a { width: 600rpx; color: #333; margin: 8rpx 16rpx; font-size: 28rpx }\n" + (
        ".a { width: 10qq; color: #ggg; margin: 1px 2px 3px 4px 5px; font-size: 12 }"
    )
    assert _resolve(css) == {"width": "300px", "color": "#333", "margin": "4px 8px", "font-size": "14px"}


def test_a_bad_important_value_does_not_override() -> None:
    assert _resolve(".a { color: red } .a { color: #ggg !important }") == {"color": "red"}


def test_a_bad_inline_value_is_dropped_at_render_time() -> None:
    assert _resolve(".a { width: 20rpx }", "width: 10qq; color: #ggg; height: 4rpx") == {
        "width": "10px",
        "height": "2px",
    }


def test_fixture_values_card_reports_each_bad_value_and_renders_the_good_ones() -> None:
    [report] = check_path(FIXTURES / "styles-official-rules", "styles-official-rules")
    found = [
        (d.span.line, d.severity, d.message.split("'")[1])  # type: ignore[union-attr]
        for d in report.diagnostics
        if d.file == "components/values/index.wxss"
    ]
    assert {code for code in (d.code for d in report.diagnostics if d.file == "components/values/index.wxss")} == {
        "WXSS022"
    }
    assert found == [
        (3, Severity.WARNING, "10qq"),
        (5, Severity.WARNING, "#ggg"),
        (7, Severity.WARNING, "1px 2px 3px 4px 5px"),
        (9, Severity.WARNING, "12"),
        (10, Severity.WARNING, "-4rpx"),
        (11, Severity.WARNING, "1px solid red blue"),
        (12, Severity.WARNING, "flexbox"),
        (13, Severity.WARNING, "linear-gradient(to right, #fff, #gg0000)"),
        (14, Severity.WARNING, "half"),
    ]
    css = (FIXTURES / "styles-official-rules" / "components" / "values" / "index.wxss").read_text()
    assert _resolve(css, cls="card") == {"width": "300px", "color": "#333333", "margin": "4px 8px", "font-size": "14px"}


_FRAGMENTS = [
    "0", "1", "-2", "1.5", "10px", "-3rpx", "50%", "2em", "45deg", "1s", "10qq", "#fff", "#ggg", "red", "auto",
    "none", "solid", "inset", "/", ",", "calc(1px + 2%)", "calc()", "env(safe-area-inset-top)", "env()",
    "rgb(1, 2, 3)", "rgb(x)", "url(a.png)", "linear-gradient(red, blue)", "linear-gradient()", "translate(1px)",
    "rotate()", "blur(2px)", "drop-shadow(0 0 1px red, 1px 1px)", '"PingFang SC"', "sans-serif", "bold", "(1px)",
    "[x]", "!", "+", "*", "center", "cover", "no-repeat", "to", "at", "inherit", "min(1px)", "clamp(1px, 2px, 3px)",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    prop=st.sampled_from(sorted(SUPPORTED_PROPERTIES)),
    value=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=6),
)
def test_any_value_of_any_property_is_checked_without_raising(prop: str, value: list[str]) -> None:
    found = _diags(f".a {{ {prop}: {' '.join(value)} }}")
    assert all(span.startswith("1:") for _, _, span, _, _ in found)


def test_render_ir_of_the_fixture_card_leaves_the_bad_values_out() -> None:
    pkg = load_skill(FIXTURES / "styles-official-rules", DiagnosticSink())
    assert pkg is not None
    comp = compile_component(pkg, "values", DiagnosticSink())
    assert comp is not None
    doc = CardRenderer(comp, Viewport(width=375)).render({"title": "T"})
    card = doc.root.find("0")
    assert card is not None
    assert card.style == {"width": "300px", "color": "#333333", "margin": "4px 8px", "font-size": "14px"}
    note = doc.root.find("0.1")
    assert note is not None and note.type == "text"
    # style="width: 10qq; color: #ggg": both dropped, so the inherited colour and size show.
    assert note.style == {"color": "#333333", "font-size": "14px"}
