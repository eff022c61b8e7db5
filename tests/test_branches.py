"""wx:if / wx:elif / wx:else: each branch against the exact node it must render, full and incremental.

The other evaluator tests compare incremental updates with full renders, and the goldens use one
preview state, so a chain that picked the wrong branch in both would pass them. Here every state
has its expected Render IR written out by hand.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import parse_wxml
from skillc.ir.component import CompiledComponent
from skillc.ir.diff import Insert, Remove, SetText, apply
from skillc.ir.evaluate import CardRenderer
from skillc.ir.lower import lower_document
from skillc.ir.render import TEXT, RenderNode


def renderer(source: str) -> CardRenderer:
    sink = DiagnosticSink()
    template = lower_document(parse_wxml(source, file="t.wxml", sink=sink), load=lambda _: None, sink=sink)
    assert list(sink) == []
    return CardRenderer(CompiledComponent("t", template, None))


def run(node_id: str, text: str) -> RenderNode:
    return RenderNode(node_id, TEXT, {"text": text})


def element(node_id: str, type_: str, *children: RenderNode) -> RenderNode:
    return RenderNode(node_id, type_, children=list(children))


def card(*children: RenderNode) -> RenderNode:
    return element("root", "view", element("0", "view", *children))


# One chain whose branches are different element types, so a wrong pick cannot look right, and
# whose elif test also holds when the if test does (n > 5 for n = 12): only the order decides.
SIZES = (
    "<view>"
    '<text wx:if="{{n > 10}}">big {{n}}</text>'
    '<text wx:elif="{{n > 5}}">medium {{n}}</text>'
    "<view wx:else>small {{n}}</view>"
    "<text>end</text>"
    "</view>"
)
END = element("0.1", "text", run("0.1.0", "end"))


def sizes(n: int) -> RenderNode:
    """The expected document of SIZES: branch i of the chain at 0.0 has id 0.0.i."""
    if n > 10:
        branch = element("0.0.0", "text", run("0.0.0.0", f"big {n}"))
    elif n > 5:
        branch = element("0.0.1", "text", run("0.0.1.0", f"medium {n}"))
    else:
        branch = element("0.0.2", "view", run("0.0.2.0", f"small {n}"))
    return card(branch, END)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (12, card(element("0.0.0", "text", run("0.0.0.0", "big 12")), END)),
        (11, card(element("0.0.0", "text", run("0.0.0.0", "big 11")), END)),
        (10, card(element("0.0.1", "text", run("0.0.1.0", "medium 10")), END)),
        (7, card(element("0.0.1", "text", run("0.0.1.0", "medium 7")), END)),
        (6, card(element("0.0.1", "text", run("0.0.1.0", "medium 6")), END)),
        (5, card(element("0.0.2", "view", run("0.0.2.0", "small 5")), END)),
        (-1, card(element("0.0.2", "view", run("0.0.2.0", "small -1")), END)),
    ],
)
def test_each_branch_renders_exactly_its_node(n: int, expected: RenderNode) -> None:
    doc = renderer(SIZES).render({"n": n})
    assert doc.root == expected
    assert sizes(n) == expected  # the helper the incremental tests use agrees with the table


def test_missing_data_takes_the_else_branch() -> None:
    # undefined > 10 and undefined > 5 are both false in JavaScript.
    assert renderer(SIZES).render({}).root == card(element("0.0.2", "view", run("0.0.2.0", "small ")), END)


def test_a_chain_without_else_renders_nothing_when_no_test_holds() -> None:
    r = renderer(
        '<view><text wx:if="{{k == 1}}">one</text><text wx:elif="{{k == 2}}">two</text><text>end</text></view>'
    )
    assert r.render({"k": 3}).root == card(END)
    assert r.render({"k": 2}).root == card(element("0.0.1", "text", run("0.0.1.0", "two")), END)
    assert r.render({"k": 1}).root == card(element("0.0.0", "text", run("0.0.0.0", "one")), END)


def test_several_elifs_pick_the_first_that_holds() -> None:
    source = (
        "<view>"
        '<text wx:if="{{k === 1}}">one</text>'
        '<text wx:elif="{{k === 2}}">two</text>'
        '<text wx:elif="{{k > 1}}">many</text>'
        "<text wx:else>none</text>"
        "</view>"
    )
    expected = {1: ("0.0.0", "one"), 2: ("0.0.1", "two"), 3: ("0.0.2", "many"), 0: ("0.0.3", "none")}
    for k, (node_id, text) in expected.items():
        root = renderer(source).render({"k": k}).root
        assert root == card(element(node_id, "text", run(f"{node_id}.0", text))), k


# -- incremental: patches move the document from branch to branch ------------------------------


def step(r: CardRenderer, tree: RenderNode, change: dict[str, Any], expected: RenderNode) -> RenderNode:
    patches = r.update(change)
    tree = apply(tree, patches)
    assert r.document.root == expected, f"document after {change}"
    assert tree == expected, f"patched tree after {change}: {patches}"
    return tree


def test_updates_move_if_elif_else_if() -> None:
    r = renderer(SIZES)
    tree = copy.deepcopy(r.render({"n": 12}).root)
    assert tree == sizes(12)
    for n in (7, 1, 12, 3, 8, 20, 6, 11, 10, 0):  # if->elif->else->if->else->elif->if->elif->if->elif->else
        tree = step(r, tree, {"n": n}, sizes(n))


def test_a_branch_change_replaces_the_node_and_a_same_branch_change_edits_it() -> None:
    r = renderer(SIZES)
    r.render({"n": 12})
    branch = element("0.0.1", "text", run("0.0.1.0", "medium 7"))
    assert r.update({"n": 7}) == [Remove("0", "0.0.0"), Insert("0", 0, branch)]
    assert r.update({"n": 8}) == [SetText("0.0.1.0", "medium 8")]
    assert r.update({"n": 9}) == [SetText("0.0.1.0", "medium 9")]
    assert r.update({"n": 9}) == []


# The tests read different fields, so an update to the elif's field alone must be noticed too.
FLAGS = '<view><text wx:if="{{a}}">A</text><text wx:elif="{{b}}">B</text><text wx:else>C</text></view>'


def flags(a: bool, b: bool) -> RenderNode:
    if a:
        return card(element("0.0.0", "text", run("0.0.0.0", "A")))
    if b:
        return card(element("0.0.1", "text", run("0.0.1.0", "B")))
    return card(element("0.0.2", "text", run("0.0.2.0", "C")))


def test_updates_to_the_elif_field_alone_switch_branches() -> None:
    r = renderer(FLAGS)
    state = {"a": False, "b": False}
    tree = copy.deepcopy(r.render(state).root)
    assert tree == flags(False, False)
    for change in ({"b": True}, {"a": True}, {"b": False}, {"b": True}, {"a": False}, {"b": False}, {"b": True}):
        state.update(change)
        tree = step(r, tree, change, flags(state["a"], state["b"]))


def test_branches_inside_a_keyed_loop_follow_their_item() -> None:
    source = (
        '<view wx:for="{{items}}" wx:key="id">'
        "<text wx:if=\"{{item.s == 'a'}}\">A{{index}}</text>"
        "<text wx:elif=\"{{item.s == 'b'}}\">B{{index}}</text>"
        "<text wx:else>C{{index}}</text>"
        "</view>"
    )

    def expected(states: list[str]) -> RenderNode:
        items = []
        for i, s in enumerate(states):
            branch = {"a": 0, "b": 1}.get(s, 2)
            node_id = f"0[k{i}].0.{branch}"
            text = "ABC"[branch] + str(i)
            items.append(element(f"0[k{i}]", "view", element(node_id, "text", run(f"{node_id}.0", text))))
        return RenderNode("root", "view", children=items)

    r = renderer(source)
    states = ["a", "b", "x"]
    tree = copy.deepcopy(r.render({"items": [{"id": f"k{i}", "s": s} for i, s in enumerate(states)]}).root)
    assert tree == expected(states)
    for i, s in [(0, "b"), (1, "x"), (2, "a"), (1, "b"), (0, "a"), (2, "b")]:
        states[i] = s
        tree = step(r, tree, {f"items[{i}].s": s}, expected(states))
