"""Template IR: a component's WXML after lowering, ready for evaluation against data.

Directives are structure here: ``wx:if/elif/else`` is an :class:`IfChain`, ``wx:for`` a
:class:`For`, ``<block>`` a :class:`Block`; ``<include>`` is spliced in and a ``<template
is>`` with a static name is expanded in place. Every node carries ``path``, its position in
the template ("0.2.1"): child ``i`` of the node at ``P`` is ``P.i``, branch ``i`` of an if
chain at ``P`` is ``P.i``, the body of a loop at ``P`` is ``P.0``. The Render IR builds its
stable node ids from these paths plus the ``wx:key`` of each enclosing loop.

Attribute values keep their mustaches as :class:`~skillc.frontend.expr.Mustache` (source,
parsed expression, span). A value that is exactly one mustache keeps the expression's value
(``{{true}}`` is the boolean); a mixed value concatenates as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from skillc.diagnostics import Span
from skillc.frontend.expr import Mustache

TEMPLATE_IR_VERSION = 1

# Built-in components a card renders, and the ones the AI-mode spec allows that skillc shows
# only as static previews (skillc.ir.previews; lowering notes them with TPL002).
RENDERED_TAGS = frozenset({"view", "text", "image", "button", "scroll-view", "collapsible-view"})
SPEC_ONLY_TAGS = frozenset({"map", "canvas"})

Part = str | Mustache


@dataclass(frozen=True, slots=True)
class Binding:
    """An attribute value that holds at least one mustache."""

    parts: tuple[Part, ...]

    @property
    def single(self) -> Mustache | None:
        """The mustache when the value is exactly one (its value keeps its type), else None."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Mustache):
            return self.parts[0]
        return None


@dataclass(frozen=True, slots=True)
class Event:
    """``bind<name>``/``bind:<name>``/``catch<name>``/``catch:<name>``, normalised; lowering keeps
    only the events :mod:`skillc.ir.events` lists for the element's tag."""

    name: str  # a key of skillc.ir.events.CARD_EVENTS
    catch: bool
    handler: str | Binding  # a method name, or a mustache naming one at render time
    attribute: str  # as written, for messages
    span: Span


@dataclass(slots=True)
class Element:
    path: str
    tag: str
    span: Span
    # Static attribute values; True for an attribute written without a value (<view hidden>).
    attrs: dict[str, str | bool] = field(default_factory=dict)
    bindings: dict[str, Binding] = field(default_factory=dict)
    # data-* attributes by dataset key (data-order-id -> orderId), static or bound.
    dataset: dict[str, str | Binding] = field(default_factory=dict)
    events: tuple[Event, ...] = ()
    children: list[Node] = field(default_factory=list)


@dataclass(slots=True)
class Text:
    path: str
    parts: tuple[Part, ...]
    span: Span


@dataclass(slots=True)
class Branch:
    kind: Literal["if", "elif", "else"]
    test: Binding | None  # None for else
    node: Node
    span: Span


@dataclass(slots=True)
class IfChain:
    path: str
    branches: list[Branch]
    span: Span


@dataclass(slots=True)
class For:
    path: str
    items: Binding
    item: str
    index: str
    key: str | None  # "*this", a property name of each item, or None (no wx:key)
    body: Node
    span: Span


@dataclass(slots=True)
class Block:
    path: str
    children: list[Node]
    span: Span


@dataclass(slots=True)
class TemplateCall:
    """``<template is="name" data="{{...}}"/>``.

    A static name found at compile time is expanded into ``body``. A computed name
    (``is="{{kind}}"``), or a template that calls itself, keeps ``body`` None and is looked
    up in :attr:`Template.templates` when rendering.
    """

    path: str
    name: str | Binding
    data: Mustache | None  # the brace-less object form, parsed with object_form=True
    body: list[Node] | None
    span: Span


@dataclass(slots=True)
class TemplateDef:
    """``<template name>``; its nodes' paths are relative: a call at P renders child i as P.i."""

    name: str
    file: str
    children: list[Node]
    span: Span


Node = Element | Text | IfChain | For | Block | TemplateCall


@dataclass(slots=True)
class Template:
    file: str  # the component's index.wxml, relative to the skill root
    root: list[Node]
    templates: dict[str, TemplateDef] = field(default_factory=dict)
    # Files read through <import>/<include>, in the order they were first read.
    dependencies: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """Versioned, plain JSON (what `skillc build` writes and golden tests compare)."""
        return {
            "version": TEMPLATE_IR_VERSION,
            "file": self.file,
            "dependencies": list(self.dependencies),
            "templates": {name: _def_json(d) for name, d in sorted(self.templates.items())},
            "root": [node_json(n) for n in self.root],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2)


# -- JSON ----------------------------------------------------------------------------------


def span_json(span: Span) -> str:
    """``"line:column-end_line:end_column"``: one short string per node keeps golden files readable."""
    return f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"


def _mustache_json(m: Mustache) -> dict[str, object]:
    out: dict[str, object] = {"expr": m.source, "span": span_json(m.span)}
    if m.expr is None:
        out["invalid"] = True
    return out


def parts_json(parts: tuple[Part, ...]) -> list[object]:
    return [p if isinstance(p, str) else _mustache_json(p) for p in parts]


def _value_json(value: str | bool | Binding) -> object:
    return parts_json(value.parts) if isinstance(value, Binding) else value


def _def_json(d: TemplateDef) -> dict[str, object]:
    return {"file": d.file, "span": span_json(d.span), "children": [node_json(n) for n in d.children]}


def node_json(node: Node) -> dict[str, object]:
    if isinstance(node, Element):
        out: dict[str, object] = {"element": node.tag, "path": node.path, "span": span_json(node.span)}
        if node.attrs:
            out["attrs"] = dict(node.attrs)
        if node.bindings:
            out["bindings"] = {k: parts_json(v.parts) for k, v in node.bindings.items()}
        if node.dataset:
            out["dataset"] = {k: _value_json(v) for k, v in node.dataset.items()}
        if node.events:
            out["events"] = [
                {"event": e.name, "catch": e.catch, "handler": _value_json(e.handler), "attribute": e.attribute}
                for e in node.events
            ]
        if node.children:
            out["children"] = [node_json(c) for c in node.children]
        return out
    if isinstance(node, Text):
        return {"text": parts_json(node.parts), "path": node.path, "span": span_json(node.span)}
    if isinstance(node, IfChain):
        return {
            "if": [
                {
                    "kind": b.kind,
                    "test": parts_json(b.test.parts) if b.test is not None else None,
                    "node": node_json(b.node),
                }
                for b in node.branches
            ],
            "path": node.path,
            "span": span_json(node.span),
        }
    if isinstance(node, For):
        return {
            "for": parts_json(node.items.parts),
            "item": node.item,
            "index": node.index,
            "key": node.key,
            "path": node.path,
            "span": span_json(node.span),
            "body": node_json(node.body),
        }
    if isinstance(node, Block):
        return {"block": [node_json(c) for c in node.children], "path": node.path, "span": span_json(node.span)}
    return {
        "template": node.name if isinstance(node.name, str) else parts_json(node.name.parts),
        "data": _mustache_json(node.data) if node.data is not None else None,
        "path": node.path,
        "span": span_json(node.span),
        "body": [node_json(c) for c in node.body] if node.body is not None else None,
    }
