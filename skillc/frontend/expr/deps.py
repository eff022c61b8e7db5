"""The data paths an expression reads, which the evaluator watches for changes.

A static path (``order.lines[0].price``) is read off member and literal-index chains; any
other node contributes the paths of its children. Nothing is evaluated.
"""

from __future__ import annotations

from dataclasses import fields

from skillc.frontend.expr import nodes
from skillc.frontend.expr.nodes import Expr

__all__ = ["called_names", "dependencies"]


def dependencies(expr: Expr) -> frozenset[tuple[str | int, ...]]:
    """The data paths an expression reads, as far as they are static.

    ``order.lines[0].price`` -> {("order", "lines", 0, "price")}; a computed index cuts the
    path at its object: ``a[i]`` -> {("a",), ("i",)}. Paths are not reduced to prefixes.
    """
    found: set[tuple[str | int, ...]] = set()
    _collect(expr, found)
    return frozenset(found)


def _static_path(expr: Expr) -> tuple[str | int, ...] | None:
    parts: list[str | int] = []
    node = expr
    while True:
        if isinstance(node, nodes.Ident):
            parts.append(node.name)
            parts.reverse()
            return tuple(parts)
        if isinstance(node, nodes.Member):
            parts.append(node.prop)
            node = node.obj
        elif isinstance(node, nodes.Index) and isinstance(node.index, nodes.Literal):
            key = node.index.value
            if isinstance(key, bool) or not isinstance(key, (str, int, float)):
                return None
            if isinstance(key, float):
                if not key.is_integer():
                    return None
                key = int(key)
            parts.append(key)
            node = node.obj
        else:
            return None


def called_names(expr: Expr) -> frozenset[str]:
    """The names an expression only calls as plain functions (``formatPrice`` in
    ``formatPrice(p)``, not ``shown`` in ``shown(1) + shown``): WeChat renders such a call as
    empty, so the name is never read as data."""
    called: set[int] = set()
    idents: list[nodes.Ident] = []
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.Call) and isinstance(node.callee, nodes.Ident):
            called.add(id(node.callee))
        if isinstance(node, nodes.Ident):
            idents.append(node)
        if isinstance(node, tuple):
            stack.extend(node)
        elif isinstance(node, Expr | nodes.Property):
            stack.extend(getattr(node, f.name) for f in fields(node) if f.name != "span")
    read = {i.name for i in idents if id(i) not in called}
    return frozenset(i.name for i in idents if id(i) in called and i.name not in read)


def _collect(expr: Expr, found: set[tuple[str | int, ...]]) -> None:
    path = _static_path(expr)
    if path is not None:
        found.add(path)
        return
    if isinstance(expr, nodes.Member):
        _collect(expr.obj, found)
    elif isinstance(expr, nodes.Index):
        obj_path = _static_path(expr.obj)
        if obj_path is not None:
            found.add(obj_path)
        else:
            _collect(expr.obj, found)
        _collect(expr.index, found)
    elif isinstance(expr, nodes.ArrayLit):
        for item in expr.items:
            _collect(item, found)
    elif isinstance(expr, nodes.ObjectLit):
        for entry in expr.entries:
            _collect(entry.value if isinstance(entry, nodes.Property) else entry.arg, found)
    elif isinstance(expr, nodes.Spread | nodes.Unary):
        _collect(expr.arg, found)
    elif isinstance(expr, nodes.Binary | nodes.Logical):
        _collect(expr.left, found)
        _collect(expr.right, found)
    elif isinstance(expr, nodes.Conditional):
        _collect(expr.test, found)
        _collect(expr.consequent, found)
        _collect(expr.alternate, found)
    elif isinstance(expr, nodes.Call):
        # `list.join(",")` reads `list`; the method name is not data.
        _collect(expr.callee.obj if isinstance(expr.callee, nodes.Member) else expr.callee, found)
        for arg in expr.args:
            _collect(arg, found)
