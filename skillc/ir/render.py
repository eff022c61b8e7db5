"""The Render IR: the typed tree every host renders from.

``RenderDocument {version, viewport, root}`` wraps a tree of
``RenderNode {id, type, props, style, events?, children?}``. Styles are resolved (cascade,
rpx, media queries, inheritance for text), so a host needs no CSS engine. Ids are stable across
renders: the template position plus the ``wx:key`` of each enclosing loop.

The nodes are slotted dataclasses rather than pydantic models because an evaluation builds
thousands of them per render; pydantic still owns their schema, validation and JSON form
through :data:`DOCUMENT_ADAPTER` (``skillc schema render-ir`` prints it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

from skillc.ir.viewport import Viewport

RENDER_IR_VERSION: Literal[1] = 1

TEXT = "#text"
"""The type of a text run: text content, inside `<text>` or directly inside any element."""

NodeType = str
"""`view`, `text`, `image`, `button`, `scroll-view`, or `#text`."""


@dataclass(slots=True)
class EventBinding:
    """A bound event: the component method to call, whether it stops bubbling, the dataset."""

    handler: str
    catch: bool = False
    dataset: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RenderNode:
    id: str
    type: NodeType
    props: dict[str, Any] = field(default_factory=dict)
    style: dict[str, str] = field(default_factory=dict)
    events: dict[str, EventBinding] | None = None
    children: list[RenderNode] | None = None

    @property
    def text(self) -> str | None:
        """The text of a `#text` run, None for elements."""
        value = self.props.get("text") if self.type == TEXT else None
        return value if isinstance(value, str) else None

    def walk(self) -> Any:
        """Depth-first, pre-order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.children:
                stack.extend(reversed(node.children))

    def find(self, node_id: str) -> RenderNode | None:
        return next((n for n in self.walk() if n.id == node_id), None)

    def text_content(self) -> str:
        return "".join(n.text or "" for n in self.walk() if n.type == TEXT)

    def clone(self) -> RenderNode:
        """A deep copy; several times faster than copy.deepcopy on a tree of plain JSON values."""
        children = [c.clone() for c in self.children] if self.children is not None else None
        return RenderNode(
            self.id, self.type, copy_json(self.props), dict(self.style), copy_events(self.events), children
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> RenderNode:
        # Elements share their resolved style object (styles.ResolvedStyle); deepcopy's memo would
        # hand every copied node one shared dict, so an edit to one would show on all of them.
        return self.clone()


@dataclass(slots=True)
class RenderDocument:
    version: Literal[1]
    viewport: Viewport
    root: RenderNode

    def clone(self) -> RenderDocument:
        return RenderDocument(self.version, self.viewport, self.root.clone())

    def to_json(self, *, indent: int | None = 2) -> str:
        """Deterministic JSON: sorted keys, absent optional fields omitted, UTF-8 kept."""
        return json.dumps(to_plain(self), ensure_ascii=False, sort_keys=True, indent=indent)


def copy_events(events: dict[str, EventBinding] | None) -> dict[str, EventBinding] | None:
    if events is None:
        return None
    return {k: EventBinding(e.handler, e.catch, copy_json(e.dataset)) for k, e in events.items()}


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars): no memo, no reducers."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


DOCUMENT_ADAPTER: TypeAdapter[RenderDocument] = TypeAdapter(RenderDocument)


def node_to_plain(node: RenderNode) -> dict[str, Any]:
    """A node as plain JSON data; `events` and `children` only when present."""
    out: dict[str, Any] = {"id": node.id, "type": node.type, "props": node.props, "style": node.style}
    if node.events:
        out["events"] = {
            name: {"handler": e.handler, "catch": e.catch, "dataset": e.dataset} for name, e in node.events.items()
        }
    if node.children is not None:
        out["children"] = [node_to_plain(c) for c in node.children]
    return out


def to_plain(doc: RenderDocument) -> dict[str, Any]:
    return {"version": doc.version, "viewport": doc.viewport.model_dump(mode="json"), "root": node_to_plain(doc.root)}


def json_bytes(value: Any) -> bytes:
    """A plain document (or any JSON value) as the compact UTF-8 JSON a tool result carries: the
    bytes an inline limit counts and an artefact stores."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def from_plain(data: Any) -> RenderDocument:
    """Validate JSON data (e.g. a host's copy) back into a document."""
    return DOCUMENT_ADAPTER.validate_python(data)


def render_ir_schema() -> dict[str, Any]:
    schema = DOCUMENT_ADAPTER.json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "skillc Render IR"
    return schema
