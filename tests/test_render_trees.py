"""What a card renderer keeps alive, and the cycle collector around it (issue 16).

The instances a render keeps (elements, text runs, watchers) point down only, so a dropped card
is freed by reference counting alone; the collector is held off while a card renders and comes
back afterwards. These tests pin both, and the places where an element now carries a copy of
what it used to read through its parent (the parent's style, the ancestor chain).
"""

from __future__ import annotations

import copy
import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.gcpause import collector_paused
from skillc.ir.component import CompiledComponent, compile_component
from skillc.ir.diff import apply
from skillc.ir.evaluate import CardRenderer, RenderLimits
from skillc.ir.instance import Elem, TextRun
from skillc.ir.render import TEXT, RenderDocument, RenderNode
from skillc.ir.watch import Watch

from .conftest import COFFEE, inline_component


def _drink_list() -> CompiledComponent:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    comp = compile_component(pkg, "drink-list", DiagnosticSink())
    assert comp is not None
    return comp


def _drinks(n: int, prefix: str = "d") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i}", "name": f"Drink {i}", "price": 20 + i % 13, "image": f"x/{i}.jpg"} for i in range(n)]


def _live(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Only reference counting frees anything while a test runs under this."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def test_a_dropped_card_is_freed_without_the_cycle_collector(collector_off: None) -> None:
    comp = _drink_list()
    CardRenderer(comp).render({"drinks": _drinks(3)})  # per-component caches filled first
    before = {kind: _live(kind) for kind in (Elem, TextRun, Watch, RenderNode)}
    card = CardRenderer(comp, limits=RenderLimits(max_nodes=5000))
    card.render({"title": "Menu", "drinks": _drinks(200), "selectedId": "d1"})
    card.update({"selectedId": "d7"})  # structural watchers and a restyle too
    card.update({"drinks": _drinks(150, "n")})  # a keyed replacement drops a subtree
    grown = {kind: _live(kind) - before[kind] for kind in before}
    assert grown[Elem] > 750 and grown[RenderNode] > 1000, grown
    del card
    assert {kind: _live(kind) - before[kind] for kind in before} == dict.fromkeys(before, 0)


def test_a_replaced_subtree_is_freed_while_the_card_lives(collector_off: None) -> None:
    comp = _drink_list()
    card = CardRenderer(comp, limits=RenderLimits(max_nodes=5000))
    card.render({"drinks": _drinks(100)})
    elems = _live(Elem)
    for k in range(5):
        card.update({"drinks": _drinks(100, f"r{k}-")})  # new keys: every item re-created
    assert _live(Elem) == elems


def test_the_collector_is_held_off_during_a_render_and_back_after() -> None:
    seen: list[bool] = []
    comp = inline_component('<view wx:for="{{n}}">{{item}}</view>')

    card = CardRenderer(comp)
    original = card._render_children

    def spy(inst: Any) -> Any:
        seen.append(gc.isenabled())
        return original(inst)

    card._render_children = spy  # type: ignore[method-assign]
    assert gc.isenabled()
    card.render({"n": 3})
    card.update({"n": 4})  # a structural change re-renders through _render_children
    assert len(seen) > 2 and not any(seen)  # every element's children, in both passes
    assert gc.isenabled()


def test_a_render_that_fails_still_gives_the_collector_back() -> None:
    comp = inline_component('<view wx:for="{{n}}">{{item}}</view>')
    card = CardRenderer(comp, limits=RenderLimits(max_nodes=10, max_for_number=10), sink=DiagnosticSink())
    card.render({"n": 50})
    assert card.exceeded is not None and card.exceeded.code == "RND007"
    assert gc.isenabled()
    card.render({"n": 2})
    card.update({"n": 50})
    assert card.exceeded is not None
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    comp = inline_component("<view>{{a}}</view>")
    gc.disable()
    try:
        card = CardRenderer(comp)
        card.render({"a": 1})
        card.update({"a": 2})
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_pauses_on_two_threads_end_when_both_are_done() -> None:
    inside = threading.Event()
    release = threading.Event()
    states: list[bool] = []

    def other() -> None:
        with collector_paused:
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(10)
    with collector_paused:
        states.append(gc.isenabled())
    states.append(gc.isenabled())  # the other thread still renders
    release.set()
    t.join(10)
    states.append(gc.isenabled())
    assert states == [False, False, True]


def test_a_child_recomputed_later_reads_its_parents_current_style() -> None:
    """`inherit` reads any property of the parent: a parent whose width changed (nothing a child
    inherits) must still hand the new style to a child recomputed by a later update."""
    comp = inline_component(
        '<view class="p" style="width: {{w}}px"><view class="c {{k}}">x</view></view>',
        ".c { width: inherit; }",
    )
    live = CardRenderer(comp)
    tree = live.render({"w": 100, "k": ""}).root.clone()
    tree = apply(tree, live.update({"w": 120}))
    tree = apply(tree, live.update({"k": "on"}))
    fresh = CardRenderer(comp).render(live.data).root
    assert tree == fresh
    child = fresh.find("0.0")
    assert child is not None and child.style["width"] == "120px"
    assert live.document.root == fresh


def test_a_class_change_restyles_descendants_through_the_ancestor_chain() -> None:
    """Descendant selectors see the chain of ancestor keys; a class change on an element must
    reach its grandchildren, whose chains are shared objects now."""
    comp = inline_component(
        '<view class="a {{on}}"><view class="b"><text class="t">x</text></view>'
        '<view wx:for="{{items}}" class="b"><text class="t">{{item}}</text></view></view>',
        ".on .b .t { color: #ff0000; } .t { color: #000000; }",
    )
    live = CardRenderer(comp)
    tree = live.render({"on": "", "items": [1, 2]}).root.clone()
    for change in ({"on": "on"}, {"items": [1, 2, 3]}, {"on": ""}, {"on": "on"}):
        tree = apply(tree, live.update(change))
        fresh = CardRenderer(comp).render(live.data).root
        assert tree == fresh, change
    reds = [n.id for n in tree.walk() if n.style.get("color") == "#ff0000" and n.type == "text"]
    assert len(reds) == 4


def test_rows_share_style_objects_and_a_copy_of_the_tree_gives_each_node_its_own() -> None:
    def render(n: int) -> tuple[CardRenderer, RenderDocument]:
        renderer = CardRenderer(_drink_list())
        return renderer, renderer.render({"title": "Menu", "keyword": "", "drinks": _drinks(n), "selectedId": "d1"})

    def styles(doc: RenderDocument) -> int:
        return len({id(n.style) for n in doc.root.walk()})

    renderer, doc = render(30)
    nodes = list(doc.root.walk())
    names = [n for n in nodes if n.type == TEXT and (n.text or "").startswith("Drink ")]
    # Rows alike share their style objects: thirty names, one style but the selected row's (d1).
    assert len(names) == 30 and len({id(n.style) for n in names[:1] + names[2:]}) == 1
    assert names[1].style is not names[0].style
    assert styles(doc) == styles(render(3)[1]) < len(nodes) // 8
    copied = copy.deepcopy(doc)
    copied_names = [n for n in copied.root.walk() if n.type == TEXT and (n.text or "").startswith("Drink ")]
    assert len({id(n.style) for n in copied_names}) == 30
    copied_names[0].style["color"] = "rgb(1, 2, 3)"
    assert [n.style.get("color") == "rgb(1, 2, 3)" for n in copied_names[:3]] == [True, False, False]
    # The original, and what the renderer goes on to draw, are untouched.
    assert not any(n.style.get("color") == "rgb(1, 2, 3)" for n in doc.root.walk())
    assert renderer.update({"drinks[2].price": 99})
    assert not any(n.style.get("color") == "rgb(1, 2, 3)" for n in renderer.document.root.walk())


def test_a_first_render_leaves_few_containers_for_the_collector_to_walk(collector_off: None) -> None:
    """After a first render the cycle collector walks every new tracked object once (the render
    holds it off, docs/render-ir.md): at 2571 items that walk was most of what a node cost more
    than at 20 (bench/growth.py). A trie node is its own list of watches, not an object holding
    one: 6.7 tracked objects per node, not 7.4 (the bound leaves room for an interpreter that
    tracks a little more)."""
    comp = _drink_list()
    CardRenderer(comp).render({"drinks": _drinks(3)})  # per-component caches filled first
    payload = {"title": "Menu", "keyword": "", "drinks": _drinks(400), "selectedId": "d1"}
    old = gc.get_objects()  # held, so that no id in ``before`` is reused by a new object
    before = {id(o) for o in old}
    card = CardRenderer(comp, limits=RenderLimits(max_nodes=5000))
    doc = card.render(payload)
    # What the card holds that the render made (reached from it, so no other thread's objects count).
    made: list[object] = []
    seen: set[int] = set()
    stack: list[object] = [card, doc]
    while stack:
        o = stack.pop()
        if id(o) in seen or id(o) in before or not gc.is_tracked(o):
            continue
        seen.add(id(o))
        made.append(o)
        stack.extend(gc.get_referents(o))
    nodes = sum(1 for _ in doc.root.walk())
    assert nodes > 2800
    assert len(made) / nodes < 7.0, sorted({type(o).__name__ for o in made})
    assert not any(type(o) is list and o and all(isinstance(w, Watch) for w in o) for o in made)


def test_the_watch_trie_finds_prefixes_and_subtrees_and_drops_the_dead() -> None:
    from skillc.ir.watch import Trie

    class Owner:
        alive = True

    def watch() -> Watch:
        return Watch("text", Owner())  # type: ignore[arg-type]

    trie = Trie()
    whole, price, name, dead = watch(), watch(), watch(), watch()
    trie.add(("drinks",), whole)
    trie.add(("drinks", 3, "price"), price)
    trie.add(("drinks", 4, "name"), name)
    trie.add(("drinks", 3, "price"), dead)
    dead.owner = Owner()
    dead.owner.alive = False  # type: ignore[misc]
    found: dict[int, Watch] = {}
    trie.collect(("drinks", 3), found)
    assert list(found.values()) == [whole, price]  # the prefix's watcher, then the subtree's live one
    assert trie.kids["drinks"].kids[3].kids["price"] == [price]  # the dead one dropped on the way
    found = {}
    trie.collect(("drinks", 3, "price", "x"), found)
    assert list(found.values()) == [whole, price]
    name.owner.alive = False  # type: ignore[misc]
    assert trie.compact() == 2
    assert trie.kids["drinks"].kids[4].kids["name"] == []
    assert trie.compact() == 2
    assert "name" not in trie.kids["drinks"].kids[4].kids  # an emptied leaf goes at the next compaction
    assert trie == [] and not trie  # the root has no watches: as a list, it is empty
