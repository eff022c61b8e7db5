"""Evaluation: template IR + data + viewport -> Render IR, and incremental re-evaluation.

A :class:`CardRenderer` renders one card instance. ``render(data)`` evaluates the whole
template; ``update({"drinks[3].price": 18})`` (the setData form) re-evaluates only what reads
the changed paths and returns patches.

How the incremental part works: while rendering, every binding's expression dependencies
(``item.price``) are resolved to absolute data paths (``drinks.3.price``) through the loop
scopes and registered in a trie of watchers (:mod:`skillc.ir.watch`). A change looks up its path
in the trie: the watchers on its prefixes (they read an enclosing object) and in its subtree
(they read something inside). Value watchers recompute one node's text, props, style or events;
structural watchers (wx:if, wx:for, template calls) first check whether the structure really
changed (another branch, other keys) and only then re-render their parent element's children
and diff them. So a one-field change costs the same whatever the length of the list around it.
What is kept per element and text node to do so is in :mod:`skillc.ir.instance`.

Node ids: the template position of the node, with ``[key]`` after each enclosing wx:for's
position (``0.1.0[d03].2``); keys come from ``wx:key`` (or the index without one).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.expr import UNDEFINED, Mustache, dependencies
from skillc.gcpause import collector_paused
from skillc.ir.component import CompiledComponent
from skillc.ir.datapath import DataPath, PathIndexError, merge_data, normalise
from skillc.ir.diff import Patch, SetProp, SetText, diff, diff_shallow
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.instance import Elem, ElemInfo, Frame, Ids, TextRun
from skillc.ir.jsvalue import JSValue, get_member, to_boolean, to_string, to_text
from skillc.ir.previews import PREVIEW_TAGS, CanvasDrawing, normalise_map_props
from skillc.ir.render import RENDER_IR_VERSION, TEXT, EventBinding, RenderDocument, RenderNode, copy_json
from skillc.ir.styles import CompiledStylesheet, ElementKey, StyleResolver, inherited_part
from skillc.ir.template import Binding, Block, Element, For, IfChain, Node, Part, TemplateCall, Text
from skillc.ir.viewport import Viewport
from skillc.ir.watch import INDEX, Dep, Trie, Watch, alive, deps_of, resolve

__all__ = ["MAX_TEMPLATE_DEPTH", "ROOT_ID", "CardRenderer", "RenderLimitExceeded", "RenderLimits"]

ROOT_ID = "root"
# Template calls deeper than this stop expanding (a template may call itself).
MAX_TEMPLATE_DEPTH = 32


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """How much work one card's data may cause in Python. The runtime maps its RuntimeConfig to
    this (``card_max_*``); the defaults are the same numbers (docs/security.md, "Limits")."""

    max_nodes: int = 20_000  # Render IR nodes (elements and text runs) per card; wx:for items per pass
    max_template_expansions: int = 10_000  # <template is> expansions per render pass
    max_for_number: int = 20_000  # wx:for over a number n iterates 0..n-1 up to this n
    max_data_index: int = 100_000  # the largest array index a setData path may name


class RenderLimitExceeded(Exception):
    """A render pass went over one of the :class:`RenderLimits`; rendering stopped there."""

    def __init__(self, code: str, message: str, span: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span


def _escape_key(key: str) -> str:
    return key.replace("\\", "\\\\").replace("]", "\\]")


class CardRenderer:
    """Renders one card instance and keeps what an incremental update needs."""

    def __init__(
        self,
        component: CompiledComponent,
        viewport: Viewport | None = None,
        *,
        sink: DiagnosticSink | None = None,
        limits: RenderLimits | None = None,
    ) -> None:
        self.component = component
        self.limits = limits or RenderLimits()
        # The node budget left (one decrement per node) and the template expansions left in
        # this pass; ``exceeded`` is the limit the last render or update went over, else None.
        self._nodes_left = self.limits.max_nodes
        self._expansions_left = self.limits.max_template_expansions
        self._items_left = self.limits.max_nodes  # wx:for items walked in this pass (bodies may be empty)
        self.exceeded: RenderLimitExceeded | None = None
        self.viewport = viewport or Viewport()
        self.sink = sink
        self.styles = _resolver(component.stylesheet, self.viewport)
        self.data: dict[str, Any] = {}
        self._trie = Trie()
        self._registered = 0
        self._live_after_compact = 0
        # Per template node (by identity): its static parts and dependencies. Shared through the
        # component by every card rendered from it.
        self._cache: dict[int, Any] = component.render_cache
        self._track = True
        self._root: Elem | None = None
        self._reported: set[tuple[str, str]] = set()
        self._template_depth = 0
        # What the card painted on each canvas (by node id), through the Component VM's 2d
        # context: kept here so a re-render of the canvas element keeps its picture.
        self.drawings: dict[str, CanvasDrawing] = {}

    # -- public -------------------------------------------------------------------------

    @property
    def rendered(self) -> bool:
        """Whether :meth:`render` has run (``document`` is there)."""
        return self._root is not None

    @property
    def document(self) -> RenderDocument:
        if self._root is None:
            raise RuntimeError("render() first")
        return RenderDocument(RENDER_IR_VERSION, self.viewport, self._root.node)

    def element_classes(self) -> dict[str, tuple[str, ...]]:
        """The class names of every element of the last render, by node id. The Render IR keeps
        only resolved styles; a tree printed in WXML's own notation needs the names."""
        found: dict[str, tuple[str, ...]] = {}
        stack = [self._root] if self._root is not None else []
        while stack:
            elem = stack.pop()
            found[elem.node.id] = elem.key.classes
            stack.extend(k for k in elem.kids if isinstance(k, Elem))
        return found

    def render(self, data: Mapping[str, Any]) -> RenderDocument:
        """A full render from JSON-like data (copied: the caller's object is not kept).

        A render that goes over a :class:`RenderLimits` limit stops: the error is reported, kept
        in ``exceeded``, and the document is the empty root (the runtime falls back)."""
        self.data = copy_json(dict(data))
        self._trie = Trie()
        self._registered = self._live_after_compact = 0
        self.exceeded = None
        self._nodes_left = self._items_left = self.limits.max_nodes
        self._expansions_left = self.limits.max_template_expansions
        node = RenderNode(ROOT_ID, "view", {}, {}, None, [])
        root = Elem(None, node, None, Frame(Scope(self.data), {}, True, Ids("", "")))
        root.tchildren = self.component.template.root
        self._root = root
        try:
            with collector_paused:
                node.children = self._render_children(root)
        except RenderLimitExceeded as exc:
            self._exceed(exc)
            self._trie = Trie()
            root.kids = []
            node.children = []
            self._nodes_left = self.limits.max_nodes
        return self.document

    def update(self, changes: Mapping[str, Any]) -> list[Patch]:
        """Apply a setData object and return the patches of the re-render.

        An update that goes over a limit stops: the error is reported and kept in ``exceeded``,
        and the renderer must be given a full :meth:`render` again (the runtime renders the
        card's last good data)."""
        if self._root is None:
            self.render({})
        self.exceeded = None
        self._expansions_left = self.limits.max_template_expansions
        self._items_left = self.limits.max_nodes
        try:
            with collector_paused:
                return self._update(changes)
        except RenderLimitExceeded as exc:
            self._exceed(exc)
            return []

    def set_drawing(self, node_id: str, drawing: CanvasDrawing) -> list[Patch]:
        """Show ``drawing`` on the canvas node ``node_id`` (now and on later renders); the patch
        that sets its ``drawing`` prop, or none when no canvas has that id or nothing changed."""
        self.drawings[node_id] = drawing
        node = self._root.node.find(node_id) if self._root is not None else None
        if node is None or node.type != "canvas":
            return []
        value = drawing.model_dump()
        if node.props.get("drawing") == value:
            return []
        node.props = {**node.props, "drawing": value}
        return [SetProp(node_id, "drawing", copy_json(value))]

    def _exceed(self, exc: RenderLimitExceeded) -> None:
        self.exceeded = exc
        if self.sink is not None:
            self.sink.emit(exc.code, exc.message, file=self.component.template.file, span=exc.span)

    def _update(self, changes: Mapping[str, Any]) -> list[Patch]:
        # Merged in place: loop scopes hold references to items, and replacing a list by one with
        # the same keys then costs only the leaves that really differ.
        try:
            paths = merge_data(self.data, copy_json(dict(changes)), max_index=self.limits.max_data_index)
        except PathIndexError as err:
            raise RenderLimitExceeded(
                "RND008", f"{err} (the limit is {self.limits.max_data_index}); the update was refused"
            ) from None
        found: dict[int, Watch] = {}
        for path in paths:
            self._trie.collect(path, found)
        # Shallow structure first: re-rendering it kills the watchers beneath, which then skip.
        structural = sorted((w for w in found.values() if w.kind in ("if", "for", "call")), key=_depth)
        patches: list[Patch] = []
        for w in structural:
            owner = w.owner
            if not alive(w) or not isinstance(owner, Elem):
                continue
            if not self._structure_changed(w, paths):
                continue
            self._rerender_children(owner, patches)
        for w in found.values():
            if not alive(w):
                continue
            if w.kind == "text":
                assert isinstance(w.owner, TextRun)
                self._refresh_text(w.owner, patches)
            elif w.kind == "elem":
                assert isinstance(w.owner, Elem)
                self._refresh_element(w.owner, patches)
        # Re-renders leave dead watchers behind under paths nobody changed; sweep them once
        # they outnumber the live ones, so memory stays flat over any number of updates.
        if self._registered > 2 * self._live_after_compact + 1024:
            self._live_after_compact = self._trie.compact()
            self._registered = 0
        return patches

    # -- rendering ------------------------------------------------------------------------

    def _render_children(self, inst: Elem) -> list[RenderNode]:
        out: list[RenderNode] = []
        f = inst.frame
        render = _RENDER
        for t in inst.tchildren:
            render[type(t)](self, t, inst, f, out)
        return out

    def _render_text(self, t: Text, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        self._nodes_left -= 1
        if self._nodes_left < 0:
            self._too_many_nodes(t)
        scope = f.scope
        node = RenderNode(f.ids.of(t.path), TEXT, {"text": self._text(t.parts, scope)}, parent.style.text_style())
        run = TextRun(t, node, scope)
        parent.kids.append(run)
        if self._track:
            deps = self._cache.get(id(t))  # the common case inline: text nodes are the most numerous
            if deps is None:
                deps = self._deps(t)
            if deps:
                self._watch(deps, Watch("text", run), f)
        out.append(node)

    def _render_if(self, t: IfChain, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        index = self._branch(t, f.scope)
        if self._track:
            w = Watch("if", parent, t, parent.structure())
            w.state = index
            w.scope = f.scope
            for b in t.branches:
                if b.test is not None:
                    self._watch_parts(b.test, w, f)
        if index >= 0:
            node = t.branches[index].node
            _RENDER[type(node)](self, node, parent, f, out)

    def _render_block(self, t: Block, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        render = _RENDER
        for c in t.children:
            render[type(c)](self, c, parent, f, out)

    def _render_element(self, t: Element, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        self._nodes_left -= 1
        if self._nodes_left < 0:
            self._too_many_nodes(t)
        node = RenderNode(f.ids.of(t.path), t.tag, {}, {}, None, [])
        inst = Elem(t, node, parent, f)
        parent.kids.append(inst)
        info = self._info(t)
        self._fill_element(inst, info, self._bound_values(info, f.scope))
        if self._track and info.deps:
            self._watch(info.deps, Watch("elem", inst), f)
        if t.children:
            node.children = self._render_children(inst)
        out.append(node)

    def _too_many_nodes(self, t: Node) -> None:
        n = self.limits.max_nodes
        raise RenderLimitExceeded("RND005", f"the card renders more than {n} nodes (the limit is {n})", t.span)

    def _info(self, t: Element) -> ElemInfo:
        info: ElemInfo | None = self._cache.get(id(t))
        if info is None:
            info = self._cache[id(t)] = ElemInfo(t)
        return info

    def _bound_values(self, info: ElemInfo, scope: Scope) -> tuple[JSValue, ...]:
        """Every bound value of an element, in the order :meth:`_fill_element` reads them: the
        attributes, then (with events) the bound dataset entries and handler names."""
        values: list[JSValue] = [
            evaluate(expr, scope) if expr is not None else self._value(b, scope) for _, b, expr in info.bound
        ]
        if info.events:
            values.extend(self._value(raw, scope) for _, raw in info.dataset if isinstance(raw, Binding))
            values.extend(self._value(e.handler, scope) for e in info.events if not isinstance(e.handler, str))
        return tuple(values)

    def _fill_element(self, inst: Elem, info: ElemInfo, values: tuple[JSValue, ...]) -> None:
        """Props, events, the style key and the style of an element, from its bound values."""
        t = inst.tnode
        assert t is not None
        node = inst.node
        props = dict(info.props) if info.props else {}
        classes = info.classes
        elem_id = info.elem_id
        inline = info.inline
        hover = info.hover
        taken = iter(values)
        for name, _, _ in info.bound:
            bound = next(taken)
            if name == "class":
                classes = to_text(bound)
            elif name == "style":
                inline = to_text(bound)
            elif name == "id":
                elem_id = to_text(bound) or None
                props["id"] = elem_id
            elif name == "hover-class":
                hover = to_text(bound)
            elif bound is not UNDEFINED:
                props[name] = _plain(bound)
        if info.events:
            dataset: dict[str, Any] = {}
            for key, raw in info.dataset:
                v: Any = next(taken) if isinstance(raw, Binding) else raw
                if v is not UNDEFINED:
                    dataset[key] = _plain(v)
            events = {}
            for e in info.events:
                handler = e.handler if isinstance(e.handler, str) else to_text(next(taken))
                if handler:
                    events[e.name] = EventBinding(handler, e.catch, dataset)
            node.events = events or None
        if t.tag in PREVIEW_TAGS:
            props = self._preview_props(t.tag, node.id, props)
        inst.sig = values
        inst.key = _element_key(t.tag, elem_id, classes)
        inst.below = None
        inst.inline = inline
        inst.hover = hover or None
        node.props = props
        self._apply_style(inst, props)

    def _preview_props(self, tag: str, node_id: str, props: dict[str, Any]) -> dict[str, Any]:
        """map: typed centre and markers; canvas: the picture the card painted, never an
        authored ``drawing`` attribute (docs/render-ir.md, "map and canvas")."""
        if tag == "map":
            return normalise_map_props(props)
        props.pop("drawing", None)
        drawing = self.drawings.get(node_id)
        if drawing is not None:
            props["drawing"] = drawing.model_dump()
        return props

    def _apply_style(self, inst: Elem, fresh_props: dict[str, Any] | None = None) -> None:
        """Resolve the element's style (and hover style) from its key, ancestors and parent.

        ``fresh_props``: the element's props when they were just made (a fill), so the hover
        style goes into them; otherwise the props may be what a patch compares against, and the
        element gets a copy."""
        parent_style = inst.pstyle
        style = self.styles.resolve(inst.ancestors, inst.key, inst.inline, parent_style)
        inst.style = style
        inst.node.style = style  # read-only and shared between elements (styles.ResolvedStyle)
        if inst.hover:
            key = inst.key
            hovered = ElementKey(key.tag, key.id, (*key.classes, *inst.hover.split()))
            hover = style.changes_to(self.styles.resolve(inst.ancestors, hovered, inst.inline, parent_style))
            if fresh_props is not None:
                fresh_props["hoverStyle"] = hover
            else:
                inst.node.props = {**inst.node.props, "hoverStyle": hover}

    def _render_for(self, t: For, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        mustache = t.items.single
        scope, paths = f.scope, f.paths
        items_value = self._value(t.items, scope)
        items_path = self._abs_path(mustache, f) if mustache is not None else None
        if self._track:
            w = Watch("for", parent, t, parent.structure())
            w.items_path = items_path
            self._watch_parts(t.items, w, f)
        base = f.ids.of(t.path)
        body = t.body
        render = _RENDER[type(body)]
        seen: set[str] = set()
        # Walked lazily: the budgets stop a long list (or string) before it is all copied out.
        for index, (label, item) in enumerate(_iterate(items_value, t, self.limits.max_for_number)):
            self._items_left -= 1
            if self._items_left < 0:
                n = self.limits.max_nodes
                raise RenderLimitExceeded(
                    "RND005", f"wx:for walks more than {n} items in one render (the limit is {n})", t.span
                )
            key = self._key(t, item, index, seen)
            child_scope = scope.child({t.item: item, t.index: label})
            item_path = (*items_path, normalise((label,))[0]) if items_path is not None else None
            child_paths = {**paths, t.item: item_path, t.index: INDEX}
            child_ids = Ids(f"{t.path}.0", f"{base}[{_escape_key(key)}]")
            render(self, body, parent, Frame(child_scope, child_paths, f.root_known, child_ids), out)

    def _key(self, t: For, item: JSValue, index: int, seen: set[str]) -> str:
        if t.key is None:
            key = str(index)
        elif t.key == "*this":
            key = to_string(item)
        else:
            value = get_member(item, t.key)
            key = str(index) if value is UNDEFINED or value is None else to_string(value)
        if key in seen:
            self._report(
                "RND001",
                f'wx:key "{t.key}" gives the same key "{key}" twice; falling back to the index',
                t,
            )
            key = f"#{index}"
        seen.add(key)
        return key

    def _render_call(self, t: TemplateCall, parent: Elem, f: Frame, out: list[RenderNode]) -> None:
        if self._track:
            w = Watch("call", parent, t, parent.structure())
            if isinstance(t.name, Binding):
                self._watch_parts(t.name, w, f)
            if t.data is not None:
                self._watch_parts(t.data, w, f)
        data: JSValue = evaluate(t.data.expr, f.scope) if t.data is not None and t.data.expr is not None else {}
        # A template sees only the data it is given, so nothing inside is watched one by one:
        # the call's own watcher re-renders it when that data changes.
        inner_scope = Scope(data if isinstance(data, dict) else {})
        if t.body is not None:
            body, inner_ids = t.body, f.ids
        else:
            name = t.name if isinstance(t.name, str) else to_text(self._value(t.name, f.scope))
            found = self.component.template.templates.get(name)
            if found is None:
                # As wcc: nothing renders there. A static name was reported by lowering (TPL015).
                if not isinstance(t.name, str):
                    self._report("RND002", f'no <template name="{name}"> to render', t)
                return
            if self._template_depth >= MAX_TEMPLATE_DEPTH:
                self._report("RND003", f'template "{name}" nests deeper than {MAX_TEMPLATE_DEPTH} calls', t)
                return
            self._expansions_left -= 1
            if self._expansions_left < 0:
                n = self.limits.max_template_expansions
                raise RenderLimitExceeded(
                    "RND006",
                    f'template "{name}" is expanded more than {n} times in one render (the limit is {n})',
                    t.span,
                )
            body, inner_ids = found.children, Ids("", f.ids.of(t.path) + ".")
        inner = Frame(inner_scope, {}, False, inner_ids)
        track = self._track
        self._track = False
        self._template_depth += 1
        try:
            render = _RENDER
            for c in body:
                render[type(c)](self, c, parent, inner, out)
        finally:
            self._track = track
            self._template_depth -= 1

    # -- values ---------------------------------------------------------------------------

    def _value(self, binding: Binding, scope: Scope) -> JSValue:
        single = binding.single
        if single is not None:
            return evaluate(single.expr, scope) if single.expr is not None else UNDEFINED
        return self._text(binding.parts, scope)

    @staticmethod
    def _text(parts: tuple[Part, ...], scope: Scope) -> str:
        if len(parts) == 1:
            p = parts[0]
            if isinstance(p, str):
                return p
            return to_text(evaluate(p.expr, scope)) if p.expr is not None else ""
        return "".join(
            p if isinstance(p, str) else (to_text(evaluate(p.expr, scope)) if p.expr is not None else "") for p in parts
        )

    def _branch(self, t: IfChain, scope: Scope) -> int:
        for i, b in enumerate(t.branches):
            if b.test is None or to_boolean(self._value(b.test, scope)):
                return i
        return -1

    # -- dependencies ---------------------------------------------------------------------

    def _abs_path(self, m: Mustache, f: Frame) -> DataPath | None:
        """The absolute data path of a mustache that is a plain path, else None."""
        deps = dependencies(m.expr) if m.expr is not None else frozenset()
        if len(deps) != 1:
            return None
        (dep,) = deps
        return resolve(dep[0], normalise(dep[1:]), f.paths, f.root_known)

    def _deps(self, source: Text | Binding | Mustache) -> tuple[Dep, ...]:
        # Cached by the identity of a template object, which lives as long as the template.
        deps: tuple[Dep, ...] | None = self._cache.get(id(source))
        if deps is None:
            deps = self._cache[id(source)] = deps_of((source,) if isinstance(source, Mustache) else source.parts)
        return deps

    def _watch_parts(self, source: Binding | Mustache, watch: Watch, f: Frame) -> None:
        self._watch(self._deps(source), watch, f)

    def _watch(self, deps: tuple[Dep, ...], watch: Watch, f: Frame) -> None:
        """Register ``watch`` under the absolute data path of each dependency."""
        trie = self._trie
        paths, root_known = f.paths, f.root_known
        for head, rest in deps:
            path = resolve(head, rest, paths, root_known)
            if path is not None:
                trie.add(path, watch)
                self._registered += 1

    # -- incremental ----------------------------------------------------------------------

    def _structure_changed(self, w: Watch, paths: list[DataPath]) -> bool:
        if w.kind == "if":
            owner = w.owner
            assert isinstance(owner, Elem) and isinstance(w.tnode, IfChain)
            previous: int = w.state
            assert w.scope is not None
            return self._branch(w.tnode, w.scope) != previous
        if w.kind == "for" and w.items_path is not None:
            p = w.items_path
            n = len(p)
            for c in paths:
                if c[:n] != p:
                    if p[: len(c)] == c:
                        return True  # the list or something holding it was replaced
                    continue
                if len(c) <= n + 1:
                    return True  # the list itself, or one whole item
                key: str | None = w.tnode.key if isinstance(w.tnode, For) else None
                if key is not None and key != "*this" and c[n + 1] == key:
                    return True
            return False
        return True

    def _rerender_children(self, inst: Elem, patches: list[Patch]) -> None:
        before = RenderNode(
            inst.node.id, inst.node.type, inst.node.props, inst.node.style, inst.node.events, inst.node.children
        )
        inst.kill()
        inst.end_structure()
        inst.kids = []
        if before.children:
            self._nodes_left += _count(before.children)  # the old subtree's nodes go back to the budget
        inst.node.children = self._render_children(inst)
        patches.extend(diff(before, inst.node))

    def _refresh_text(self, run: TextRun, patches: list[Patch]) -> None:
        text = self._text(run.tnode.parts, run.scope)
        if run.node.props.get("text") != text:
            run.node.props["text"] = text
            patches.append(SetText(run.node.id, text))

    def _refresh_element(self, inst: Elem, patches: list[Patch]) -> None:
        assert inst.tnode is not None
        info = self._info(inst.tnode)
        values = self._bound_values(info, inst.frame.scope)
        if inst.sig is not None and _same(values, inst.sig):
            return  # what it reads changed elsewhere (another item's field): nothing to redo
        node = inst.node
        # _fill_element replaces props, style and events with new objects: no copies needed.
        before = RenderNode(node.id, node.type, node.props, node.style, node.events)
        old_key, old_inherited = inst.key, inherited_part(inst.style)
        self._fill_element(inst, info, values)
        patches.extend(diff_shallow(before, node))
        if inst.key != old_key or inherited_part(inst.style) != old_inherited:
            self._restyle_kids(inst, patches)
        else:
            # Nothing a child sees changed, but `inherit` may read any property of the parent's
            # style object when the child is recomputed later: keep the children's copy current.
            for kid in inst.kids:
                if isinstance(kid, Elem):
                    kid.pstyle = inst.style if inst.depth else None

    def _restyle_kids(self, inst: Elem, patches: list[Patch]) -> None:
        """A class or inherited style changed: descendants may match other rules now."""
        for kid in inst.kids:
            node = kid.node
            before = RenderNode(node.id, node.type, node.props, node.style, node.events)
            if isinstance(kid, TextRun):
                node.style = inst.style.text_style()
            else:
                kid.ancestors = inst.inner_ancestors()
                kid.pstyle = inst.style if inst.depth else None
                kid.below = None
                self._apply_style(kid)
            patches.extend(diff_shallow(before, node))
            if isinstance(kid, Elem):
                self._restyle_kids(kid, patches)

    def _report(self, code: str, message: str, t: Node) -> None:
        if self.sink is None or (code, message) in self._reported:
            return
        self._reported.add((code, message))
        self.sink.emit(code, message, file=self.component.template.file, span=t.span)


# The renderer of each template node type, as expreval dispatches on expression types.
_RENDER: dict[type[Node], Callable[[CardRenderer, Any, Elem, Frame, list[RenderNode]], None]] = {
    Element: CardRenderer._render_element,
    Text: CardRenderer._render_text,
    IfChain: CardRenderer._render_if,
    For: CardRenderer._render_for,
    Block: CardRenderer._render_block,
    TemplateCall: CardRenderer._render_call,
}

_EMPTY_SHEET = CompiledStylesheet.model_validate(
    {"blocks": [], "selectors": [], "by_id": {}, "by_class": {}, "by_tag": {}}
)
_resolvers = threading.local()


def _resolver(sheet: CompiledStylesheet | None, viewport: Viewport) -> StyleResolver:
    """One resolver per stylesheet and viewport per thread: its match cache then serves every
    card rendered from the same component (resolvers are not thread-safe, hence per thread)."""
    sheet = sheet or _EMPTY_SHEET
    cache: dict[tuple[int, Viewport], tuple[CompiledStylesheet, StyleResolver]] | None = getattr(
        _resolvers, "cache", None
    )
    if cache is None:
        cache = _resolvers.cache = {}
    hit = cache.get((id(sheet), viewport))
    if hit is not None and hit[0] is sheet:
        return hit[1]
    if len(cache) >= 64:
        cache.clear()
    resolver = StyleResolver(sheet, viewport)
    cache[(id(sheet), viewport)] = (sheet, resolver)
    return resolver


# Element keys are interned: the items of a list share a handful of keys, and one shared
# object instead of one per element is less for the allocator and the cycle collector.
_KEYS: dict[tuple[str, str | None, str], ElementKey] = {}
_KEYS_LIMIT = 4096


def _element_key(tag: str, elem_id: str | None, classes: str) -> ElementKey:
    found = _KEYS.get((tag, elem_id, classes))
    if found is None:
        if len(_KEYS) >= _KEYS_LIMIT:
            _KEYS.clear()
        found = _KEYS[(tag, elem_id, classes)] = ElementKey(tag, elem_id, tuple(classes.split()) if classes else ())
    return found


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    # Python's 1 == True == 1.0; a template prints them differently, so compare types too.
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b, strict=True))


def _depth(w: Watch) -> int:
    owner = w.owner
    return owner.depth if isinstance(owner, Elem) else 0


def _count(nodes: list[RenderNode]) -> int:
    n = 0
    stack = list(nodes)
    while stack:
        node = stack.pop()
        n += 1
        if node.children:
            stack.extend(node.children)
    return n


def _iterate(value: JSValue, t: For, limit: int) -> Iterator[tuple[str | int, JSValue]]:
    """What wx:for walks: arrays by index, objects by key, strings by character, n as 0..n-1
    (a number above ``limit`` stops the render, as WeChat would try to render n items)."""
    if isinstance(value, list):
        yield from enumerate(value)
    elif isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, str):
        yield from enumerate(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        if value > limit:
            shown = int(value) if value <= 2**53 and value == int(value) else value
            raise RenderLimitExceeded(
                "RND007", f"wx:for over the number {shown} would render {shown} items (the limit is {limit})", t.span
            )
        for i in range(int(value)):
            yield i, i


def _plain(value: JSValue) -> Any:
    """JSON data for the Render IR, as JSON.stringify would make it: undefined is dropped from
    objects and null in arrays, NaN and the infinities are null."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, list):
        return [None if v is UNDEFINED else _plain(v) for v in value]
    if value is UNDEFINED or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value
