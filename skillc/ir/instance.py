"""What a rendering keeps per template node: element info, element and text instances, frames.

:class:`ElemInfo` is what an element's template node says once for every card; :class:`Elem`
and :class:`TextRun` are one card's instances, kept so an update can recompute them; a
:class:`Frame` is what the bindings of a template node read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillc.frontend.expr import Expr
from skillc.ir.expreval import Scope
from skillc.ir.render import RenderNode
from skillc.ir.styles import NO_STYLE, ElementKey, ResolvedStyle
from skillc.ir.template import Binding, Element, Node, Part, Text
from skillc.ir.watch import PathScope, deps_of

ROOT_KEY = ElementKey("root")
_CHAINS: dict[tuple[ElementKey, ...], tuple[ElementKey, ...]] = {}
_CHAINS_LIMIT = 4096


class Ids:
    """Maps template paths to node ids inside loop instances and template calls."""

    __slots__ = ("rprefix", "tprefix")

    def __init__(self, tprefix: str, rprefix: str) -> None:
        self.tprefix = tprefix
        self.rprefix = rprefix

    def of(self, path: str) -> str:
        return self.rprefix + path[len(self.tprefix) :]


@dataclass(slots=True, eq=False)
class Frame:
    """What a template node's bindings read: ``scope``; ``paths`` and ``root_known`` resolve that
    to data paths (see :func:`skillc.ir.watch.resolve`); ``ids`` gives its node ids.

    Only a loop item and a template call change these, so one frame serves every node between:
    the element a node renders into changes at every level and is passed beside the frame.
    """

    scope: Scope
    paths: PathScope
    root_known: bool
    ids: Ids


def _single_expr(b: Binding) -> Expr | None:
    single = b.single
    return single.expr if single is not None else None


class ElemInfo:
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
        self.deps = deps_of(tuple(parts))


class Life:
    """One rendering of an element's children; watchers of its structure die with it."""

    __slots__ = ("alive",)

    def __init__(self) -> None:
        self.alive = True


class Elem:
    """An element instance: what is needed to recompute it and to re-render its children.

    Instances point down only (to their kids, node and frame), never up: a dropped card's trees
    are then freed by reference counting alone, and the cycle collector, which otherwise walks
    every live tree again and again while a large list renders, has nothing of ours to find.
    What an element needs of its parent is copied in: ``pstyle`` (the parent's resolved style,
    None under the root) and ``depth``; the parent refreshes ``pstyle`` when it restyles.
    """

    __slots__ = (
        "alive",
        "ancestors",
        "below",
        "depth",
        "frame",
        "hover",
        "inline",
        "key",
        "kids",
        "life",
        "node",
        "pstyle",
        "sig",
        "style",
        "tchildren",
        "tnode",
    )

    def __init__(self, tnode: Element | None, node: RenderNode, parent: Elem | None, frame: Frame) -> None:
        self.tnode = tnode
        self.node = node
        self.frame = frame  # what it reads, and its children too
        self.alive = True
        # Made on demand by the first structural watcher (wx:if, wx:for, template call) among the
        # children: most elements have none, and one object fewer per element is felt at 10 000 items.
        self.life: Life | None = None
        self.sig: tuple[Any, ...] | None = None  # the bound values of the last fill
        self.kids: list[Elem | TextRun] = []
        if parent is None:
            self.depth = 0
            self.ancestors: tuple[ElementKey, ...] = ()
            self.pstyle: ResolvedStyle | None = None
        else:
            self.depth = parent.depth + 1
            # What selectors see of the ancestors (root excluded), and the parent's style.
            self.ancestors = parent.inner_ancestors()
            self.pstyle = parent.style if parent.depth else None
        self.below: tuple[ElementKey, ...] | None = None
        self.key = ROOT_KEY
        self.inline: str | None = None
        self.hover: str | None = None
        self.style: ResolvedStyle = NO_STYLE
        self.tchildren: list[Node] = tnode.children if tnode is not None else []

    def inner_ancestors(self) -> tuple[ElementKey, ...]:
        """The ancestor keys this element's children match selectors against: one tuple shared
        by all of them (the root's children see none)."""
        below = self.below
        if below is None:
            below = (*self.ancestors, self.key) if self.depth else ()
            # Interned, as element keys are: the items of a list share a few distinct chains.
            below = self.below = _CHAINS.setdefault(below, below)
            if len(_CHAINS) > _CHAINS_LIMIT:
                _CHAINS.clear()
        return below

    def structure(self) -> Life:
        """The current rendering of the children, for the structural watchers among them."""
        life = self.life
        if life is None:
            life = self.life = Life()
        return life

    def end_structure(self) -> None:
        """The children are about to be re-rendered: their structural watchers die."""
        if self.life is not None:
            self.life.alive = False
            self.life = None

    def kill(self) -> None:
        stack: list[Elem | TextRun] = list(self.kids)
        while stack:
            k = stack.pop()
            k.alive = False
            if isinstance(k, Elem):
                stack.extend(k.kids)


class TextRun:
    __slots__ = ("alive", "node", "scope", "tnode")

    def __init__(self, tnode: Text, node: RenderNode, scope: Scope) -> None:
        self.tnode = tnode
        self.node = node
        self.scope = scope
        self.alive = True
