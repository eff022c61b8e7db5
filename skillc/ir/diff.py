"""Patches between two Render IR trees, and applying them.

Ops are addressed by node id, never by path, so a host can keep an id -> element map.
Contract: ``apply(old, diff(old, new)) == new``; a change to one leaf is one op; a keyed
reorder is moves (the longest run already in order stays put), not re-creates.

Op order matters and is part of the format: every ``remove`` comes first; then, per parent,
``move``/``insert`` ops whose ``index`` is the child position at the moment the op applies;
``setProp``/``removeProp``/``setStyle``/``setText``/``setEvents`` may come in any order.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from skillc.ir.render import TEXT, EventBinding, RenderNode, copy_events, copy_json


@dataclass(slots=True)
class SetProp:
    id: str
    name: str
    value: Any
    op: Literal["setProp"] = "setProp"


@dataclass(slots=True)
class RemoveProp:
    id: str
    name: str
    op: Literal["removeProp"] = "removeProp"


@dataclass(slots=True)
class SetStyle:
    """Changed style properties; a None value removes the property."""

    id: str
    style: dict[str, str | None]
    op: Literal["setStyle"] = "setStyle"


@dataclass(slots=True)
class SetText:
    id: str
    text: str
    op: Literal["setText"] = "setText"


@dataclass(slots=True)
class SetEvents:
    """The node's whole event map (None: no events), e.g. after a dataset changed."""

    id: str
    events: dict[str, EventBinding] | None
    op: Literal["setEvents"] = "setEvents"


@dataclass(slots=True)
class Insert:
    parent: str
    index: int
    node: RenderNode
    op: Literal["insert"] = "insert"


@dataclass(slots=True)
class Remove:
    parent: str
    id: str
    op: Literal["remove"] = "remove"


@dataclass(slots=True)
class Move:
    parent: str
    id: str
    index: int
    op: Literal["move"] = "move"


@dataclass(slots=True)
class ReplaceRoot:
    node: RenderNode
    op: Literal["replaceRoot"] = "replaceRoot"


Patch = Annotated[
    SetProp | RemoveProp | SetStyle | SetText | SetEvents | Insert | Remove | Move | ReplaceRoot,
    Field(discriminator="op"),
]
PATCHES_ADAPTER: TypeAdapter[list[Patch]] = TypeAdapter(list[Patch])


def patches_schema() -> dict[str, Any]:
    schema = PATCHES_ADAPTER.json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "skillc Render IR patches"
    return schema


def patches_to_plain(patches: list[Patch]) -> list[dict[str, Any]]:
    plain: list[dict[str, Any]] = PATCHES_ADAPTER.dump_python(patches, mode="json")
    return plain


# -- diff ---------------------------------------------------------------------------------


def diff(old: RenderNode, new: RenderNode) -> list[Patch]:
    if old.id != new.id or old.type != new.type:
        return [ReplaceRoot(new)]
    removes: list[Patch] = []
    ops: list[Patch] = []
    _diff_node(old, new, removes, ops)
    return removes + ops


def diff_shallow(old: RenderNode, new: RenderNode) -> list[Patch]:
    """Ops for one node's props, style and events only (children are not compared)."""
    ops: list[Patch] = []
    _diff_node(old, new, [], ops, children=False)
    return ops


def _diff_node(
    old: RenderNode, new: RenderNode, removes: list[Patch], ops: list[Patch], *, children: bool = True
) -> None:
    if old.props != new.props:
        if new.type == TEXT and old.props.keys() == new.props.keys() == {"text"}:
            ops.append(SetText(new.id, new.props["text"]))
        else:
            for name, value in new.props.items():
                if name not in old.props or old.props[name] != value:
                    ops.append(SetProp(new.id, name, value))
            for name in old.props:
                if name not in new.props:
                    ops.append(RemoveProp(new.id, name))
    if old.style != new.style:
        changed: dict[str, str | None] = {k: v for k, v in new.style.items() if old.style.get(k) != v}
        changed.update({k: None for k in old.style if k not in new.style})
        ops.append(SetStyle(new.id, changed))
    if old.events != new.events:
        ops.append(SetEvents(new.id, new.events or None))
    if not children:
        return
    old_children = old.children or []
    new_children = new.children or []
    if not old_children and not new_children:
        return
    _diff_children(old, old_children, new_children, removes, ops)


