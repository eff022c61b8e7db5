"""How an event on a rendered node reaches its handlers, as WeChat delivers it: the path from the
root to the node, the bindings the event reaches (innermost first; a bubbling event climbs, others
stay on their target; a ``catch`` binding stops it), and the event object each handler receives.
Cards and pages deliver events the same way; only what runs the handler differs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from skillc.ir.events import bubbles, default_detail
from skillc.ir.render import EventBinding, RenderNode

__all__ = ["chain_to", "event_object", "reached"]


def chain_to(root: RenderNode, node_id: str) -> list[RenderNode] | None:
    """The nodes from the root down to ``node_id``, or None."""
    stack: list[tuple[RenderNode, int]] = [(root, 0)]
    path: list[RenderNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node.id == node_id:
            return path
        if node.children:
            stack.extend((c, depth + 1) for c in reversed(node.children))
    return None


def reached(chain: list[RenderNode], kind: str) -> Iterator[tuple[RenderNode, EventBinding]]:
    """The nodes of ``chain`` (root to target) whose binding a ``kind`` event on the target runs,
    in the order they run; after a ``catch`` binding has run, no more."""
    for node in reversed(chain) if bubbles(kind) else [chain[-1]]:
        binding = node.events.get(kind) if node.events else None
        if binding is None:
            continue
        yield node, binding
        if binding.catch:
            return


def event_object(
    kind: str, stamp_ms: int, target: RenderNode, node: RenderNode, binding: EventBinding, detail: Any
) -> dict[str, Any]:
    """What ``node``'s handler receives for a ``kind`` event on ``target``: ``target`` is where it
    happened, ``currentTarget`` the node whose binding runs (its own ``data-*``)."""
    return {
        "type": kind,
        "timeStamp": stamp_ms,
        "target": {"id": _element_id(target), "dataset": _dataset(target)},
        "currentTarget": {"id": _element_id(node), "dataset": binding.dataset},
        "detail": detail if detail is not None else default_detail(kind),
        "mark": {},
    }


def _dataset(node: RenderNode) -> dict[str, Any]:
    for binding in (node.events or {}).values():
        return dict(binding.dataset)
    return {}


def _element_id(node: RenderNode) -> str:
    value = node.props.get("id")
    return value if isinstance(value, str) else ""
