"""Render IR diff/patch: apply(a, diff(a, b)) == b, one op per leaf change, keyed moves."""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.ir.diff import (
    PATCHES_ADAPTER,
    Insert,
    Move,
    Remove,
    SetProp,
    SetStyle,
    SetText,
    apply,
    diff,
    patches_schema,
    patches_to_plain,
)
from skillc.ir.render import TEXT, EventBinding, RenderNode

TYPES = ["view", "text", "image", "button"]


@st.composite
def trees(draw: st.DrawFn, pool_size: int = 24) -> RenderNode:
    ids = [f"n{i}" for i in range(pool_size)]
    free = draw(st.permutations(ids))
    budget = [draw(st.integers(1, pool_size))]

    def node(depth: int) -> RenderNode:
        nid = free.pop()
        budget[0] -= 1
        if depth > 0 and draw(st.booleans()) and draw(st.booleans()):
            return RenderNode(nid, TEXT, {"text": draw(st.sampled_from(["a", "b", "¥18", ""]))})
        props = draw(st.dictionaries(st.sampled_from(["src", "mode", "hoverClass"]), st.sampled_from([1, "x", None])))
        style = draw(st.dictionaries(st.sampled_from(["color", "width", "margin"]), st.sampled_from(["1px", "red"])))
        events = None
        if draw(st.booleans()):
            events = {
                "tap": EventBinding(
                    draw(st.sampled_from(["onTap", "onSelect"])),
                    draw(st.booleans()),
                    draw(st.dictionaries(st.sampled_from(["id", "n"]), st.integers(0, 3))),
                )
            }
        children: list[RenderNode] = []
        while budget[0] > 0 and free and depth < 4 and draw(st.integers(0, 3)) > 0:
            children.append(node(depth + 1))
        return RenderNode(nid, draw(st.sampled_from(TYPES)), props, style, events, children)

    root = node(0)
    root.id = "root"
    root.type = "view"
    return root


@st.composite
def mutated(draw: st.DrawFn, tree: RenderNode) -> RenderNode:
    """A realistic next render: same ids mostly, some reorders, edits, drops and additions."""
    new = copy.deepcopy(tree)
    fresh = iter(f"m{i}" for i in range(1000))
    for n in list(new.walk()):
        if n.type == TEXT and draw(st.booleans()):
            n.props["text"] = draw(st.sampled_from(["changed", "a", "¥20"]))
        if n.children:
            if draw(st.booleans()):
                n.children = draw(st.permutations(n.children))
            if draw(st.booleans()):
                del n.children[draw(st.integers(0, len(n.children) - 1))]
            if draw(st.booleans()):
                n.children.insert(draw(st.integers(0, len(n.children))), RenderNode(next(fresh), TEXT, {"text": "new"}))
        if n.type != TEXT and draw(st.booleans()):
            n.style["color"] = draw(st.sampled_from(["red", "blue"]))
    return new


@settings(max_examples=150, deadline=None)
@given(trees(), trees())
def test_apply_diff_of_unrelated_trees(a: RenderNode, b: RenderNode) -> None:
    assert apply(a, diff(a, b)) == b


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_apply_diff_of_next_render(data: st.DataObject) -> None:
    a = data.draw(trees())
    b = data.draw(mutated(a))
    patches = diff(a, b)
    assert apply(a, patches) == b
    assert apply(a, diff(a, a)) == a and diff(a, a) == []
    # Patches survive a JSON round trip (what a host receives).
    wire = json.loads(json.dumps(patches_to_plain(patches)))
    assert apply(a, PATCHES_ADAPTER.validate_python(wire)) == b


def _list(n: int) -> RenderNode:
    items = [
        RenderNode(
            f"0.1[{i}]",
            "view",
            {},
            {"width": "110px"},
            None,
            [
                RenderNode(
                    f"0.1[{i}].0", "text", {}, {}, None, [RenderNode(f"0.1[{i}].0.0", TEXT, {"text": f"drink {i}"})]
                ),
                RenderNode(
                    f"0.1[{i}].1", "text", {}, {}, None, [RenderNode(f"0.1[{i}].1.0", TEXT, {"text": f"¥{20 + i}"})]
                ),
            ],
        )
        for i in range(n)
    ]
    return RenderNode(
        "0",
        "view",
        {},
        {},
        None,
        [
            RenderNode("0.0", "text", {}, {}, None, []),
            RenderNode("0.1", "scroll-view", {"scrollX": True}, {}, None, items),
        ],
    )


def test_one_leaf_change_is_one_op() -> None:
    a = _list(50)
    b = copy.deepcopy(a)
    leaf = b.find("0.1[17].1.0")
    assert leaf is not None
    leaf.props["text"] = "¥99"
    assert diff(a, b) == [SetText("0.1[17].1.0", "¥99")]
    c = copy.deepcopy(a)
    node = c.find("0.1[3]")
    assert node is not None
    node.style["width"] = "120px"
    node.props["hoverClass"] = "on"
    assert diff(a, c) == [SetProp("0.1[3]", "hoverClass", "on"), SetStyle("0.1[3]", {"width": "120px"})]


def test_keyed_reorder_is_moves_not_recreates() -> None:
    a = _list(10)
    b = copy.deepcopy(a)
    scroll = b.find("0.1")
    assert scroll is not None and scroll.children is not None
    scroll.children.append(scroll.children.pop(0))  # first item to the end
    patches = diff(a, b)
    assert patches == [Move("0.1", "0.1[0]", 9)]
    assert apply(a, patches) == b
    scroll.children.reverse()  # [0, 9, 8, ..., 1]: items 0 and one other stay, 8 move
    patches = diff(a, b)
    assert all(isinstance(p, Move) for p in patches) and len(patches) == 8
    assert apply(a, patches) == b


def test_insert_and_remove_in_a_keyed_list() -> None:
    a = _list(5)
    b = _list(6)
    scroll = b.find("0.1")
    assert scroll is not None and scroll.children is not None
    scroll.children.pop(2)
    patches = diff(a, b)
    assert [type(p) for p in patches] == [Remove, Insert]
    assert apply(a, patches) == b


def test_patch_schema_names_every_op() -> None:
    schema = json.dumps(patches_schema())
    for op in ["setProp", "removeProp", "setStyle", "setText", "setEvents", "insert", "remove", "move", "replaceRoot"]:
        assert f'"{op}"' in schema