def _diff_children(
    parent: RenderNode,
    old_children: list[RenderNode],
    new_children: list[RenderNode],
    removes: list[Patch],
    ops: list[Patch],
) -> None:
    # A child is kept when the same id with the same type is under the same parent in both.
    new_types = {c.id: c.type for c in new_children}
    old_by_id: dict[str, RenderNode] = {}
    for c in old_children:
        if new_types.get(c.id) == c.type:
            old_by_id[c.id] = c
        else:
            removes.append(Remove(parent.id, c.id))

    sim = [c.id for c in old_children if c.id in old_by_id]
    if [c.id for c in new_children] != sim:
        position = {cid: i for i, cid in enumerate(sim)}
        stay = _longest_increasing_run([position[c.id] for c in new_children if c.id in position], sim)
        # Walk from the end so that each op's anchor (the next sibling) is already final.
        anchor: str | None = None
        for child in reversed(new_children):
            if child.id in old_by_id:
                if child.id not in stay:
                    sim.remove(child.id)
                    index = sim.index(anchor) if anchor is not None else len(sim)
                    sim.insert(index, child.id)
                    ops.append(Move(parent.id, child.id, index))
            else:
                index = sim.index(anchor) if anchor is not None else len(sim)
                sim.insert(index, child.id)
                ops.append(Insert(parent.id, index, child))
            anchor = child.id
    for child in new_children:
        before = old_by_id.get(child.id)
        if before is not None:
            _diff_node(before, child, removes, ops)


def _longest_increasing_run(positions: list[int], ids: list[str]) -> set[str]:
    """Ids at the positions of a longest increasing subsequence (patience sorting)."""
    if not positions:
        return set()
    tails: list[int] = []
    tail_index: list[int] = []
    prev = [-1] * len(positions)
    for i, p in enumerate(positions):
        k = bisect_left(tails, p)
        if k == len(tails):
            tails.append(p)
            tail_index.append(i)
        else:
            tails[k] = p
            tail_index[k] = i
        prev[i] = tail_index[k - 1] if k else -1
    keep: set[str] = set()
    i = tail_index[-1]
    while i >= 0:
        keep.add(ids[positions[i]])
        i = prev[i]
    return keep


# -- apply --------------------------------------------------------------------------------


class PatchError(ValueError):
    """A patch does not fit the tree it is applied to."""


def apply(tree: RenderNode, patches: list[Patch]) -> RenderNode:
    """Apply patches to a copy of ``tree`` and return it."""
    root = tree.clone()
    index: dict[str, RenderNode] = {}

    def add(node: RenderNode) -> None:
        for n in node.walk():
            index[n.id] = n

    def drop(node: RenderNode) -> None:
        for n in node.walk():
            index.pop(n.id, None)

    add(root)

    def get(node_id: str) -> RenderNode:
        try:
            return index[node_id]
        except KeyError:
            raise PatchError(f"no node with id {node_id!r}") from None

    for p in patches:
        if isinstance(p, ReplaceRoot):
            root = p.node.clone()
            index.clear()
            add(root)
        elif isinstance(p, SetProp):
            get(p.id).props[p.name] = copy_json(p.value)
        elif isinstance(p, RemoveProp):
            get(p.id).props.pop(p.name, None)
        elif isinstance(p, SetText):
            get(p.id).props["text"] = p.text
        elif isinstance(p, SetStyle):
            style = get(p.id).style
            for k, v in p.style.items():
                if v is None:
                    style.pop(k, None)
                else:
                    style[k] = v
        elif isinstance(p, SetEvents):
            get(p.id).events = copy_events(p.events) or None
        elif isinstance(p, Remove):
            parent = get(p.parent)
            children = parent.children or []
            pos = next((i for i, c in enumerate(children) if c.id == p.id), None)
            if pos is None:
                raise PatchError(f"{p.parent!r} has no child {p.id!r}")
            drop(children.pop(pos))
        elif isinstance(p, Insert):
            parent = get(p.parent)
            if parent.children is None:
                parent.children = []
            node = p.node.clone()
            parent.children.insert(p.index, node)
            add(node)
        elif isinstance(p, Move):
            parent = get(p.parent)
            children = parent.children or []
            pos = next((i for i, c in enumerate(children) if c.id == p.id), None)
            if pos is None:
                raise PatchError(f"{p.parent!r} has no child {p.id!r}")
            children.insert(p.index, children.pop(pos))
    return root
