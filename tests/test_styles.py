"""Compiled stylesheets (golden JSON) and style resolution: cascade, media, units, inheritance."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from syrupy.extensions.json import JSONSnapshotExtension

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import parse_wxss
from skillc.ir.styles import (
    CompiledStylesheet,
    ElementKey,
    StyleResolver,
    compile_stylesheet,
    inherited_part,
    text_style,
)
from skillc.ir.viewport import Viewport, rpx_to_px

from .conftest import COFFEE

CARDS = ["drink-list", "order-confirm", "payment-result"]
LIGHT_375 = Viewport()
DARK_414 = Viewport(width=414, height=896, color_scheme="dark")


def compiled(css: str, files: dict[str, str] | None = None) -> CompiledStylesheet:
    sink = DiagnosticSink()
    return compile_stylesheet(parse_wxss(css, file="c/index.wxss", sink=sink, load=(files or {}).get), sink=sink)


def resolver(css: str, viewport: Viewport = LIGHT_375) -> StyleResolver:
    return StyleResolver(compiled(css), viewport)


def el(spec: str) -> ElementKey:
    """'view#id.a.b' -> ElementKey."""
    tag, _, rest = spec.partition(".")
    tag, _, ident = tag.partition("#")
    return ElementKey(tag, ident or None, tuple(c for c in rest.split(".") if c))


def coffee(card: str) -> CompiledStylesheet:
    return compiled((COFFEE / "components" / card / "index.wxss").read_text())


# -- golden ---------------------------------------------------------------------------------


@pytest.mark.parametrize("card", CARDS)
def test_compiled_coffee_card(card: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    sheet = coffee(card)
    assert snapshot.use_extension(JSONSnapshotExtension) == sheet.model_dump(mode="json")


@pytest.mark.parametrize("card", CARDS)
def test_compiled_stylesheet_round_trips_through_json(card: str) -> None:
    sheet = coffee(card)
    again = CompiledStylesheet.model_validate_json(sheet.model_dump_json())
    assert again == sheet
    root = ElementKey("view", None, ("card",))
    assert StyleResolver(again, DARK_414).resolve([], root) == StyleResolver(sheet, DARK_414).resolve([], root)


def test_resolved_drink_list_at_375_light_and_414_dark(snapshot) -> None:  # type: ignore[no-untyped-def]
    sheet = coffee("drink-list")
    card, lst, drink = el("view.card"), el("scroll-view.list"), el("view.drink.drink-selected")
    out = {}
    for vp in (LIGHT_375, DARK_414):
        r = StyleResolver(sheet, vp)
        s_card = r.resolve([], card)
        s_list = r.resolve([card], lst, parent_style=s_card)
        s_drink = r.resolve([card, lst], drink, parent_style=s_list)
        s_name = r.resolve([card, lst, drink], el("text.name"), parent_style=s_drink)
        out[f"{vp.width}-{vp.color_scheme}"] = {"card": s_card, "list": s_list, "drink": s_drink, "name": s_name}
    assert snapshot.use_extension(JSONSnapshotExtension) == out
    assert out["375-light"]["drink"]["box-shadow"] == "0 2px 6px rgba(43, 29, 18, 0.08)"
    assert out["414-dark"]["drink"]["box-shadow"] == "none"
    assert out["414-dark"]["card"]["padding"] == "13px"  # floor(24 / 750 * 414 + 0.0001)
    # Inherited down the chain: the card's color, the list's nowrap overridden by .name's normal.
    assert out["414-dark"]["name"]["color"] == "#f3e9df"
    assert out["375-light"]["drink"]["white-space"] == "nowrap"
    assert out["375-light"]["name"]["white-space"] == "normal"


def test_index_by_rightmost_compound() -> None:
    sheet = compiled("#a {color: red} .b .c.d {color: red} view {color: red} text#e.f {color: red}")
    assert sheet.by_id == {"a": (0,), "e": (3,)}
    assert sheet.by_class == {"c": (1,)}
    assert sheet.by_tag == {"view": (2,)}


def test_unsupported_and_empty_rules_are_not_compiled() -> None:
    sheet = compiled(".a { z-index: 2; color: red } .b > .c { color: red } .d { position: fixed } page { color: red }")
    assert [s.text for s in sheet.selectors] == [".a"]
    assert [d.name for d in sheet.blocks[0].declarations] == ["color"]


def test_page_selector_is_reported_at_check_time() -> None:
    sink = DiagnosticSink()
    compile_stylesheet(parse_wxss("page, .a { color: red }\ninput .b {}", file="x.wxss", sink=sink), sink=sink)
    assert [(d.code, d.message) for d in sink] == [
        ("STY001", "selector 'page' never matches: cards have no <page> element"),
        ("STY001", "selector 'input .b' never matches: cards have no <input> element"),
    ]


# -- cascade --------------------------------------------------------------------------------

CASCADE = """
#x { color: red; }
.a.b { color: green; }
.a { color: blue; width: 1px; }
view { color: gray; width: 2px; }
.late { color: olive; }
.late { color: navy; }
.imp { color: maroon !important; }
.imp.more { color: teal; }
"""


@pytest.mark.parametrize(
    ("element", "color"),
    [
        ("view#x.a.b", "red"),
        ("view.a.b", "green"),
        ("view.a", "blue"),
        ("view", "gray"),
        ("text.late", "navy"),
        ("text.imp.more", "maroon"),
    ],
)
def test_specificity_and_source_order(element: str, color: str) -> None:
    assert resolver(CASCADE).resolve([], el(element))["color"] == color


def test_inline_beats_rules_and_important_beats_inline() -> None:
    r = resolver(CASCADE)
    assert r.resolve([], el("view.a"), "color: purple; width: 30rpx") == {"color": "purple", "width": "15px"}
    assert r.resolve([], el("text.imp"), "color: purple")["color"] == "maroon"
    assert r.resolve([], el("text.imp"), "color: purple !important")["color"] == "purple"
    assert r.resolve([], el("text.imp"), "z-index: 3; color: blue !important") == {"color": "blue"}


def test_entries_come_in_cascade_order() -> None:
    r = resolver(".b { border: 1px solid red } .a.c { border-color: blue } .a { border-width: 2px }")
    style = r.resolve([], el("view.a.b.c"))
    # A host applying entries in order gets CSS's result: the longhand from .a.c wins over .b's shorthand.
    assert list(style.items()) == [("border", "1px solid red"), ("border-width", "2px"), ("border-color", "blue")]


def test_descendant_selectors() -> None:
    r = resolver(".card .title { color: red } .a .b .c { width: 1px } view text { font-weight: 600 }")
    title = el("text.title")
    assert r.resolve([el("view.card"), el("view")], title) == {"color": "red", "font-weight": "600"}
    assert r.resolve([el("view.other")], title) == {"font-weight": "600"}
    assert r.resolve([], title) == {}
    assert r.resolve([el("view.a"), el("view.x"), el("view.b")], el("view.c")) == {"width": "1px"}
    assert r.resolve([el("view.b"), el("view.a")], el("view.c")) == {}
    assert r.matched_selectors([el("view.card")], title) == ["view text", ".card .title"]


# -- media ----------------------------------------------------------------------------------

MEDIA = """
.a { width: 1px; color: white; }
@media (min-width: 400px) { .a { width: 2px; } }
@media (max-width: 399px) and (orientation: portrait) { .a { height: 3px; } }
@media (prefers-color-scheme: dark) { .a { color: black; } }
@media not screen and (prefers-color-scheme: dark) { .a { font-weight: 300; } }
@media print, (orientation: landscape) { .a { opacity: 0.5; } }
@media (hover: hover) { .a { color: orange; } }
@media (min-width: 25em) { .a { min-width: 4px; } }
"""


def test_media_at_375_light_and_414_dark() -> None:
    a = el("view.a")
    assert resolver(MEDIA, LIGHT_375).resolve([], a) == {
        "width": "1px",
        "color": "white",
        "height": "3px",
        "font-weight": "300",
    }
    assert resolver(MEDIA, DARK_414).resolve([], a) == {"width": "2px", "color": "black", "min-width": "4px"}
    assert resolver(MEDIA, Viewport(width=800, height=600)).resolve([], a)["opacity"] == "0.5"


# -- units ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rpx", "width", "px"),
    [
        (1, 375, 1),  # floor(0.5 + 0.0001) = 0 -> 1px: hairlines never vanish
        (0.5, 375, 1),
        (2, 375, 1),
        (3, 375, 1),
        (4, 375, 2),
        (24, 375, 12),
        (750, 375, 375),
        (750, 414, 414),
        (1, 750, 1),
        (100, 414, 55),  # 55.2
        (7, 320, 2),  # 2.9866
        (0, 375, 0),
        (-1, 375, -1),
        (-3, 375, -2),  # floor(-1.5 + 0.0001), as wcsc
        (-0.00001, 375, -1),
    ],
)
def test_rpx_rule(rpx: float, width: int, px: int) -> None:
    assert rpx_to_px(rpx, width) == px


def test_units_inside_functions_and_shorthands() -> None:
    r = resolver(
        ".a { width: calc(100% - 30rpx); box-shadow: 0 4rpx 12rpx rgba(0, 0, 0, 0.1), inset 0 0 1rpx #FFF;"
        " margin: 0 -8rpx 1rpx 50vw; padding: 1.5rem; transform: translate(10rpx, 20rpx) rotate(45deg);"
        " background: linear-gradient(180deg, #fff 0%, #000 100rpx); height: 0rpx; }"
    )
    assert r.resolve([], el("view.a")) == {
        "width": "calc(100% - 15px)",
        "box-shadow": "0 2px 6px rgba(0, 0, 0, 0.1), inset 0 0 1px #fff",
        "margin": "0 -4px 1px 187.5px",
        "padding": "24px",
        "transform": "translate(5px, 10px) rotate(45deg)",
        "background": "linear-gradient(180deg, #fff 0%, #000 50px)",
        "height": "0px",
    }


def test_em_resolves_against_font_sizes() -> None:
    r = resolver(".p { font-size: 14px } .a { font-size: 2em; padding: 0.5em } .b { font-size: 150%; width: 2em }")
    parent = r.resolve([], el("view.p"))
    assert r.resolve([el("view.p")], el("view.a"), parent_style=parent) == {
        "font-size": "28px",  # 2 x the parent's 14px
        "padding": "14px",  # 0.5 x its own 28px
    }
    assert r.resolve([el("view.p")], el("view.b"), parent_style=parent) == {"font-size": "21px", "width": "42px"}
    # Without a parent style em falls back to the 16px root size.
    assert r.resolve([], el("view.a")) == {"font-size": "32px", "padding": "16px"}


# -- inheritance ----------------------------------------------------------------------------


def test_inheritance_from_parent_style() -> None:
    r = resolver(".card { color: #333; padding: 10px; font-size: 28rpx } .hint { color: inherit; margin: inherit }")
    card = r.resolve([], el("view.card"))
    assert card == {"color": "#333", "padding": "10px", "font-size": "14px"}
    text = r.resolve([el("view.card")], el("text"), parent_style=card)
    assert text == {"color": "#333", "font-size": "14px"}  # padding is not inherited
    hint = r.resolve([el("view.card")], el("text.hint"), parent_style={**card, "color": "red"})
    assert hint == {"font-size": "14px", "color": "red"}  # margin: inherit with no parent margin drops out
    assert r.resolve([], el("text.hint")) == {}


def test_own_value_beats_inherited() -> None:
    r = resolver(".t { color: blue }")
    assert r.resolve([], el("text.t"), parent_style={"color": "red", "text-align": "center"}) == {
        "text-align": "center",
        "color": "blue",
    }


# -- caching --------------------------------------------------------------------------------


def test_results_are_shared_and_read_only_and_copies_are_plain_dicts() -> None:
    r = resolver(".a { color: red; padding: 1px } .b { color: blue }")
    first = r.resolve([], el("view.a"))
    # Every element with the same rules and inherited part gets the same object.
    assert r.resolve([], el("view.a")) is first
    assert r.resolve([], el("view.a"), parent_style=r.resolve([], el("view.b"))) is not first
    refused = "a resolved style is shared by every element it styles: edit a copy, dict(style)"
    edits: list[Callable[[dict[str, str]], object]] = [
        lambda s: s.__setitem__("color", "mutated"),
        lambda s: s.__delitem__("color"),
        lambda s: s.update(color="mutated"),
        lambda s: s.pop("color"),
        lambda s: s.popitem(),
        lambda s: s.setdefault("margin", "1px"),
        lambda s: s.clear(),
        lambda s: s.__ior__({"color": "mutated"}),
    ]
    for edit in edits:
        with pytest.raises(TypeError) as caught:
            edit(first)
        assert str(caught.value) == refused
    assert r.resolve([], el("view.a")) == {"color": "red", "padding": "1px"}
    # Copies by every route are plain dicts, free to edit.
    for copied in (dict(first), copy.copy(first), copy.deepcopy(first), pickle.loads(pickle.dumps(first))):
        assert type(copied) is dict and copied == first
        copied["color"] = "mutated"
    assert first["color"] == "red"


def test_text_runs_share_their_parents_inherited_part() -> None:
    r = resolver(".a { color: red; padding: 1px; font-size: 20px }")
    style = r.resolve([], el("view.a"))
    text = text_style(style)
    assert text == {"color": "red", "font-size": "20px"} and text_style(style) is text
    assert inherited_part(text) == inherited_part(style)
    # A plain mapping (a hand-made node's style) gets a fresh one.
    assert text_style({"color": "red", "padding": "1px"}) == {"color": "red"}


_CLASSES = ["a", "b", "c", "d"]
_FUZZ_CSS = """
.a { color: aqua; width: 10rpx } .b { color: lime !important } .a.c { width: 20rpx } .d .a { height: 1px }
view { margin: 1px } #i { color: silver } .c .d .a { padding: 2em }
"""


@settings(max_examples=60, deadline=None)
@given(
    chain=st.lists(
        st.tuples(st.sampled_from(["view", "text"]), st.lists(st.sampled_from(_CLASSES), max_size=3)), max_size=4
    ),
    classes=st.lists(st.sampled_from(_CLASSES), max_size=4),
    ident=st.sampled_from([None, "i"]),
    inline=st.sampled_from([None, "color: fuchsia", "width: 1rpx !important"]),
)
def test_cache_never_changes_results(
    chain: list[tuple[str, list[str]]], classes: list[str], ident: str | None, inline: str | None
) -> None:
    sheet = compiled(_FUZZ_CSS)
    warm = StyleResolver(sheet, LIGHT_375)
    ancestors = [ElementKey(tag, None, tuple(cls)) for tag, cls in chain]
    element = ElementKey("view", ident, tuple(classes))
    for _ in range(2):
        assert warm.resolve(ancestors, element, inline) == StyleResolver(sheet, LIGHT_375).resolve(
            ancestors, element, inline
        )


# -- viewport -------------------------------------------------------------------------------


def test_viewport_defaults_and_validation() -> None:
    vp = Viewport()
    assert (vp.width, vp.height, vp.color_scheme, vp.pixel_ratio, vp.orientation) == (
        375,
        667,
        "light",
        2.0,
        "portrait",
    )
    assert Viewport(width=800, height=600).orientation == "landscape"
    assert hash(vp) == hash(Viewport())
    with pytest.raises(ValidationError):
        Viewport(color_scheme="sepia")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        vp.width = 1


def test_parent_style_may_be_a_plain_or_an_edited_copy() -> None:
    r = resolver(".p { color: red; font-size: 20px } .c { padding: 1em }")
    parent = r.resolve([], el("view.p"))
    expected = {"color": "red", "font-size": "20px", "padding": "20px"}
    assert r.resolve([el("view.p")], el("view.c"), parent_style=parent) == expected
    assert r.resolve([el("view.p")], el("view.c"), parent_style=dict(parent)) == expected
    edited = copy.copy(parent)  # an edit must not be hidden by the original's remembered inherited part
    edited["color"] = "blue"
    edited.update({"font-size": "10px"})
    assert r.resolve([el("view.p")], el("view.c"), parent_style=edited) == {
        "color": "blue",
        "font-size": "10px",
        "padding": "10px",
    }
