"""Evaluation: template IR + data + viewport -> Render IR, and incremental re-evaluation.

A :class:`CardRenderer` renders one card instance. ``render(data)`` evaluates the whole
template; ``update({"drinks[3].price": 18})`` (the setData form) re-evaluates only what reads
the changed paths and returns patches.

How the incremental part works: while rendering, every binding's expression dependencies
(``item.price``) are resolved to absolute data paths (``drinks.3.price``) through the loop
scopes and registered in a trie of watchers. A change looks up its path in the trie: the
watchers on its prefixes (they read an enclosing object) and in its subtree (they read
something inside). Value watchers recompute one node's text, props, style or events; structural
watchers (wx:if, wx:for, template calls) first check whether the structure really changed
(another branch, other keys) and only then re-render their parent element's children and diff
them. So a one-field change costs the same whatever the length of the list around it.

Node ids: the template position of the node, with ``[key]`` after each enclosing wx:for's
position (``0.1.0[d03].2``); keys come from ``wx:key`` (or the index without one).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.expr import UNDEFINED, Expr, Mustache, dependencies
from skillc.ir.component import CompiledComponent
from skillc.ir.datapath import DataPath, merge_data, normalise
from skillc.ir.diff import Patch, SetText, diff, diff_shallow
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.jsvalue import JSValue, get_member, to_boolean, to_string, to_text
from skillc.ir.render import RENDER_IR_VERSION, TEXT, EventBinding, RenderDocument, RenderNode, copy_json
from skillc.ir.styles import CompiledStylesheet, ElementKey, ResolvedStyle, StyleResolver, inherited_part
from skillc.ir.template import Binding, Block, Element, For, IfChain, Node, Part, TemplateCall, Text
from skillc.ir.viewport import Viewport

ROOT_ID = "root"
# Template calls deeper than this stop expanding (a template may call itself).
MAX_TEMPLATE_DEPTH = 32

# A loop variable resolves to an absolute data path, to None (unknown: the items were computed)
# or to _INDEX (the loop index: only a structural change can change it).
_INDEX = ("<index>",)
PathScope = Mapping[str, DataPath | None]


class _Ids:
    """Maps template paths to node ids inside loop instances and template calls."""

    __slots__ = ("rprefix", "tprefix")

    def __init__(self, tprefix: str, rprefix: str) -> None:
        self.tprefix = tprefix
        self.rprefix = rprefix

    def of(self, path: str) -> str:
        return self.rprefix + path[len(self.tprefix) :]


Dep = tuple[str | int, tuple[str | int, ...]]  # (head name, normalised rest); "length" folded


def _deps_of(parts: tuple[Part, ...]) -> tuple[Dep, ...]:
    out: list[Dep] = []
    for p in parts:
        if isinstance(p, str) or p.expr is None:
            continue
        for dep in dependencies(p.expr):
            rest = normalise(dep[1:])
            if rest and rest[-1] == "length":
                rest = rest[:-1]  # a length changes with any element added or removed
            elif not rest and dep[0] == "length":
                continue
            out.append((dep[0], rest))
    return tuple(dict.fromkeys(out))


def _single_expr(b: Binding) -> Expr | None:
    single = b.single
    return single.expr if single is not None else None


class _ElemInfo:
    """What an element's template node says once and for all, split static / bound."""

    __slots__ = ("bound", "classes", "dataset", "deps", "elem_id", "events", "hover", "inline", "props")

    def __init__(self, t: Element) -> None:
        self.props: dict[str, Any] = {}
        self.classes = ""
        self.elem_id: str | None = None
        self.inline: str | None = None
        self.hover: str | None = None
        for name, value in t.attrs.items():
            if name == "class":
                self.classes = value if isinstance(value, str) else ""
            elif name == "style":
                self.inline = value if isinstance(value, str) else None
            elif name == "id":
                self.elem_id = value if isinstance(value, str) else None
                self.props["id"] = value
            elif name == "hover-class":
                self.hover = value if isinstance(value, str) else None
            else:
                self.props[name] = value
        # (name, binding, the expression of a one-mustache value or None)
        self.bound = tuple((name, b, _single_expr(b)) for name, b in t.bindings.items())
        self.dataset = tuple(t.dataset.items())
        self.events = t.events
        parts: list[Part] = []
        for b in t.bindings.values():
            parts.extend(b.parts)
        for v in t.dataset.values():
            if isinstance(v, Binding):
                parts.extend(v.parts)
        for e in t.events:
            if isinstance(e.handler, Binding):
                parts.extend(e.handler.parts)
        self.deps = _deps_of(tuple(parts))


