"""Evaluation to Render IR, and incremental updates that equal a fresh full render."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillc.backends.registry import get_backend
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import SkillPackage, load_skill
from skillc.ir.component import CompiledComponent, compile_component
from skillc.ir.datapath import DataPathError, parse_data_path, set_data
from skillc.ir.diff import Insert, Remove, SetProp, SetStyle, SetText, apply
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import TEXT, RenderNode, render_ir_schema, to_plain
from skillc.ir.viewport import Viewport

from .conftest import COFFEE, inline_component


@pytest.fixture(scope="module")
def coffee() -> SkillPackage:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    return pkg


def _component(pkg: SkillPackage, name: str) -> CompiledComponent:
    sink = DiagnosticSink()
    comp = compile_component(pkg, name, sink)
    assert comp is not None and list(sink) == []
    return comp


def _preview(pkg: SkillPackage, name: str) -> dict[str, Any]:
    data = json.loads(pkg.sources[f"components/{name}/preview.json"])
    assert isinstance(data, dict)
    return data


def _drinks(n: int, offset: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"d{i}", "name": f"Drink {i}", "price": 20 + (i + offset) % 13, "image": f"https://x/{i}.jpg"}
        for i in range(n)
    ]


@pytest.mark.parametrize("name", ["drink-list", "order-confirm", "payment-result"])
def test_render_validates_against_the_schema(coffee: SkillPackage, name: str) -> None:
    doc = CardRenderer(_component(coffee, name)).render(_preview(coffee, name))
    jsonschema.validate(to_plain(doc), render_ir_schema())
    ids = [n.id for n in doc.root.walk()]
    assert len(ids) == len(set(ids)), "node ids are unique"


def test_ids_are_stable_and_keyed(coffee: SkillPackage) -> None:
    comp = _component(coffee, "drink-list")
    a = CardRenderer(comp).render({"drinks": _drinks(3), "selectedId": ""})
    b = CardRenderer(comp).render({"drinks": list(reversed(_drinks(3))), "selectedId": ""})
    item_ids = lambda doc: [n.id for n in doc.root.walk() if n.type == "view" and "[" in n.id and n.id.endswith("]")]  # noqa: E731
    assert item_ids(a) == ["0.1.0[d0]", "0.1.0[d1]", "0.1.0[d2]"]
    assert item_ids(b) == ["0.1.0[d2]", "0.1.0[d1]", "0.1.0[d0]"]


def test_text_runs_events_and_styles(coffee: SkillPackage) -> None:
    comp = _component(coffee, "drink-list")
    doc = CardRenderer(comp, Viewport(width=375)).render(_preview(coffee, "drink-list"))
    item = doc.root.find("0.1.0[d02]")
    assert item is not None and item.events is not None
    tap = item.events["tap"]
    assert (tap.handler, tap.catch, tap.dataset) == ("onSelect", False, {"id": "d02", "name": "燕麦拿铁 Oat Latte"})
    # 220rpx at 375px: floor(220 / 750 * 375 + 0.0001) = 110px; the selected item gets its border.
    assert item.style["width"] == "110px"
    assert item.style["border"] == "2px solid #c8742c"
    assert item.props["hoverStyle"] == {"opacity": "0.8"}
    price = doc.root.find("0.1.0[d02].2.0")
    assert price is not None and price.type == "text" and price.text_content() == "¥32"
    [run] = price.children or []
    assert run.type == TEXT and run.style["color"] == "#c8742c"  # inherited onto the run


def test_media_query_dark(coffee: SkillPackage) -> None:
    comp = _component(coffee, "drink-list")
    light = CardRenderer(comp, Viewport(width=414)).render(_preview(coffee, "drink-list"))
    dark = CardRenderer(comp, Viewport(width=414, color_scheme="dark")).render(_preview(coffee, "drink-list"))
    card_light, card_dark = light.root.find("0"), dark.root.find("0")
    assert card_light is not None and card_dark is not None
    assert card_light.style["color"] == "#2b1d12" and card_dark.style["color"] == "#f3e9df"
    assert card_light.style["padding"] == "13px"  # 24rpx at 414px


def test_one_field_change_is_one_patch(coffee: SkillPackage) -> None:
    r = CardRenderer(_component(coffee, "drink-list"))
    r.render({"drinks": _drinks(1000), "selectedId": "", "title": "Menu"})
    assert r.update({"drinks[3].price": 18}) == [SetText("0.1.0[d3].2.0.0", "¥18")]
    assert r.update({"title": "New"}) == [SetText("0.0.0.0", "New")]
    assert r.update({"drinks[3].price": 18}) == []  # no change, no patch


def test_selection_changes_only_the_nodes_that_read_it(coffee: SkillPackage) -> None:
    r = CardRenderer(_component(coffee, "drink-list"))
    before = r.render({"drinks": _drinks(20), "selectedId": "d1"}).root
    before = copy.deepcopy(before)
    patches = r.update({"selectedId": "d4"})
    touched = {p.parent if isinstance(p, (Insert, Remove)) else getattr(p, "id", None) for p in patches}
    assert touched == {"0.1.0[d1]", "0.1.0[d4]", "0.1.0[d1].2", "0.1.0[d4].2"}
    assert any(isinstance(p, SetStyle) and p.id == "0.1.0[d4]" for p in patches)
    assert apply(before, patches) == r.document.root


def test_data_paths() -> None:
    assert parse_data_path("list[2].price") == ("list", 2, "price")
    assert parse_data_path("a.b") == ("a", "b")
    for bad in ["", "a..b", ".a", "a[x]", "a[0]b", "[0]"]:
        with pytest.raises(DataPathError):
            parse_data_path(bad)
    data: dict[str, Any] = {}
    set_data(data, {"a.b[1].c": 3, "x": 1})
    assert data == {"a": {"b": [None, {"c": 3}]}, "x": 1}


# -- incremental == full, on random setData sequences ---------------------------------------

ops = st.one_of(
    st.tuples(st.just("price"), st.integers(0, 7), st.integers(0, 99)),
    st.tuples(st.just("select"), st.sampled_from(["", "d0", "d3", "d5", "zz"])),
    st.tuples(st.just("title"), st.sampled_from(["A", "B", ""])),
    st.tuples(st.just("replace"), st.integers(0, 8), st.integers(0, 5)),
    st.tuples(st.just("reverse")),
    st.tuples(st.just("item"), st.integers(0, 7), st.integers(0, 30)),
    st.tuples(st.just("rekey"), st.integers(0, 7), st.sampled_from(["d0", "d9", "new"])),
    st.tuples(st.just("append"), st.integers(10, 20)),
    st.tuples(st.just("keyword"), st.sampled_from(["", "tea"])),
)


def _change(op: tuple[Any, ...], data: dict[str, Any]) -> dict[str, Any]:
    kind = op[0]
    n = len(data["drinks"])
    if kind == "price":
        return {f"drinks[{op[1] % max(n, 1)}].price": op[2]} if n else {"title": "x"}
    if kind == "select":
        return {"selectedId": op[1]}
    if kind == "title":
        return {"title": op[1]}
    if kind == "replace":
        return {"drinks": _drinks(op[1], op[2])}
    if kind == "reverse":
        return {"drinks": list(reversed(data["drinks"]))}
    if kind == "item":
        return {f"drinks[{op[1] % max(n, 1)}]": _drinks(op[2] + 1)[op[2]]} if n else {"keyword": "k"}
    if kind == "rekey":
        return {f"drinks[{op[1] % max(n, 1)}].id": op[2]} if n else {"keyword": "k"}
    if kind == "append":
        return {f"drinks[{n}]": _drinks(op[1] + 1)[op[1]]}
    return {"keyword": op[1]}


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 6), st.lists(ops, min_size=1, max_size=6), st.sampled_from(["light", "dark"]))
def test_incremental_equals_full_render(n: int, changes: list[tuple[Any, ...]], scheme: str) -> None:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    comp = _component(pkg, "drink-list")
    viewport = Viewport(color_scheme=scheme)  # type: ignore[arg-type]
    live = CardRenderer(comp, viewport)
    tree: RenderNode = copy.deepcopy(live.render({"drinks": _drinks(n), "selectedId": "d1", "title": "T"}).root)
    for op in changes:
        change = _change(op, live.data)
        patches = live.update(change)
        tree = apply(tree, patches)
        fresh = CardRenderer(comp, viewport).render(live.data).root
        assert live.document.root == fresh, f"after {change}"
        assert tree == fresh, f"patches after {change}"


@pytest.mark.parametrize("name", ["order-confirm", "payment-result"])
def test_other_cards_update_incrementally(coffee: SkillPackage, name: str) -> None:
    comp = _component(coffee, name)
    r = CardRenderer(comp)
    tree = copy.deepcopy(r.render(_preview(coffee, name)).root)
    for change in (
        [{"confirmed": True}, {"order.total": 99}, {"order.lines[0].quantity": 3}, {"confirmed": False}]
        if name == "order-confirm"
        else [{"status": "failed", "reason": "no money"}, {"reason": ""}, {"status": "expired"}, {"status": "success"}]
    ):
        tree = apply(tree, r.update(change))
        assert tree == CardRenderer(comp).render(r.data).root


json_data = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
card_data = st.fixed_dictionaries(
    {},
    optional={
        "drinks": json_data,
        "selectedId": json_data,
        "title": json_data,
        "order": json_data,
        "status": st.sampled_from(["success", "failed", "", None]) | json_data,
        "confirmed": json_data,
    },
)


def _not_json(word: str) -> None:
    raise AssertionError(f"{word} in the Render IR: JSON.stringify would have written null")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["drink-list", "order-confirm", "payment-result"]), card_data, card_data)
@example("drink-list", {"drinks": 3}, {"drinks": 2222.0})
def test_any_json_data_renders_and_updates(name: str, first: dict[str, Any], second: dict[str, Any]) -> None:
    """Wrong types, missing fields, NaN, nesting: a card renders them as JavaScript would, never raises."""
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    comp = _component(pkg, name)
    live = CardRenderer(comp, sink=DiagnosticSink())
    tree = copy.deepcopy(live.render(first).root)
    text = get_backend("json").render(live.document)
    jsonschema.validate(json.loads(text, parse_constant=_not_json), render_ir_schema())
    patches = live.update(second)
    if live.exceeded is not None:
        # Over a limit (a number as the list: `wx:for` walks 0..n-1) the update stops with no
        # patches and the runtime renders the card's last good data again (CardRenderer.update).
        assert patches == [] and live.exceeded.code in ("RND005", "RND006", "RND008")
        return
    tree = apply(tree, patches)
    assert tree == CardRenderer(comp).render(live.data).root


def test_text_at_the_top_of_a_template() -> None:
    """Text outside any element sits under the card root, which has no style to inherit."""
    from skillc.frontend.wxml import parse_wxml
    from skillc.ir.lower import lower_document

    sink = DiagnosticSink()
    template = lower_document(
        parse_wxml("hello {{name}}<view>x</view>", file="t.wxml", sink=sink), load=lambda _: None, sink=sink
    )
    doc = CardRenderer(CompiledComponent("t", template, None)).render({"name": "you"})
    first = (doc.root.children or [])[0]
    assert (first.type, first.text, first.style) == (TEXT, "hello you", {})


def test_an_update_over_the_node_limit_stops_with_no_patches(coffee: SkillPackage) -> None:
    """Found by the property test above: drinks = 2222.0 makes `wx:for` walk 2222 items."""
    live = CardRenderer(_component(coffee, "drink-list"), sink=DiagnosticSink())
    before = copy.deepcopy(live.render({"drinks": 3}).root)
    assert live.update({"drinks": 2222.0}) == []
    assert live.exceeded is not None and live.exceeded.code == "RND005"
    assert live.document.root == before


HOVER_WXML = (
    """<view class="{{theme}}"><view wx:for="{{rows}}" wx:key="*this" hover-class="{{hover}}">{{item}}</view></view>"""
)
HOVER_WXSS = ".on { opacity: 0.8 } .dark .on { opacity: 0.5; color: white } .alt { background-color: red }"


def test_hover_styles_follow_a_restyle_and_a_new_hover_class_with_patches() -> None:
    renderer = CardRenderer(inline_component(HOVER_WXML, HOVER_WXSS))
    doc = renderer.render({"theme": "light", "rows": ["a", "b", "c"], "hover": "on"})
    rows = (doc.root.children or [])[0].children or []
    assert [r.props["hoverStyle"] for r in rows] == [{"opacity": "0.8"}] * 3
    assert rows[0].props["hoverStyle"] is rows[1].props["hoverStyle"]  # rows alike share it, as their style
    # The parent's class changes: the rows are restyled, and their hover style changes with them.
    before = doc.root.clone()
    patches = renderer.update({"theme": "dark"})
    hovers = [p for p in patches if isinstance(p, SetProp) and p.name == "hoverStyle"]
    assert [(p.id, p.value) for p in hovers] == [(r.id, {"opacity": "0.5", "color": "white"}) for r in rows]
    fresh = CardRenderer(renderer.component).render(renderer.data).root
    assert apply(before, patches) == renderer.document.root == fresh
    # The rows' own hover class changes: filled again, the same.
    before = renderer.document.root.clone()
    patches = renderer.update({"hover": "alt"})
    hovers = [p for p in patches if isinstance(p, SetProp) and p.name == "hoverStyle"]
    assert [(p.id, p.value) for p in hovers] == [(r.id, {"background-color": "red"}) for r in rows]
    assert apply(before, patches) == renderer.document.root
