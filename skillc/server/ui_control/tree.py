"""A card's Render IR as ui_control sees it: the bounded control tree (roles, labels, events,
enabled / visible), and the digests that tell a control changed since a snapshot."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from skillc.ir.render import TEXT, RenderNode
from skillc.runtime.cards.card_models import CardView
from skillc.server.ui_control.models import MAX_DEPTH, MAX_LABEL, MAX_NODES, MAX_TEXT, UiControlNode, UiRole


def _runs(node: RenderNode) -> Iterator[str]:
    for n in node.walk():
        if n.type == TEXT and n.text:
            yield n.text


def _spaced_text(node: RenderNode, limit: int) -> str:
    """The text runs joined by single spaces, read only as far as ``limit`` needs."""
    parts: list[str] = []
    size = 0
    for run in _runs(node):
        words = " ".join(run.split())
        if words:
            parts.append(words)
            size += len(words) + 1
            if size > limit:
                break
    return " ".join(parts)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def role_of(node: RenderNode) -> UiRole:
    kind = node.type
    if kind == "button":
        return "button"
    if kind == "image":
        return "image"
    if kind in ("text", TEXT):
        return "text"
    if kind == "scroll-view":
        return "scrollable"
    if node.events and "tap" in node.events:
        return "button"
    return "group"


def label_of(node: RenderNode) -> str | None:
    aria = node.props.get("aria-label")
    if isinstance(aria, str) and aria.strip():
        return cut(" ".join(aria.split()), MAX_LABEL)
    if node.type == "image":
        src = node.props.get("src")
        if isinstance(src, str) and src:
            name = src.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            return cut(name, MAX_LABEL) if name and not name.startswith("data:") else None
        return None
    text = _spaced_text(node, MAX_LABEL)
    return cut(text, MAX_LABEL) if text else None


def is_enabled(node: RenderNode) -> bool:
    return node.props.get("disabled") not in (True, "true")


def is_shown(node: RenderNode) -> bool:
    style = node.style
    return not (
        style.get("display") == "none"
        or style.get("visibility") == "hidden"
        or node.props.get("hidden") in (True, "true")
    )


def _control(node: RenderNode, visible: bool) -> UiControlNode:
    role = role_of(node)
    text = cut(node.text_content(), MAX_TEXT) if role == "text" else None
    return UiControlNode(
        id=node.id,
        role=role,
        label=label_of(node),
        text=text,
        events=sorted(node.events) if node.events else [],
        enabled=is_enabled(node),
        visible=visible,
    )


def fingerprints(root: RenderNode) -> dict[str, str]:
    """A digest per node of its type, props, events and, through its children's digests, its
    whole subtree (ids, props, text); styles do not count. One pass, children before parents."""
    order = list(root.walk())
    out: dict[str, str] = {}
    for node in reversed(order):
        events = {k: [e.handler, e.catch, e.dataset] for k, e in sorted(node.events.items())} if node.events else None
        children = [[c.id, out.get(c.id, "")] for c in node.children or []]
        blob = json.dumps([node.id, node.type, node.props, events, children], sort_keys=True, default=str)
        out[node.id] = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return out


def shallow_digest(node: RenderNode) -> str:
    """A digest of the node alone (type, props, events): what a handler on it receives."""
    events = {k: [e.handler, e.catch, e.dataset] for k, e in sorted(node.events.items())} if node.events else None
    blob = json.dumps([node.id, node.type, node.props, events], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def card_digest(view: CardView | None) -> str | None:
    """The digest of a whole card (an audit record's before / after); None for a card that is gone."""
    if view is None:
        return None
    return fingerprints(view.document.root).get(view.document.root.id)


@dataclass
class ControlTree:
    """What :func:`build_tree` gives: the tree for the agent and the digests kept with its snapshot."""

    root: UiControlNode
    node_count: int
    truncated: bool
    fingerprints: dict[str, tuple[str, str]]  # id -> (the subtree's digest, the node's own)


def build_tree(root: RenderNode, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> ControlTree:
    """The bounded control tree of a document (pre-order: a cut keeps the top of the card)."""
    all_prints = fingerprints(root)
    prints: dict[str, tuple[str, str]] = {}
    count = 0
    truncated = False

    def visit(node: RenderNode, depth: int, visible: bool) -> UiControlNode | None:
        nonlocal count, truncated
        if count >= max_nodes or depth >= max_depth:
            truncated = True
            return None
        shown = visible and is_shown(node)
        control = _control(node, shown)
        count += 1
        prints[node.id] = (all_prints[node.id], shallow_digest(node))
        for child in node.children or []:
            sub = visit(child, depth + 1, shown)
            if sub is None:
                if count >= max_nodes:
                    break
                continue
            control.children.append(sub)
        return control

    top = visit(root, 0, True)
    assert top is not None  # max_nodes and max_depth are at least 1
    return ControlTree(top, count, truncated, prints)


def flatten(root: UiControlNode) -> Iterator[UiControlNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def joined_text(node: RenderNode) -> tuple[str, str]:
    """A node's text as rendered (runs run on) and with a space between runs."""
    return node.text_content().strip(), _spaced_text(node, 1 << 30)
