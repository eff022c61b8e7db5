"""Which rendered nodes read which data paths: watch records and the trie that finds them.

While a card renders, each binding's dependencies (``item.price``) are resolved through the
loop scopes to absolute data paths (``drinks.3.price``) and a :class:`Watch` is registered
under each in a :class:`Trie`. A setData path then finds the watchers on its prefixes (they read
an enclosing object) and in its subtree (they read something inside).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillc.frontend.expr import dependencies
from skillc.ir.datapath import DataPath, normalise
from skillc.ir.expreval import Scope
from skillc.ir.template import Part

if TYPE_CHECKING:
    from skillc.ir.instance import Elem, Life, TextRun

# A loop variable resolves to an absolute data path, to None (unknown: the items were computed)
# or to INDEX (the loop index: only a structural change can change it).
INDEX = ("<index>",)
PathScope = Mapping[str, DataPath | None]

Dep = tuple[str | int, tuple[str | int, ...]]  # (head name, normalised rest); "length" folded


def deps_of(parts: tuple[Part, ...]) -> tuple[Dep, ...]:
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


def resolve(head: str | int, rest: DataPath, paths: PathScope, root_known: bool) -> DataPath | None:
    """The absolute data path of ``head.rest`` through the loop scopes ``paths``, or None: the
    loop index changes only with the loop's structure, computed items are re-rendered by their
    loop, and inside a template call nothing is watched one by one."""
    if isinstance(head, str) and head in paths:
        base = paths[head]
        if base is None or base is INDEX:
            return None
        return (*base, *rest) if rest else base
    if not root_known:
        return None
    return (head, *rest)


class Watch:
    """Something to recompute when a path it reads changes."""

    __slots__ = ("items_path", "kind", "life", "owner", "scope", "state", "tnode")

    def __init__(self, kind: str, owner: Elem | TextRun, tnode: Any = None, life: Life | None = None) -> None:
        self.kind = kind  # "elem" | "text" | "if" | "for" | "call"
        self.owner = owner
        self.tnode = tnode
        self.state: Any = None
        self.items_path: DataPath | None = None
        self.scope: Scope | None = None
        # Structural watchers (if, for, call) belong to one rendering of their parent's children.
        self.life = life


def alive(w: Watch) -> bool:
    return w.owner.alive and (w.life is None or w.life.alive)


class Trie(list["Watch"]):
    """A node of the path trie: the watches registered at its path (the node is that list) and
    its children by path segment.

    A render registers several watches per node it draws, and a trie node per path they read: the
    node being its own list of watches, not an object holding one, is one container fewer per
    path for the cycle collector to walk after every first render (bench/growth.py)."""

    __slots__ = ("kids",)

    def __init__(self) -> None:
        super().__init__()
        self.kids: dict[str | int, Trie] = {}

    def add(self, path: DataPath, watch: Watch) -> None:
        node = self
        for seg in path:
            nxt = node.kids.get(seg)
            if nxt is None:
                nxt = node.kids[seg] = Trie()
            node = nxt
        node.append(watch)

    def collect(self, path: DataPath, out: dict[int, Watch]) -> None:
        node = self
        for seg in path:
            for w in node:
                if alive(w):
                    out[id(w)] = w
            nxt = node.kids.get(seg)
            if nxt is None:
                return
            node = nxt
        stack = [node]
        while stack:
            n = stack.pop()
            live = [w for w in n if alive(w)]
            n[:] = live  # drop the dead on the way
            for w in live:
                out[id(w)] = w
            stack.extend(n.kids.values())

    def compact(self) -> int:
        """Drop dead watchers and empty branches everywhere; return how many live ones remain."""
        live_total = 0
        stack = [self]
        while stack:
            n = stack.pop()
            n[:] = [w for w in n if alive(w)]
            live_total += len(n)
            for seg in [seg for seg, kid in n.kids.items() if not kid and not kid.kids]:
                del n.kids[seg]
            stack.extend(n.kids.values())
        return live_total