class _Life:
    """One rendering of an element's children; watchers of its structure die with it."""

    __slots__ = ("alive",)

    def __init__(self) -> None:
        self.alive = True


class _Elem:
    """An element instance: what is needed to recompute it and to re-render its children."""

    __slots__ = (
        "alive",
        "ancestors",
        "depth",
        "hover",
        "ids",
        "inline",
        "key",
        "kids",
        "life",
        "node",
        "parent",
        "paths",
        "root_known",
        "scope",
        "sig",
        "style",
        "tchildren",
        "tnode",
    )

    def __init__(
        self,
        tnode: Element | None,
        node: RenderNode,
        parent: _Elem | None,
        scope: Scope,
        paths: PathScope,
        root_known: bool,
        ids: _Ids,
    ) -> None:
        self.tnode = tnode
        self.node = node
        self.parent = parent
        self.scope = scope
        self.paths = paths
        self.root_known = root_known
        self.ids = ids
        self.alive = True
        self.life = _Life()
        self.sig: tuple[Any, ...] | None = None  # the bound values of the last fill
        self.kids: list[_Elem | _TextRun] = []
        self.depth: int = parent.depth + 1 if parent is not None else 0
        # What selectors see of the ancestors (root excluded), and the inputs of this element's style.
        self.ancestors: tuple[ElementKey, ...] = ()
        self.key = ElementKey("root")
        self.inline: str | None = None
        self.hover: str | None = None
        self.style: ResolvedStyle = ResolvedStyle()
        self.tchildren: list[Node] = tnode.children if tnode is not None else []

    def kill(self) -> None:
        stack: list[_Elem | _TextRun] = list(self.kids)
        while stack:
            k = stack.pop()
            k.alive = False
            if isinstance(k, _Elem):
                stack.extend(k.kids)


class _TextRun:
    __slots__ = ("alive", "node", "scope", "tnode")

    def __init__(self, tnode: Text, node: RenderNode, scope: Scope) -> None:
        self.tnode = tnode
        self.node = node
        self.scope = scope
        self.alive = True


class _Watch:
    """Something to recompute when a path it reads changes."""

    __slots__ = ("items_path", "kind", "life", "owner", "scope", "state", "tnode")

    def __init__(self, kind: str, owner: _Elem | _TextRun, tnode: Any = None) -> None:
        self.kind = kind  # "elem" | "text" | "if" | "for" | "call"
        self.owner = owner
        self.tnode = tnode
        self.state: Any = None
        self.items_path: DataPath | None = None
        self.scope: Scope | None = None
        # Structural watchers belong to one rendering of their parent's children.
        self.life = owner.life if isinstance(owner, _Elem) and kind in ("if", "for", "call") else None


def _alive(w: _Watch) -> bool:
    return w.owner.alive and (w.life is None or w.life.alive)


