"""WXML AST -> template IR, with the rules of AI-mode cards checked on the way.

Lowering runs on every build, so it makes one pass over the tree; files reached through
``<import>``/``<include>`` are parsed once per lowering. Card rules (which tags, events and
attributes a card may use) are reported here, each with its own TPL code, and the offending
node is still lowered so one defect does not hide the next. One element's attributes and events
are lowered by :mod:`skillc.ir.lower_attrs`, which this module builds the tree on.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend import wxml
from skillc.frontend.expr import Mustache
from skillc.frontend.package import SkillPackage
from skillc.ir.lower_attrs import AttributeLowering, dataset_key, is_static, static_text
from skillc.ir.official_tags import FORM_CONTROLS, FORM_HINT, refused_tag_message
from skillc.ir.template import (
    RENDERED_TAGS,
    SPEC_ONLY_TAGS,
    Binding,
    Block,
    Branch,
    Element,
    For,
    IfChain,
    Node,
    Template,
    TemplateCall,
    TemplateDef,
    Text,
)

__all__ = ["MAX_EXPANSION", "Loader", "dataset_key", "lower_component", "lower_document"]

Loader = Callable[[str], str | None]

# Nested <template is>/<include> expansions deeper than this are not expanded (TPL018).
MAX_EXPANSION = 16

_BLANK = " \t\n\r\f"  # not str.strip()'s default: &nbsp; is content
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")


@dataclass
class _Scope:
    """The templates one file can call: its own <template name> plus those of its imports."""

    defs: dict[str, tuple[wxml.Element, str]] = field(default_factory=dict)


@dataclass
class _Lowering(AttributeLowering):
    load: Loader
    sink: DiagnosticSink
    root_file: str
    docs: dict[str, wxml.Document | None] = field(default_factory=dict)
    scopes: dict[str, _Scope] = field(default_factory=dict)
    scoping: set[str] = field(default_factory=set)
    including: list[str] = field(default_factory=list)
    expanding: list[tuple[str, str]] = field(default_factory=list)
    templates: dict[str, TemplateDef] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    mustaches: dict[tuple[int, bool, bool], tuple[wxml.RawMustache, Mustache]] = field(default_factory=dict)
    # A template body lowered with relative paths, by definition and context (see call()).
    bodies: dict[tuple[int, int, tuple[str, ...], tuple[tuple[str, str], ...]], tuple[wxml.Element, list[Node]]] = (
        field(default_factory=dict)
    )

    # -- files ------------------------------------------------------------------------------

    def document(self, file: str) -> wxml.Document | None:
        if file in self.docs:
            return self.docs[file]
        text = self.load(file)
        doc = wxml.parse_wxml(text, file=file, sink=self.sink) if text is not None else None
        self.docs[file] = doc
        if doc is not None and file != self.root_file:
            self.dependencies.append(file)
        return doc

    def resolve(self, el: wxml.Element, file: str) -> str | None:
        """The skill-relative path an <import>/<include> src names, or None (reported)."""
        attr = el.attribute("src")
        if attr is None or not attr.value or not is_static(attr.value):
            self.emit(
                "TPL013",
                f"<{el.tag}> needs a static src naming a .wxml file of the skill",
                file,
                el.open_loc.span(),
                hint=f'<{el.tag} src="./item.wxml"/>',
            )
            return None
        src = static_text(attr.value).strip()
        span = (attr.value_loc or attr.name_loc).span()
        # A leading "/" is the skill root: a skill is its own package and cannot reach above it.
        joined = src.lstrip("/") if src.startswith("/") else posixpath.join(posixpath.dirname(file), src)
        path = posixpath.normpath(joined)
        if not path.endswith(".wxml"):
            path += ".wxml"
        if path.startswith("../") or path == ".." or path.startswith("/"):
            self.emit("TPL013", f'<{el.tag} src="{src}"> points outside the skill', file, span)
            return None
        if self.document(path) is None:
            self.emit(
                "TPL013",
                f'<{el.tag} src="{src}">: {path} does not exist in the skill',
                file,
                span,
                hint="src is relative to this file, or to the skill root when it starts with /",
            )
            return None
        return path

    def official_import(self, el: wxml.Element, file: str) -> None:
        # V003 scans only components/*/index.wxml, and its tag list has no import or include.
        if file != self.root_file or not file.endswith("/index.wxml"):
            return
        self.emit(
            "TPL020",
            f"<{el.tag}> fails the official validator (V003 allows only view, text, image, map, button, "
            "canvas, scroll-view, collapsible-view, block and template in a card's index.wxml)",
            file,
            el.tag_loc.span(),
            hint="move the markup into index.wxml (skillc still expands it, WeChat's build gate does not accept it)",
        )

    def scope(self, file: str) -> _Scope:
        cached = self.scopes.get(file)
        if cached is not None:
            return cached
        scope = _Scope()
        self.scoping.add(file)
        doc = self.document(file)
        if doc is not None:
            imports: list[wxml.Element] = []
            _collect(doc.children, scope, file, imports, self)
            for el in imports:
                target = self.resolve(el, file)
                if target is None:
                    continue
                if target in self.scoping:
                    self.emit(
                        "TPL014",
                        f"<import> of {target} is cyclic: {target} is already being imported",
                        file,
                        el.open_loc.span(),
                        hint="move the shared templates into a third file that both import",
                    )
                    continue
                # Import is not transitive: only the templates the target itself defines.
                for name, found in self.own_defs(target).items():
                    scope.defs.setdefault(name, found)
                self.scope(target)
        self.scoping.discard(file)
        self.scopes[file] = scope
        return scope

    def own_defs(self, file: str) -> dict[str, tuple[wxml.Element, str]]:
        doc = self.document(file)
        own = _Scope()
        if doc is not None:
            _collect(doc.children, own, file, None, None)
        return own.defs

    # -- nodes -------------------------------------------------------------------------------

    def sequence(self, children: list[wxml.Node], file: str, prefix: str, depth: int, start: int = 0) -> list[Node]:
        out: list[Node] = []
        chain: IfChain | None = None
        for child in children:
            if isinstance(child, wxml.Comment):
                continue
            if isinstance(child, wxml.Text):
                if all(isinstance(p, str) and not p.strip(_BLANK) for p in child.parts):
                    continue  # whitespace between tags: wcc drops it too
                chain = None
                path = f"{prefix}{start + len(out)}"
                out.append(Text(path, self.parts(child.parts, file), child.loc.span()))
                continue
            if isinstance(child, wxml.Wxs):
                chain = None
                self.emit(
                    "TPL003",
                    "<wxs> does not run in cards",
                    file,
                    child.open_loc.span(),
                    hint="compute the value in the component's JavaScript and setData it",
                )
                continue
            tag = child.tag
            if tag == "template" and child.attribute("name") is not None:
                continue  # a definition: rendered only where it is called
            if tag in ("import", "include"):
                self.official_import(child, file)
            if tag == "import":
                continue  # read by scope()
            if tag == "include":
                chain = None
                out.extend(self.include(child, file, prefix, start + len(out), depth))
                continue
            path = f"{prefix}{start + len(out)}"
            for written in child.attributes:
                if written.name.startswith("wx:"):
                    break
            else:
                # No directive (most elements): neither a branch nor a loop.
                chain = None
                out.append(self.element(child, file, path, depth))
                continue
            directive = _branch_kind(child)
            if directive in ("elif", "else"):
                if chain is not None and chain.branches[-1].kind != "else":
                    attr = child.attribute("wx:" + directive)
                    assert attr is not None
                    test = self.binding(attr, file) if directive == "elif" else None
                    branch_path = f"{chain.path}.{len(chain.branches)}"
                    node = self.element(child, file, branch_path, depth)
                    chain.branches.append(Branch(directive, test, node, child.loc.span()))
                    chain.span = _join(chain.span, child.loc.span())
                    continue
                self.emit(
                    "TPL011",
                    f"wx:{directive} must follow an element with wx:if or wx:elif",
                    file,
                    child.attribute("wx:" + directive).name_loc.span(),  # type: ignore[union-attr]
                    hint="put it right after its wx:if sibling (only whitespace and comments between)",
                )
            chain = None
            for_attr = child.attribute("wx:for") or child.attribute("wx:for-items")
            if_attr = child.attribute("wx:if")
            if for_attr is not None:
                out.append(self.loop(child, for_attr, file, path, depth))
            elif if_attr is not None:
                chain = IfChain(path, [], child.loc.span())
                node = self.element(child, file, f"{path}.0", depth)
                chain.branches.append(Branch("if", self.test(if_attr, file), node, child.loc.span()))
                out.append(chain)
            else:
                out.append(self.element(child, file, path, depth))
        return out

    def test(self, attr: wxml.Attribute, file: str) -> Binding:
        binding = self.binding(attr, file)
        if not any(isinstance(p, Mustache) for p in binding.parts):
            value = attr.raw if attr.raw is not None else ""
            self.emit(
                "TPL017",
                f'{attr.name}="{value}" is a plain string, so it is always {"true" if value else "false"}',
                file,
                attr.loc.span(),
                hint=f'write {attr.name}="{{{{{value or "false"}}}}}"',
            )
        return binding

    def loop(self, el: wxml.Element, for_attr: wxml.Attribute, file: str, path: str, depth: int) -> For:
        items = self.binding(for_attr, file)
        item = self.loop_name(el, "wx:for-item", "item", file)
        index = self.loop_name(el, "wx:for-index", "index", file)
        key_attr = el.attribute("wx:key")
        key: str | None = None
        if key_attr is None:
            self.emit(
                "TPL010",
                "wx:for without wx:key: items are matched by position, so a reorder re-creates them",
                file,
                for_attr.name_loc.span(),
                hint='add wx:key="id" (a unique property of each item) or wx:key="*this" for strings/numbers',
            )
        elif key_attr.value is None or not is_static(key_attr.value):
            self.emit(
                "TPL012",
                "wx:key takes a property name or *this, not an expression",
                file,
                key_attr.loc.span(),
                hint='write wx:key="id", not wx:key="{{item.id}}"',
            )
        else:
            key = static_text(key_attr.value).strip() or None
        body: Node
        if_attr = el.attribute("wx:if")
        if if_attr is not None:
            # wx:for wraps wx:if on the same element: the test sees each item.
            inner = self.element(el, file, f"{path}.0.0", depth)
            body = IfChain(f"{path}.0", [Branch("if", self.test(if_attr, file), inner, el.loc.span())], el.loc.span())
        else:
            body = self.element(el, file, f"{path}.0", depth)
        return For(path, items, item, index, key, body, el.loc.span())

    def loop_name(self, el: wxml.Element, attr_name: str, default: str, file: str) -> str:
        attr = el.attribute(attr_name)
        if attr is None:
            return default
        value = static_text(attr.value or ()).strip()
        if attr.value is None or not is_static(attr.value) or not _IDENT.match(value):
            self.emit(
                "TPL012",
                f"{attr_name} must be a plain variable name",
                file,
                attr.loc.span(),
                hint=f'{attr_name}="{default}"',
            )
            # wcc binds the loop variable under the text as written ("{{x}}", "a b"), a name no
            # expression can reach: `{{item}}` then reads the component data, as in WeChat.
            return attr.raw if attr.value is not None and attr.raw is not None else default
        return value

    def element(self, el: wxml.Element, file: str, path: str, depth: int) -> Node:
        """One element without its wx:for / wx:if (the caller built those around it)."""
        tag = el.tag
        if depth > wxml.MAX_DEPTH:
            self.emit("TPL018", "the template nests too deeply; the rest is not expanded", file, el.tag_loc.span())
            return Block(path, [], el.loc.span())
        if tag == "block":
            self.check_attributes(el, file)
            return Block(path, self.sequence(el.children, file, path + ".", depth + 1), el.loc.span())
        if tag == "template":
            return self.call(el, file, path, depth)
        if tag == "slot":
            self.emit(
                "TPL004",
                "<slot> is not supported in cards",
                file,
                el.tag_loc.span(),
                hint="cards have no child components to project content into",
            )
        elif tag in SPEC_ONLY_TAGS:
            self.preview_tag(el, file)
        elif tag not in RENDERED_TAGS:
            self.emit(
                "TPL001",
                refused_tag_message(tag),
                file,
                el.tag_loc.span(),
                hint=FORM_HINT
                if tag in FORM_CONTROLS
                else "cards use view, text, image, button, scroll-view, collapsible-view, map, canvas, block and "
                "template; custom components and other built-ins are not available",
            )
        node = Element(path, tag, el.loc.span())
        self.attributes(el, node, file)
        node.children = self.sequence(el.children, file, path + ".", depth + 1)
        return node

    def preview_tag(self, el: wxml.Element, file: str) -> None:
        """map and canvas: WeChat draws them, skillc shows a static preview (docs/render-ir.md).
        A canvas without type="2d" is the legacy canvas, which cards do not have."""
        if el.tag == "canvas":
            kind = el.attribute("type")
            if (
                kind is None
                or kind.value is None
                or (is_static(kind.value) and static_text(kind.value).strip() != "2d")
            ):
                self.emit(
                    "TPL030",
                    '<canvas> without type="2d": cards have only the 2d canvas (wx.createCanvasContext is not '
                    "available), so this one stays blank",
                    file,
                    el.tag_loc.span(),
                    hint='write <canvas type="2d" id="c"> and draw through this.createSelectorQuery()',
                )
                return
        what = (
            "a static preview: a box of its size listing its centre and markers (no map tiles, no gestures)"
            if el.tag == "map"
            else "the picture the card paints through the 2d API (a subset of it), or a placeholder"
        )
        self.emit("TPL002", f"<{el.tag}> is shown by skillc as {what}", file, el.tag_loc.span())

    def include(self, el: wxml.Element, file: str, prefix: str, start: int, depth: int) -> list[Node]:
        target = self.resolve(el, file)
        if target is None:
            return []
        if target in self.including or target == file:
            self.emit(
                "TPL014",
                f"<include> of {target} is cyclic: it includes itself through "
                + " -> ".join([*self.including[self.including.index(target) :], file, target])
                if target in self.including
                else f"<include> of {target} is cyclic: the file includes itself",
                file,
                el.open_loc.span(),
            )
            return []
        if self.too_deep(el, file):
            return []
        doc = self.document(target)
        assert doc is not None
        self.scope(target)
        self.including.append(file)
        try:
            # Include copies everything but <template> definitions and <wxs>.
            # Numbered after the includer's own nodes, as if written in its place.
            return self.sequence(doc.children, target, prefix, depth, start)
        finally:
            self.including.pop()

    def too_deep(self, el: wxml.Element, file: str) -> bool:
        """True (reported) when expanding ``el`` would nest includes and templates too deeply."""
        if len(self.including) + len(self.expanding) < MAX_EXPANSION:
            return False
        self.emit("TPL018", "includes and templates nest too deeply; not expanded", file, el.open_loc.span())
        return True

    def call(self, el: wxml.Element, file: str, path: str, depth: int) -> Node:
        is_attr = el.attribute("is")
        data_attr = el.attribute("data")
        self.check_attributes(el, file)
        data: Mustache | None = None
        if data_attr is not None and data_attr.value:
            raws = [p for p in data_attr.value if isinstance(p, wxml.RawMustache)]
            if len(raws) == 1 and len(data_attr.value) == 1:
                data = self.mustache(raws[0], file, object_form=True, attribute=True)
            else:
                # wcc refuses data without a mustache or with two; one mustache in text compiles to
                # a string, so the template sees no data fields (as here, with data left out).
                self.emit(
                    "TPL016",
                    'template data must be one {{ }} holding an object: data="{{a, b: c, ...d}}"',
                    file,
                    data_attr.loc.span(),
                    error=len(raws) != 1,
                )
        if is_attr is None or not is_attr.value:
            self.emit(
                "TPL016",
                "<template> needs name (to define) or is (to use)",
                file,
                el.open_loc.span(),
                hint='<template name="item">...</template> then <template is="item" data="{{...}}"/>',
            )
            return Block(path, [], el.loc.span())
        if not is_static(is_attr.value):
            return TemplateCall(path, self.binding(is_attr, file), data, None, el.loc.span())
        name = static_text(is_attr.value).strip()
        found = self.scope(file).defs.get(name)
        if found is None:
            self.emit(
                "TPL015",
                f'no template named "{name}" is defined in this file or imported into it',
                file,
                (is_attr.value_loc or is_attr.name_loc).span(),
                hint='define <template name="..."> here, or <import src="..."/> the file that does',
            )
            return TemplateCall(path, name, data, None, el.loc.span())
        def_el, def_file = found
        # A body's nodes depend on the definition, the depth and the include and template
        # stacks only; its paths are the call's path plus paths relative to the body. Lowered
        # once per such context (register() lowers it in the context of the first call), each
        # call gets a copy under its own path. What a second lowering would report, the first
        # has reported (lower_document keeps each finding once).
        context = (id(def_el), depth, tuple(self.including), tuple(self.expanding))
        fresh = self.register(name, def_el, def_file, depth)
        key = (def_file, name)
        if key in self.expanding:
            return TemplateCall(path, name, data, None, el.loc.span())  # recursive: resolved when rendering
        if self.too_deep(el, file):
            return TemplateCall(path, name, data, None, el.loc.span())
        known = self.bodies.get(context)
        if fresh is not None:
            relative = fresh
        elif known is not None and known[0] is def_el:
            relative = known[1]
        else:
            self.expanding.append(key)
            try:
                relative = self.sequence(def_el.children, def_file, "", depth + 1)
            finally:
                self.expanding.pop()
        self.bodies[context] = (def_el, relative)
        return TemplateCall(path, name, data, _under(relative, path + "."), el.loc.span())

    def register(self, name: str, def_el: wxml.Element, def_file: str, depth: int) -> list[Node] | None:
        """Lower a template's definition the first time its name is met; its nodes then, else None."""
        if name in self.templates:
            return None
        placeholder = TemplateDef(name, def_file, [], def_el.loc.span())
        self.templates[name] = placeholder  # before lowering: a recursive call finds it
        self.expanding.append((def_file, name))
        try:
            placeholder.children = self.sequence(def_el.children, def_file, "", depth + 1)
        finally:
            self.expanding.pop()
        return placeholder.children


