"""take_snapshot's uid text tree: one line per node, two spaces of indent per level.

``uid=<uid> <type> role="..." name="..." "<text>" bindtap="..." attr="..." [selected]``: the
role and name are the accessible ones the card's HTML carries (a tappable node is a ``button``
named by its text), the events its WXML handlers (``bindtap`` / ``catchtap``). At most
:data:`MAX_NODES` nodes and :data:`MAX_ATTR_CHARS` characters per attribute value; over either
the result says ``truncated``.

Ids carry ``wx:key`` values and every value comes from the card or its data, so nothing a card can
write may start a line or pass for another node: every value is a JSON string literal (see
:mod:`skillc.server.snapshot_text`), a uid is bare only when it matches
:data:`~skillc.server.snapshot_text.SAFE_ID`, a type or an attribute name only when it matches
:data:`~skillc.server.snapshot_text.SAFE_NAME`; anything else is quoted. One node, one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillc.server.debugger.snapshot import DomNode
from skillc.server.snapshot_text import SAFE_ID, SAFE_NAME, quote, token

MAX_NODES = 5000
MAX_ATTR_CHARS = 500
# Without ``verbose`` only these attributes are shown (plus every aria-*); with it, all and ``details``.
BRIEF_ATTRS = frozenset({"class", "id", "src", "href", "value", "placeholder", "type", "checked", "disabled"})


@dataclass
class TextTree:
    text: str
    node_count: int
    truncated: bool
    selected_uid: str | None


def _quote(value: str) -> tuple[str, bool]:
    cut = len(value) > MAX_ATTR_CHARS
    if cut:
        value = value[:MAX_ATTR_CHARS] + "…"
    return quote(value), cut


def _detail(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    # a string detail (the inline style) is the card's to write
    return _quote(value)[0]


def render_tree(root: DomNode, *, verbose: bool = False) -> TextTree:
    lines: list[str] = []
    truncated = False
    selected: str | None = None
    stack: list[tuple[DomNode, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if len(lines) >= MAX_NODES:
            truncated = True
            break
        parts = [f"uid={token(node.uid, SAFE_ID)}", token(node.type, SAFE_NAME)]
        for label, value in (("role", node.role), ("name", node.name)):
            if value is not None:
                quoted, cut = _quote(value)
                truncated |= cut
                parts.append(f"{label}={quoted}")
        if node.text is not None:
            quoted, cut = _quote(node.text)
            truncated |= cut
            parts.append(quoted)
        for key, handler in sorted(node.events.items()):
            # What a tap would run: the agent sees which nodes act, and how (bind bubbles, catch stops).
            quoted, cut = _quote(handler)
            truncated |= cut
            parts.append(f"{token(key, SAFE_NAME)}={quoted}")
        for key, value in node.attrs.items():
            if verbose or key in BRIEF_ATTRS or key.startswith("aria-"):
                quoted, cut = _quote(value)
                truncated |= cut
                parts.append(f"{token(key, SAFE_NAME)}={quoted}")
        if verbose:
            parts += [f"{token(key, SAFE_NAME)}={_detail(value)}" for key, value in node.details.items()]
        if node.selected:
            parts.append("[selected]")
            selected = selected or node.uid
        lines.append("  " * depth + " ".join(parts))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return TextTree("\n".join(lines), len(lines), truncated, selected)


def find_node(root: DomNode, uid: str) -> DomNode | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.uid == uid:
            return node
        stack.extend(node.children)
    return None