class _Trie:
    __slots__ = ("kids", "watches")

    def __init__(self) -> None:
        self.watches: list[_Watch] = []
        self.kids: dict[str | int, _Trie] = {}

    def add(self, path: DataPath, watch: _Watch) -> None:
        node = self
        for seg in path:
            nxt = node.kids.get(seg)
            if nxt is None:
                nxt = node.kids[seg] = _Trie()
            node = nxt
        node.watches.append(watch)

    def collect(self, path: DataPath, out: dict[int, _Watch]) -> None:
        node = self
        for seg in path:
            for w in node.watches:
                if _alive(w):
                    out[id(w)] = w
            nxt = node.kids.get(seg)
            if nxt is None:
                return
            node = nxt
        stack = [node]
        while stack:
            n = stack.pop()
            live = [w for w in n.watches if _alive(w)]
            n.watches = live  # drop the dead on the way
            for w in live:
                out[id(w)] = w
            stack.extend(n.kids.values())

    def compact(self) -> int:
        """Drop dead watchers and empty branches everywhere; return how many live ones remain."""
        live_total = 0
        stack = [self]
        while stack:
            n = stack.pop()
            n.watches = [w for w in n.watches if _alive(w)]
            live_total += len(n.watches)
            for seg in [seg for seg, kid in n.kids.items() if not kid.watches and not kid.kids]:
                del n.kids[seg]
            stack.extend(n.kids.values())
        return live_total


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
    ) -> None:
        self.component = component
        self.viewport = viewport or Viewport()
        self.sink = sink
        self.styles = _resolver(component.stylesheet, self.viewport)
        self.data: dict[str, Any] = {}
        self._trie = _Trie()
        self._registered = 0
        self._live_after_compact = 0
        # Per template node (by identity): its static parts and dependencies. Shared through the
        # component by every card rendered from it.
        self._cache: dict[int, Any] = component.render_cache
        self._track = True
        self._root: _Elem | None = None
        self._reported: set[tuple[str, str]] = set()
        self._template_depth = 0

    # -- public -------------------------------------------------------------------------

    @property
    def document(self) -> RenderDocument:
        if self._root is None:
            raise RuntimeError("render() first")
        return RenderDocument(RENDER_IR_VERSION, self.viewport, self._root.node)

    def render(self, data: Mapping[str, Any]) -> RenderDocument:
        """A full render from JSON-like data (copied: the caller's object is not kept)."""
        self.data = copy_json(dict(data))
        self._trie = _Trie()
        self._registered = self._live_after_compact = 0
        node = RenderNode(ROOT_ID, "view", {}, {}, None, [])
        root = _Elem(None, node, None, Scope(self.data), {}, True, _Ids("", ""))
        root.tchildren = self.component.template.root
        self._root = root
        node.children = self._render_children(root)
        return self.document

    def update(self, changes: Mapping[str, Any]) -> list[Patch]:
        """Apply a setData object and return the patches of the re-render."""
        if self._root is None:
            self.render({})
        # Merged in place: loop scopes hold references to items, and replacing a list by one with
        # the same keys then costs only the leaves that really differ.
        paths = merge_data(self.data, copy_json(dict(changes)))
        found: dict[int, _Watch] = {}
        for path in paths:
            self._trie.collect(path, found)
        # Shallow structure first: re-rendering it kills the watchers beneath, which then skip.
        structural = sorted((w for w in found.values() if w.kind in ("if", "for", "call")), key=_depth)
        patches: list[Patch] = []
        for w in structural:
            owner = w.owner
            if not _alive(w) or not isinstance(owner, _Elem):
                continue
            if not self._structure_changed(w, paths):
                continue
            self._rerender_children(owner, patches)
        for w in found.values():
            if not _alive(w):
                continue
            if w.kind == "text":
                assert isinstance(w.owner, _TextRun)
                self._refresh_text(w.owner, patches)
            elif w.kind == "elem":
                assert isinstance(w.owner, _Elem)
                self._refresh_element(w.owner, patches)
        # Re-renders leave dead watchers behind under paths nobody changed; sweep them once
        # they outnumber the live ones, so memory stays flat over any number of updates.
        if self._registered > 2 * self._live_after_compact + 1024:
            self._live_after_compact = self._trie.compact()
            self._registered = 0
        return patches

    # -- rendering ------------------------------------------------------------------------

    def _render_children(self, parent: _Elem) -> list[RenderNode]:
        out: list[RenderNode] = []
        for t in parent.tchildren:
            self._render_node(t, parent, parent.scope, parent.paths, parent.root_known, parent.ids, out)
        return out

    def _render_node(
        self,
        t: Node,
        parent: _Elem,
        scope: Scope,
        paths: PathScope,
        root_known: bool,
        ids: _Ids,
        out: list[RenderNode],
    ) -> None:
        if isinstance(t, Element):
            out.append(self._render_element(t, parent, scope, paths, root_known, ids))
        elif isinstance(t, Text):
            text = self._text(t.parts, scope)
            node = RenderNode(ids.of(t.path), TEXT, {"text": text}, _inherited(parent.style))
            run = _TextRun(t, node, scope)
            parent.kids.append(run)
            if self._track:
                deps = self._cache.get(id(t))
                if deps is None:
                    deps = self._cache[id(t)] = _deps_of(t.parts)
                if deps:
                    self._watch(deps, _Watch("text", run), paths, root_known)
            out.append(node)
        elif isinstance(t, IfChain):
            index = self._branch(t, scope)
            if self._track:
                w = _Watch("if", parent, t)
                w.state = index
                w.scope = scope
                for b in t.branches:
                    if b.test is not None:
                        self._watch_parts(b.test, w, paths, root_known)
            if index >= 0:
                self._render_node(t.branches[index].node, parent, scope, paths, root_known, ids, out)
        elif isinstance(t, For):
            self._render_for(t, parent, scope, paths, root_known, ids, out)
        elif isinstance(t, Block):
            for c in t.children:
                self._render_node(c, parent, scope, paths, root_known, ids, out)
        elif isinstance(t, TemplateCall):
            self._render_call(t, parent, scope, paths, root_known, ids, out)

    def _render_element(
        self, t: Element, parent: _Elem, scope: Scope, paths: PathScope, root_known: bool, ids: _Ids
    ) -> RenderNode:
        node = RenderNode(ids.of(t.path), t.tag, {}, {}, None, [])
        inst = _Elem(t, node, parent, scope, paths, root_known, ids)
        parent.kids.append(inst)
        inst.ancestors = _ancestors_below(parent)
        info = self._info(t)
        self._fill_element(inst, info, self._bound_values(info, scope))
        if self._track and info.deps:
            self._watch(info.deps, _Watch("elem", inst), paths, root_known)
        if t.children:
            node.children = self._render_children(inst)
        return node

    def _info(self, t: Element) -> _ElemInfo:
        info: _ElemInfo | None = self._cache.get(id(t))
        if info is None:
            info = self._cache[id(t)] = _ElemInfo(t)
        return info

    def _bound_values(self, info: _ElemInfo, scope: Scope) -> tuple[JSValue, ...]:
        """Every bound value of an element, in the order :meth:`_fill_element` reads them: the
        attributes, then (with events) the bound dataset entries and handler names."""
        values: list[JSValue] = [
            evaluate(expr, scope) if expr is not None else self._value(b, scope) for _, b, expr in info.bound
        ]
        if info.events:
            values.extend(self._value(raw, scope) for _, raw in info.dataset if isinstance(raw, Binding))
            values.extend(self._value(e.handler, scope) for e in info.events if not isinstance(e.handler, str))
        return tuple(values)

    def _fill_element(self, inst: _Elem, info: _ElemInfo, values: tuple[JSValue, ...]) -> None:
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
        inst.sig = values
        inst.key = ElementKey(t.tag, elem_id, tuple(classes.split()) if classes else ())
        inst.inline = inline
        inst.hover = hover or None
        node.props = props
        self._apply_style(inst)

    def _apply_style(self, inst: _Elem) -> None:
        """Resolve the element's style (and hover style) from its key, ancestors and parent."""
        parent = inst.parent
        assert parent is not None
        parent_style = parent.style if parent.parent is not None else None
        style = self.styles.resolve(inst.ancestors, inst.key, inst.inline, parent_style)
        inst.style = style
        inst.node.style = style  # a fresh ResolvedStyle (a dict) per resolve: no copy needed
        if inst.hover:
            key = inst.key
            hovered = ElementKey(key.tag, key.id, (*key.classes, *inst.hover.split()))
            on = self.styles.resolve(inst.ancestors, hovered, inst.inline, parent_style)
            inst.node.props = {**inst.node.props, "hoverStyle": {k: v for k, v in on.items() if style.get(k) != v}}

    def _render_for(
        self, t: For, parent: _Elem, scope: Scope, paths: PathScope, root_known: bool, ids: _Ids, out: list[RenderNode]
    ) -> None:
        mustache = t.items.single
        items_value = self._value(t.items, scope)
        items_path = self._abs_path(mustache, paths, root_known) if mustache is not None else None
        if self._track:
            w = _Watch("for", parent, t)
            w.items_path = items_path
            self._watch_parts(t.items, w, paths, root_known)
        entries = list(_iterate(items_value))
        base = ids.of(t.path)
        seen: set[str] = set()
        for index, (label, item) in enumerate(entries):
            key = self._key(t, item, index, seen)
            child_scope = scope.child({t.item: item, t.index: label})
            item_path = (*items_path, normalise((label,))[0]) if items_path is not None else None
            child_paths = {**paths, t.item: item_path, t.index: _INDEX}
            child_ids = _Ids(f"{t.path}.0", f"{base}[{_escape_key(key)}]")
            self._render_node(t.body, parent, child_scope, child_paths, root_known, child_ids, out)

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

    def _render_call(
        self,
        t: TemplateCall,
        parent: _Elem,
        scope: Scope,
        paths: PathScope,
        root_known: bool,
        ids: _Ids,
        out: list[RenderNode],
    ) -> None:
        if self._track:
            w = _Watch("call", parent, t)
            if isinstance(t.name, Binding):
                self._watch_parts(t.name, w, paths, root_known)
            if t.data is not None:
                self._watch_parts(t.data, w, paths, root_known)
        data: JSValue = evaluate(t.data.expr, scope) if t.data is not None and t.data.expr is not None else {}
        # A template sees only the data it is given, so nothing inside is watched one by one:
        # the call's own watcher re-renders it when that data changes.
        inner_scope = Scope(data if isinstance(data, dict) else {})
        if t.body is not None:
            body, inner_ids = t.body, ids
        else:
            name = t.name if isinstance(t.name, str) else to_text(self._value(t.name, scope))
            found = self.component.template.templates.get(name)
            if found is None:
                self._report("RND002", f'no <template name="{name}"> to render', t)
                return
            if self._template_depth >= MAX_TEMPLATE_DEPTH:
                self._report("RND003", f'template "{name}" nests deeper than {MAX_TEMPLATE_DEPTH} calls', t)
                return
            body, inner_ids = found.children, _Ids("", ids.of(t.path) + ".")
        track = self._track
        self._track = False
        self._template_depth += 1
        try:
            for c in body:
                self._render_node(c, parent, inner_scope, {}, False, inner_ids, out)
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

    def _abs_path(self, m: Mustache, paths: PathScope, root_known: bool) -> DataPath | None:
        """The absolute data path of a mustache that is a plain path, else None."""
        deps = dependencies(m.expr) if m.expr is not None else frozenset()
        if len(deps) != 1:
            return None
        (dep,) = deps
        return _resolve(dep[0], normalise(dep[1:]), paths, root_known)

    def _watch_parts(self, source: Binding | Mustache, watch: _Watch, paths: PathScope, root_known: bool) -> None:
        # Cached by the identity of a template object, which lives as long as the template.
        deps = self._cache.get(id(source))
        if deps is None:
            parts = source.parts if isinstance(source, Binding) else (source,)
            deps = self._cache[id(source)] = _deps_of(parts)
        self._watch(deps, watch, paths, root_known)

    def _watch(self, deps: tuple[Dep, ...], watch: _Watch, paths: PathScope, root_known: bool) -> None:
        """Register ``watch`` under the absolute data path of each dependency."""
        trie = self._trie
        for head, rest in deps:
            path = _resolve(head, rest, paths, root_known)
            if path is not None:
                trie.add(path, watch)
                self._registered += 1

    # -- incremental ----------------------------------------------------------------------

    def _structure_changed(self, w: _Watch, paths: list[DataPath]) -> bool:
        if w.kind == "if":
            owner = w.owner
            assert isinstance(owner, _Elem) and isinstance(w.tnode, IfChain)
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

    def _rerender_children(self, inst: _Elem, patches: list[Patch]) -> None:
        before = RenderNode(
            inst.node.id, inst.node.type, inst.node.props, inst.node.style, inst.node.events, inst.node.children
        )
        inst.kill()
        inst.life.alive = False
        inst.life = _Life()
        inst.kids = []
        inst.node.children = self._render_children(inst)
        patches.extend(diff(before, inst.node))

    def _refresh_text(self, run: _TextRun, patches: list[Patch]) -> None:
        text = self._text(run.tnode.parts, run.scope)
        if run.node.props.get("text") != text:
            run.node.props["text"] = text
            patches.append(SetText(run.node.id, text))

    def _refresh_element(self, inst: _Elem, patches: list[Patch]) -> None:
        assert inst.tnode is not None
        info = self._info(inst.tnode)
        values = self._bound_values(info, inst.scope)
        if inst.sig is not None and _same(values, inst.sig):
            return  # what it reads changed elsewhere (another item's field): nothing to redo
        node = inst.node
        # _fill_element replaces props, style and events with new objects: no copies needed.
        before = RenderNode(node.id, node.type, node.props, node.style, node.events)
        old_key, old_inherited = inst.key, _inherited(inst.style)
        self._fill_element(inst, info, values)
        patches.extend(diff_shallow(before, node))
        if inst.key != old_key or _inherited(inst.style) != old_inherited:
            self._restyle_kids(inst, patches)

    def _restyle_kids(self, inst: _Elem, patches: list[Patch]) -> None:
        """A class or inherited style changed: descendants may match other rules now."""
        for kid in inst.kids:
            node = kid.node
            before = RenderNode(node.id, node.type, node.props, node.style, node.events)
            if isinstance(kid, _TextRun):
                node.style = _inherited(inst.style)
            else:
                kid.ancestors = _ancestors_below(inst)
                self._apply_style(kid)
            patches.extend(diff_shallow(before, node))
            if isinstance(kid, _Elem):
                self._restyle_kids(kid, patches)

    def _report(self, code: str, message: str, t: Node) -> None:
        if self.sink is None or (code, message) in self._reported:
            return
        self._reported.add((code, message))
        self.sink.emit(code, message, file=self.component.template.file, span=t.span)


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


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    # Python's 1 == True == 1.0; a template prints them differently, so compare types too.
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b, strict=True))