def _collect(
    nodes: list[wxml.Node],
    scope: _Scope,
    file: str,
    imports: list[wxml.Element] | None,
    lowering: _Lowering | None,
) -> None:
    """Template definitions (and <import> tags) anywhere in a file, in document order."""
    pending = list(reversed(nodes))
    while pending:
        node = pending.pop()
        if not isinstance(node, wxml.Element):
            continue
        if node.tag == "template" and (attr := node.attribute("name")) is not None:
            name = static_text(attr.value or ()).strip()
            if name in scope.defs and lowering is not None:
                lowering.emit(
                    "TPL016",
                    f'template "{name}" is defined twice in this file; the last definition is used',
                    file,
                    attr.loc.span(),
                )
            if name:
                # wcc keeps the last definition of a name, wherever the calls are.
                scope.defs[name] = (node, file)
            continue
        if node.tag == "import" and imports is not None:
            imports.append(node)
        pending.extend(reversed(node.children))


def _under(nodes: list[Node], prefix: str) -> list[Node]:
    """Copies of ``nodes`` (relative paths) with ``prefix`` in front of every path."""
    return [_node_under(n, prefix) for n in nodes]


def _node_under(node: Node, prefix: str) -> Node:
    if isinstance(node, Element):
        return Element(
            prefix + node.path,
            node.tag,
            node.span,
            dict(node.attrs),
            dict(node.bindings),
            dict(node.dataset),
            node.events,
            _under(node.children, prefix),
        )
    if isinstance(node, Text):
        return Text(prefix + node.path, node.parts, node.span)
    if isinstance(node, IfChain):
        branches = [Branch(b.kind, b.test, _node_under(b.node, prefix), b.span) for b in node.branches]
        return IfChain(prefix + node.path, branches, node.span)
    if isinstance(node, For):
        body = _node_under(node.body, prefix)
        return For(prefix + node.path, node.items, node.item, node.index, node.key, body, node.span)
    if isinstance(node, Block):
        return Block(prefix + node.path, _under(node.children, prefix), node.span)
    body_nodes = _under(node.body, prefix) if node.body is not None else None
    return TemplateCall(prefix + node.path, node.name, node.data, body_nodes, node.span)


