"""Answers to a card's SelectorQuery, and its 2d canvases painted into the preview.

The Component VM (card_query.js) keeps each ``this.createSelectorQuery()...exec()`` waiting until
the card has rendered; then :func:`answer_queries` finds the nodes in the Render IR and answers
each request with the fields it asked for. skillc has no layout engine, so sizes come from the
node's resolved style (px ``width`` / ``height``; a map or canvas without them is 300x150, other
nodes 0) and positions are 0. Selectors are ``#id`` (and ``viewport``); anything else answers
null with a CMPVM030 warning. :func:`paint_canvas` turns one canvas's recorded ops into the
``drawing`` prop the backends show.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from skillc.diagnostics import Diagnostic
from skillc.ir import css_values
from skillc.ir.canvas2d import paint
from skillc.ir.previews import DEFAULT_HEIGHT, DEFAULT_WIDTH, PREVIEW_TAGS, CanvasDrawing
from skillc.ir.render import RenderNode
from skillc.ir.viewport import Viewport

_ID_SELECTOR = re.compile(r"^#([A-Za-z_][\w-]*)$")
MAX_CANVAS_SIDE = 4096


class QueryFields(BaseModel):
    """What one request asks for (``fields({...})``, or the shorthand methods)."""

    id: bool = False
    dataset: bool = False
    rect: bool = False
    size: bool = False
    scrollOffset: bool = False  # WeChat's field name
    node: bool = False
    context: bool = False
    mark: bool = False
    properties: list[str] = Field(default_factory=list)
    computedStyle: list[str] = Field(default_factory=list)  # WeChat's field name


class QueryRequest(BaseModel):
    selector: str
    all: bool = False
    fields: QueryFields = Field(default_factory=QueryFields)


class CanvasRecord(BaseModel):
    """One canvas as the VM reports it: its bitmap size and every op since it was last sized."""

    width: int = Field(ge=0)
    height: int = Field(ge=0)
    ops: list[Any] = Field(default_factory=list)
    capped: bool = False


class PreviewState(BaseModel):
    """The VM's ``previewState()``: the queries waiting for a render, the canvases drawn on."""

    queries: list[list[QueryRequest]] = Field(default_factory=list)
    canvases: dict[str, CanvasRecord] = Field(default_factory=dict)


def parse_state(raw: Any) -> PreviewState | None:
    if raw is None:
        return None
    try:
        return PreviewState.model_validate(raw)
    except ValidationError:
        return None


def _size(node: RenderNode) -> tuple[float, float]:
    width, height = css_values.px(node.style.get("width")), css_values.px(node.style.get("height"))
    default = node.type in PREVIEW_TAGS
    return (
        width if width is not None else (DEFAULT_WIDTH if default else 0),
        height if height is not None else (DEFAULT_HEIGHT if default else 0),
    )


def _dataset(node: RenderNode) -> dict[str, Any]:
    for binding in (node.events or {}).values():
        return binding.dataset
    return {}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


class _Answerer:
    def __init__(self, root: RenderNode, viewport: Viewport, file: str) -> None:
        self.by_id: dict[str, list[RenderNode]] = {}
        for node in root.walk():
            elem_id = node.props.get("id") if node.type != "#text" else None
            if isinstance(elem_id, str) and elem_id:
                self.by_id.setdefault(elem_id, []).append(node)
        self.viewport = viewport
        self.file = file
        self.diagnostics: list[Diagnostic] = []

    def warn(self, message: str) -> None:
        if not any(d.message == message for d in self.diagnostics):
            self.diagnostics.append(Diagnostic.make("CMPVM030", message, file=self.file))

    def fields(self, node: RenderNode, f: QueryFields) -> dict[str, Any]:
        out: dict[str, Any] = {}
        width, height = _size(node)
        if f.id:
            elem_id = node.props.get("id")
            out["id"] = elem_id if isinstance(elem_id, str) else ""
        if f.dataset:
            out["dataset"] = _dataset(node)
        if f.mark:
            out["mark"] = {}
        if f.rect:
            out.update(left=0, top=0, right=_number(width), bottom=_number(height))
        if f.size or f.rect:
            out.update(width=_number(width), height=_number(height))
        if f.scrollOffset:
            out.update(scrollLeft=0, scrollTop=0, scrollWidth=_number(width), scrollHeight=_number(height))
        for name in f.properties:
            out[name] = node.props.get(name)
        for name in f.computedStyle:
            out[name] = node.style.get(name, "")
        if f.node:
            if node.type == "canvas" and node.props.get("type") == "2d":
                # The bitmap starts as large as the element, in CSS px, as in WeChat.
                out["node"] = {"canvas": node.id, "width": int(width), "height": int(height)}
            else:
                out["node"] = None
                if node.type == "canvas":
                    self.warn('SelectorQuery node(): the canvas has no type="2d", so it has no 2d node')
        if f.context:
            out["context"] = {"map": node.id} if node.type == "map" else None
            if node.type == "map":
                self.warn("SelectorQuery context(): the MapContext of a static map preview fails every call")
        return out

    def request(self, r: QueryRequest) -> Any:
        if r.selector.strip() == "viewport":
            vp = self.viewport
            viewport = {"width": vp.width, "height": vp.height, "scrollLeft": 0, "scrollTop": 0}
            return [viewport] if r.all else viewport
        m = _ID_SELECTOR.match(r.selector.strip())
        if m is None:
            self.warn(f'SelectorQuery: "{r.selector[:80]}" is not an #id selector, which is all skillc finds')
            return [] if r.all else None
        found = self.by_id.get(m.group(1), [])
        if r.all:
            return [self.fields(n, r.fields) for n in found]
        return self.fields(found[0], r.fields) if found else None


def answer_queries(
    queries: list[list[QueryRequest]], root: RenderNode, viewport: Viewport, file: str
) -> tuple[list[list[Any]], list[Diagnostic]]:
    """One answer list per query (one entry per request), and the CMPVM030 warnings."""
    answerer = _Answerer(root, viewport, file)
    answers = [[answerer.request(r) for r in query] for query in queries]
    return answers, answerer.diagnostics


def paint_canvas(node_id: str, record: CanvasRecord, file: str) -> tuple[CanvasDrawing | None, list[Diagnostic]]:
    """The canvas's picture (None if painting failed), and a CMPVM030 warning naming what the
    preview left out."""
    width, height = min(record.width, MAX_CANVAS_SIDE), min(record.height, MAX_CANVAS_SIDE)
    try:
        picture = paint(width, height, record.ops)
    except Exception as exc:  # a painter bug on odd ops costs the picture, never the card
        message = f"canvas {node_id}: the preview could not be painted ({type(exc).__name__}: {exc})"
        return None, [Diagnostic.make("CMPVM030", message, file=file)]
    skipped = list(picture.skipped)
    if record.capped:
        skipped.append("every op after the first 20000")
    if record.width > MAX_CANVAS_SIDE or record.height > MAX_CANVAS_SIDE:
        skipped.append(f"the bitmap beyond {MAX_CANVAS_SIDE}px")
    diags = []
    if skipped:
        message = f"canvas {node_id}: the preview leaves out {', '.join(skipped)}"
        diags.append(Diagnostic.make("CMPVM030", message, file=file))
    return picture.drawing(width, height), diags