def _depth(w: _Watch) -> int:
    owner = w.owner
    return owner.depth if isinstance(owner, _Elem) else 0


def _inherited(style: Mapping[str, str]) -> dict[str, str]:
    return dict(inherited_part(style))


def _resolve(head: str | int, rest: DataPath, paths: PathScope, root_known: bool) -> DataPath | None:
    """The absolute data path of ``head.rest`` through the loop scopes ``paths``, or None: the
    loop index changes only with the loop's structure, computed items are re-rendered by their
    loop, and inside a template call nothing is watched one by one."""
    if isinstance(head, str) and head in paths:
        base = paths[head]
        if base is None or base is _INDEX:
            return None
        return (*base, *rest) if rest else base
    if not root_known:
        return None
    return (head, *rest)


def _ancestors_below(parent: _Elem) -> tuple[ElementKey, ...]:
    """The ancestor keys a child of ``parent`` matches selectors against (the root has none)."""
    return (*parent.ancestors, parent.key) if parent.parent is not None else ()


def _iterate(value: JSValue) -> Iterator[tuple[str | int, JSValue]]:
    """What wx:for walks: arrays by index, objects by key, strings by character, n as 0..n-1."""
    if isinstance(value, list):
        yield from enumerate(value)
    elif isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, str):
        yield from enumerate(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        for i in range(int(min(value, 100000))):
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