def _branch_kind(el: wxml.Element) -> Literal["if", "elif", "else"] | None:
    for attr in el.attributes:
        if attr.name == "wx:elif":
            return "elif"
        if attr.name == "wx:else":
            return "else"
        if attr.name == "wx:if":
            return "if"
    return None


def _join(a: Span, b: Span) -> Span:
    return Span.trusted(a.line, a.column, b.end_line, b.end_column)


# -- public API ----------------------------------------------------------------------------


def lower_document(doc: wxml.Document, *, load: Loader, sink: DiagnosticSink) -> Template:
    """Lower a parsed WXML file. ``load(path)`` returns another .wxml of the skill, or None."""
    local = DiagnosticSink()
    lowering = _Lowering(load, local, doc.file)
    lowering.docs[doc.file] = doc
    scope = lowering.scope(doc.file)
    root = lowering.sequence(doc.children, doc.file, "", 0)
    # Computed <template is="{{...}}"> can name any template in scope: keep them all.
    for name, (def_el, def_file) in scope.defs.items():
        lowering.register(name, def_el, def_file, 0)
    sink.extend(local, unique=True)
    return Template(doc.file, root, lowering.templates, lowering.dependencies)


def lower_component(pkg: SkillPackage, component_name: str, sink: DiagnosticSink) -> Template | None:
    """Parse and lower components/<name>/index.wxml of ``pkg``; None when there is no such file."""
    file = f"components/{component_name}/index.wxml"
    text = pkg.sources.get(file)
    if text is None:
        return None
    doc = wxml.parse_wxml(text, file=file, sink=sink)
    return lower_document(doc, load=pkg.sources.get, sink=sink)
