"""take_snapshot's uid text tree: one line per node, two spaces of indent per level.

``uid=<uid> <type> role="..." name="..." "<text>" attr="..." [selected]``. At most
:data:`MAX_NODES` nodes and :data:`MAX_ATTR_CHARS` characters per attribute value; over either
the result says ``truncated``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from skillc.server.debugger.snapshot import DomNode

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
    return json.dumps(value, ensure_ascii=False), cut


def _detail(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
        parts = [f"uid={node.uid}", node.type]
        for label, value in (("role", node.role), ("name", node.name)):
            if value is not None:
                quoted, cut = _quote(value)
                truncated |= cut
                parts.append(f"{label}={quoted}")
        if node.text is not None:
            quoted, cut = _quote(node.text)
            truncated |= cut
            parts.append(quoted)
        for key, value in node.attrs.items():
            if verbose or key in BRIEF_ATTRS or key.startswith("aria-"):
                quoted, cut = _quote(value)
                truncated |= cut
                parts.append(f"{key}={quoted}")
        if verbose:
            parts += [f"{key}={_detail(value)}" for key, value in node.details.items()]
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
