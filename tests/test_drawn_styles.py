"""What WeChat's gate refuses and WeChat still draws in published cards: gap, overflow, the
single-line ellipsis, line clamps (``-wx-line-clamp`` and the ``-webkit-box`` trio), and the end
state of transitions and animations.

``check`` keeps every finding an error (V005) but no longer says such a declaration is ignored;
the Render IR keeps it, and each backend draws it. Fixture: tests/fixtures/cards/drawn-skill, an
original noodle-shop card shaped like the published patterns (a row of tags with a gap, a stat
row "月售 2000" / "1.2km", a clamped description, a clipped box).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
import pytest

from skillc.backends.cardspec_backend import render_card
from skillc.backends.html_backend import inline_style, render_html_fragment
from skillc.backends.json_backend import JsonBackend
from skillc.check import check_path
from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.package import load_skill
from skillc.frontend.wxss import parse_wxss, stylesheet_json
from skillc.ir import css_values
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import TEXT, RenderDocument, RenderNode, render_ir_schema, to_plain
from skillc.ir.styles import ElementKey, StyleResolver, compile_stylesheet
from skillc.ir.viewport import Viewport
from skillc.runtime.cards.card_layout import estimate_height
from tests.test_backends_cardspec import assert_valid

from .conftest import FIXTURES

SKILL = FIXTURES / "cards" / "drawn-skill"
WXSS = "components/shop/index.wxss"


@cache
def shop_doc(width: int = 375) -> RenderDocument:
    """The fixture card rendered from its preview data (no JavaScript runs)."""
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    component = compile_component(pkg, "shop", DiagnosticSink())
    assert component is not None
    data = json.loads(pkg.sources["components/shop/preview.json"])
    return CardRenderer(component, Viewport(width=width)).render(data)


def _node(doc: RenderDocument, node_id: str) -> RenderNode:
    found = doc.root.find(node_id)
    assert found is not None, node_id
    return found


def _resolve(css: str, classes: str = "a", inline: str | None = None) -> dict[str, str]:
    sheet = parse_wxss(css, file="a.wxss", sink=DiagnosticSink())
    resolver = StyleResolver(compile_stylesheet(sheet))
    return dict(resolver.resolve([], ElementKey("view", None, tuple(classes.split())), inline))


# -- check: still V005 errors, never "ignored" when drawn ------------------------------------------

_DRAWN = "is refused by WeChat's gate (V005), while the renderer draws it, as WeChat does"
_CLAMP = "is refused by WeChat's gate (V005), while the renderer draws it as a line clamp together with"
# (line, column) -> (code, message) of every finding on the fixture's stylesheet.
FINDINGS: dict[tuple[int, int], tuple[str, str]] = {
    (2, 85): ("WXSS007", f"'overflow' {_DRAWN}"),
    (3, 24): ("WXSS007", f"'gap' {_DRAWN}"),
    (5, 25): ("WXSS007", f"'column-gap' {_DRAWN}"),
    (7, 18): ("WXSS008", f"display: -webkit-box {_CLAMP} -webkit-line-clamp and -webkit-box-orient: vertical, "
              "as WeChat does"),
    (7, 31): ("WXSS007", f"'-webkit-box-orient' {_CLAMP} display: -webkit-box and -webkit-line-clamp, as WeChat does"),
    (7, 61): ("WXSS007", f"'-webkit-line-clamp' {_CLAMP} display: -webkit-box and -webkit-box-orient: vertical, "
              "as WeChat does"),
    (7, 84): ("WXSS007", f"'overflow' {_DRAWN}"),
    (8, 24): ("WXSS007", f"'overflow' {_DRAWN}"),
    (10, 23): ("WXSS007", "'transition' is refused by WeChat's gate (V005), while the renderer draws its end state, "
               "the element's declared style, without animating"),
    (10, 63): ("WXSS007", "'cursor' is not supported in cards; the declaration is ignored"),
    (11, 26): ("WXSS007", "'animation' is refused by WeChat's gate (V005), while the renderer draws the element's "
               "own style, without animating"),
    (12, 1): ("WXSS011", "@keyframes is not supported in cards: cards do not animate; the rule is ignored"),
}  # fmt: skip


def test_check_reports_each_refused_declaration_as_an_error_that_says_what_is_drawn() -> None:
    [report] = check_path(SKILL, "drawn-skill")
    found = {
        (d.span.line, d.span.column): (d.code, d.message)
        for d in report.diagnostics
        if d.file == WXSS and d.span is not None
    }
    assert found == FINDINGS
    assert {d.severity for d in report.diagnostics} == {Severity.ERROR}
    assert len(report.diagnostics) == len(FINDINGS)


def test_an_invalid_value_of_a_drawn_property_is_ignored_and_says_so() -> None:
    sink = DiagnosticSink()
    sheet = parse_wxss(
        ".a { overflow: sideways; gap: -4px; -webkit-box-orient: horizontal; gap: 6px }", file="a.wxss", sink=sink
    )
    assert [d.message for d in sink] == [
        "'overflow' is refused by WeChat's gate (V005), and 'sideways' is not a valid overflow: expected one or two "
        "of visible, hidden, clip, scroll or auto; the declaration is ignored",
        "'gap' is refused by WeChat's gate (V005), and '-4px' is not a valid gap: expected one or two of normal or "
        "a length or percentage, not negative; the declaration is ignored",
        "'-webkit-box-orient' is refused by WeChat's gate (V005), and only -webkit-box-orient: vertical draws (as "
        "part of a line clamp); the declaration is ignored",
        f"'gap' {_DRAWN}",
    ]
    assert {d.code for d in sink} == {"WXSS007"}
    decls = stylesheet_json(sheet)["rules"][0]["declarations"]  # type: ignore[index]
    assert [(d["name"], d.get("drawn", False)) for d in decls] == [
        ("overflow", False),
        ("gap", False),
        ("-webkit-box-orient", False),
        ("gap", True),
    ]
    # The rest of the rule still applies: the valid gap is drawn.
    assert _resolve(".a { overflow: sideways; gap: -4px; color: red; gap: 6px }") == {"color": "red", "gap": "6px"}


# -- the Render IR ---------------------------------------------------------------------------------


def test_render_ir_styles_of_the_fixture_card() -> None:
    doc = shop_doc()
    styles = {n.id: n.style for n in doc.root.walk() if n.type != TEXT}
    base = {"color": "#2b2118", "font-size": "14px", "line-height": "20px"}
    assert styles["0.0.0"] == {
        "color": "#2b2118", "font-size": "17px", "line-height": "24px", "font-weight": "600",
        "white-space": "nowrap", "overflow": "hidden", "text-overflow": "ellipsis",
    }  # fmt: skip
    assert styles["0.0.1"] == {**base, "display": "flex", "gap": "8px", "margin-top": "8px"}
    assert styles["0.0.2"] == {  # 24rpx at 375: 12px
        "font-size": "14px", "line-height": "20px", "display": "flex", "column-gap": "12px", "margin-top": "8px",
        "color": "#8a7b6d",
    }  # fmt: skip
    assert styles["0.0.3"] == {**base, "-wx-line-clamp": "2", "margin-top": "8px"}
    # The -webkit-box trio reads as the same clamp: a block with -wx-line-clamp, no -webkit-* left.
    assert styles["0.0.4"] == {
        "color": "#2b2118", "display": "block", "overflow": "hidden", "margin-top": "8px", "line-height": "18px",
        "font-size": "12px", "-wx-line-clamp": "3",
    }  # fmt: skip
    assert styles["0.0.5"] == {**base, "height": "40px", "overflow": "hidden", "margin-top": "8px",
                               "border-radius": "8px"}  # fmt: skip
    # A transition and an animation draw the declared style: opacity 0.6, and no animation at all.
    assert styles["0.0.6"] == {**base, "opacity": "0.6"}
    assert styles["0.0.7"] == {"font-size": "14px", "line-height": "20px", "color": "#2e9d5b"}
    jsonschema.validate(to_plain(doc), render_ir_schema())


def test_gap_converts_rpx_per_viewport() -> None:
    assert _node(shop_doc(414), "0.0.2").style["column-gap"] == "13px"  # floor(24 / 750 * 414)
    assert _resolve(".a { gap: 16rpx 8px }") == {"gap": "8px 8px"}


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        # In any order and from different rules, the three make one clamp.
        (".a { -webkit-line-clamp: 2 } .a { display: -webkit-box; -webkit-box-orient: vertical }",
         {"display": "block", "-wx-line-clamp": "2"}),
        # An explicit -wx-line-clamp wins over the trio's count.
        (".a { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 4; -wx-line-clamp: 1 }",
         {"display": "block", "-wx-line-clamp": "1"}),
        # Without -webkit-box nothing clamps, and the parts are dropped.
        (".a { display: flex; -webkit-box-orient: vertical; -webkit-line-clamp: 2 }", {"display": "flex"}),
        # -webkit-box without a count or a vertical orient draws nothing either.
        (".a { display: -webkit-box; -webkit-line-clamp: 2 }", {}),
        (".a { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: none }", {}),
        (".a { overflow: hidden clip; overflow-x: auto; row-gap: 4px }",
         {"overflow": "hidden clip", "overflow-x": "auto", "row-gap": "4px"}),
        (".a { transition: all 1s; animation: spin 2s; cursor: pointer; opacity: 0.5 }", {"opacity": "0.5"}),
    ],
)  # fmt: skip
def test_resolved_style_of_drawn_declarations(css: str, expected: dict[str, str]) -> None:
    assert _resolve(css) == expected


def test_an_inline_style_keeps_what_is_drawn_silently() -> None:
    inline = "gap: 10rpx; overflow-y: clip; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2"
    expected = {"gap": "5px", "overflow-y": "clip", "display": "block", "-wx-line-clamp": "2"}
    assert _resolve("", inline=inline) == expected


def test_json_backend_carries_the_drawn_styles() -> None:
    plain = json.loads(JsonBackend().render(shop_doc()))
    card = plain["root"]["children"][0]["children"]
    assert [c["style"].get(k) for c, k in zip(card, ["text-overflow", "gap", "column-gap", "-wx-line-clamp",
                                                      "-wx-line-clamp", "overflow"], strict=False)] == [
        "ellipsis", "8px", "12px", "2", "3", "hidden"
    ]  # fmt: skip


# -- html ------------------------------------------------------------------------------------------


def test_html_spells_a_clamp_as_the_webkit_box_trio_and_passes_the_rest_through() -> None:
    doc = shop_doc()
    assert inline_style(_node(doc, "0.0.3").style) == (
        "-webkit-box-orient:vertical;-webkit-line-clamp:2;-wx-line-clamp:2;color:#2b2118;display:-webkit-box;"
        "font-size:14px;line-height:20px;margin-top:8px;overflow:hidden"
    )
    assert inline_style(_node(doc, "0.0.0").style) == (
        "color:#2b2118;font-size:17px;font-weight:600;line-height:24px;overflow:hidden;text-overflow:ellipsis;"
        "white-space:nowrap"
    )
    assert inline_style(_node(doc, "0.0.1").style) == (
        "color:#2b2118;display:flex;font-size:14px;gap:8px;line-height:20px;margin-top:8px"
    )
    assert "overflow:hidden" in inline_style(_node(doc, "0.0.5").style)
    assert "transition" not in render_html_fragment(doc) and "animation" not in render_html_fragment(doc)
    # A hidden element stays hidden; a clamp of "none" or garbage is not spelled out.
    assert inline_style({"-wx-line-clamp": "2", "display": "none"}) == (
        "-webkit-box-orient:vertical;-webkit-line-clamp:2;-wx-line-clamp:2;display:none;overflow:hidden"
    )
    assert inline_style({"-wx-line-clamp": "none"}) == "-wx-line-clamp:none"


# -- cardspec --------------------------------------------------------------------------------------


def test_cardspec_maps_gaps_to_spacing_and_clamps_to_max_lines() -> None:
    card = render_card(shop_doc())
    assert_valid(card)
    title, tags, stats, intro, note, fade, pulse = card["body"]
    name = "巷口慢火牛肉面 Lane-side Slow-fire Beef Noodles · 清河路总店"
    assert title == {"type": "TextBlock", "text": name, "size": "Medium", "weight": "Bolder", "wrap": False,
                     "maxLines": 1}  # fmt: skip
    assert [c.get("spacing") for c in tags["columns"]] == [None, "Default", "Default"]  # 8px
    assert [c.get("spacing") for c in stats["columns"]] == [None, "Default"]  # 12px: nearer 8 than 20
    assert [c["items"][0]["text"] for c in stats["columns"]] == ["月售 2000", "1.2km"]
    assert (intro["maxLines"], intro["wrap"]) == (2, True)
    assert (note["maxLines"], note["size"]) == (3, "Small")
    assert "maxLines" not in fade and "maxLines" not in pulse


def _run(node_id: str, text: str, style: dict[str, str] | None = None) -> RenderNode:
    # A text run carries its element's inherited text properties, as the evaluator gives it.
    return RenderNode(node_id, TEXT, {"text": text}, dict(style or {}))


def _view(node_id: str, style: dict[str, str], *children: RenderNode) -> RenderNode:
    return RenderNode(node_id, "view", {}, style, None, list(children))


def _card(root: RenderNode) -> dict[str, Any]:
    card = render_card(RenderDocument(1, Viewport(), _view("root", {}, root)))
    assert_valid(card)
    return card


@pytest.mark.parametrize(
    ("gap", "spacing"),
    [("0", "None"), ("1px", "None"), ("3px", "Small"), ("8px", "Default"), ("16px", "Medium"), ("30px", "Large"),
     ("48px", "ExtraLarge"), ("normal", "None")],
)  # fmt: skip
def test_cardspec_row_gap_of_a_flex_column_spaces_its_items(gap: str, spacing: str) -> None:
    column = _view(
        "0", {"display": "flex", "flex-direction": "column", "gap": gap},
        _view("0.0", {}, _run("0.0.0", "a")), _run("0.1", "b"), _view("0.2", {}, _run("0.2.0", "c")),
    )  # fmt: skip
    body = _card(column)["body"]
    assert [(b["text"], b.get("spacing")) for b in body] == [("a", None), ("b", spacing), ("c", spacing)]


def test_cardspec_without_a_gap_or_outside_flex_adds_no_spacing() -> None:
    block = _view("0", {"gap": "8px"}, _view("0.0", {}, _run("0.0.0", "a")), _view("0.1", {}, _run("0.1.0", "b")))
    assert [b.get("spacing") for b in _card(block)["body"]] == [None, None]
    row = _view("0", {"display": "flex"}, _view("0.0", {}, _run("0.0.0", "a")), _view("0.1", {}, _run("0.1.0", "b")))
    assert [c.get("spacing") for c in _card(row)["body"][0]["columns"]] == [None, None]
    # column-gap after gap wins for the columns; row-gap does not space columns.
    row.style = {"display": "flex", "gap": "30px", "column-gap": "3px", "row-gap": "40px"}
    assert [c.get("spacing") for c in _card(row)["body"][0]["columns"]] == [None, "Small"]


def test_cardspec_ellipsis_needs_nowrap_and_a_sideways_clip() -> None:
    def block(style: dict[str, str]) -> dict[str, Any]:
        body: list[dict[str, Any]] = _card(_view("0", style, _run("0.0", "long title")))["body"]
        return body[0]

    cut = {"white-space": "nowrap", "overflow": "hidden", "text-overflow": "ellipsis"}
    assert (block(cut)["wrap"], block(cut).get("maxLines")) == (False, 1)
    assert block({**cut, "overflow": "visible"}).get("maxLines") is None
    assert block({**cut, "overflow": "visible", "overflow-x": "clip"}).get("maxLines") == 1
    assert block({**cut, "white-space": "normal"}).get("maxLines") is None
    assert block({**cut, "text-overflow": "clip"}).get("maxLines") is None


# -- the card layout estimate ----------------------------------------------------------------------


def test_layout_counts_gaps_between_flex_items() -> None:
    line = {"line-height": "20px"}
    items = [_view(f"0.{i}", line, _run(f"0.{i}.0", "x", line)) for i in range(3)]
    column = _view("0", {"display": "flex", "flex-direction": "column", "row-gap": "10px"}, *items)
    assert estimate_height(column, 375) == 3 * 20 + 2 * 10
    column.style = {"display": "flex", "flex-direction": "column", "gap": "6px 50px"}
    assert estimate_height(column, 375) == 3 * 20 + 2 * 6
    column.children = [*items, _view("0.3", {"display": "none"})]
    assert estimate_height(column, 375) == 3 * 20 + 2 * 6  # a hidden child is not a flex item
    column.style = {"gap": "6px"}  # a block is no flex container: no gap
    assert estimate_height(column, 375) == 3 * 20
    # A row's column gap takes width from its items: 2 items of 20 CJK characters at 10px in
    # 410 px are one line each (200 px) without a gap, two lines each with a 20 px gap.
    text = {"font-size": "10px", "line-height": "10px"}
    pair = [_view(f"1.{i}", {}, _run(f"1.{i}.0", "字" * 20, text)) for i in range(2)]
    row = _view("1", {"display": "flex"}, *pair)
    assert estimate_height(row, 410) == 10
    row.style = {"display": "flex", "column-gap": "20px"}
    assert estimate_height(row, 410) == 20


def test_layout_caps_a_clamp_and_keeps_nowrap_on_one_line() -> None:
    doc = shop_doc()
    assert estimate_height(_node(doc, "0.0.3"), 351) == 2 * 20 + 8  # clamped to 2 lines, plus margin-top
    assert estimate_height(_node(doc, "0.0.4"), 351) == 3 * 18 + 8
    assert estimate_height(_node(doc, "0.0.0"), 351) == 24  # one line, however long
    assert estimate_height(_node(doc, "0.0.5"), 351) == 40 + 8  # the clipped box, not its 120px child
    short = _view("0", {"-wx-line-clamp": "3", "line-height": "20px"}, _run("0.0", "one line", {"line-height": "20px"}))
    assert estimate_height(short, 375) == 20  # a clamp never adds lines


def test_css_value_readers_follow_cascade_order() -> None:
    assert css_values.gaps({"gap": "4px 6px"}) == (4.0, 6.0)
    assert css_values.gaps({"column-gap": "2px", "gap": "8px"}) == (8.0, 8.0)
    assert css_values.gaps({"gap": "8px", "column-gap": "2px"}) == (8.0, 2.0)
    assert css_values.gaps({"color": "red"}) == (None, None)
    assert css_values.clips_sideways({"overflow": "hidden", "overflow-x": "visible"}) is False
    assert css_values.clips_sideways({"overflow-x": "visible", "overflow": "clip auto"}) is True
    assert css_values.line_clamp({"-wx-line-clamp": "3"}) == 3
    assert css_values.line_clamp({"-wx-line-clamp": "none"}) is None
