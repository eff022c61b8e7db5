"""Evaluate parsed ``{{ }}`` expressions against component data, the way wcc's output does.

The observable rules (measured against wcc, see docs/expressions.md): a missing name or
path is ``undefined``, never an error; names resolve in loop scopes before the component
data, by own keys only (``toString`` is not inherited); calls evaluate to ``undefined``
because a card has no WXS functions; ``{...x}`` alone is ``x`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from skillc.frontend.expr import (
    ArrayLit,
    Binary,
    Call,
    Conditional,
    Expr,
    Ident,
    Index,
    Literal,
    Logical,
    Member,
    ObjectLit,
    Property,
    Spread,
    Unary,
)
from skillc.ir.jsvalue import (
    UNDEFINED,
    JSValue,
    add,
    arithmetic,
    bitwise,
    compare,
    get_member,
    loose_equals,
    negate,
    strict_equals,
    to_boolean,
    to_int32,
)

__all__ = ["Scope", "evaluate"]


class Scope:
    """A lookup chain: loop variables (``item``/``index`` or ``wx:for-item`` names) over the
    component data."""

    __slots__ = ("_names", "_parent")

    def __init__(self, data: Mapping[str, JSValue], parent: Scope | None = None) -> None:
        self._names = data
        self._parent = parent

    def child(self, names: Mapping[str, JSValue]) -> Scope:
        return Scope(names, self)

    def lookup(self, name: str) -> JSValue:
        scope: Scope | None = self
        while scope is not None:
            names = scope._names
            if name in names:
                return names[name]
            scope = scope._parent
        return UNDEFINED


def evaluate(expr: Expr, scope: Scope) -> JSValue:
    """The value of ``expr`` in ``scope``. Never raises on user data."""
    return _EVAL[type(expr)](expr, scope)


def _literal(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Literal)
    return expr.value


def _ident(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Ident)
    return scope.lookup(expr.name)


def _member(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Member)
    return get_member(evaluate(expr.obj, scope), expr.prop)


def _index(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Index)
    obj = evaluate(expr.obj, scope)
    if obj is None or obj is UNDEFINED:
        return UNDEFINED  # wcc does not evaluate the key of a missing object
    return get_member(obj, evaluate(expr.index, scope))


def _array(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, ArrayLit)
    out: list[JSValue] = []
    for item in expr.items:
        if isinstance(item, Spread):
            # Reported at parse time (wcc rejects it); evaluated as JavaScript would.
            value = evaluate(item.arg, scope)
            if isinstance(value, list | str):
                out.extend(value)
        else:
            out.append(evaluate(item, scope))
    return out


def _spread_into(target: dict[str, JSValue], value: JSValue) -> None:
    if isinstance(value, Mapping):
        target.update(value)
    elif isinstance(value, list | str):
        for i, item in enumerate(value):
            target[str(i)] = item


def _object(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, ObjectLit)
    entries = expr.entries
    if len(entries) == 1 and isinstance(entries[0], Spread):
        # wcc compiles a lone spread to the operand itself: {...s} is s, even a string.
        return evaluate(entries[0].arg, scope)
    out: dict[str, JSValue] = {}
    for entry in entries:
        if isinstance(entry, Property):
            out[entry.key] = evaluate(entry.value, scope)
        else:
            _spread_into(out, evaluate(entry.arg, scope))
    return out


def _spread(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Spread)
    return evaluate(expr.arg, scope)


def _unary(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Unary)
    value = evaluate(expr.arg, scope)
    op = expr.op
    if op == "!":
        return not to_boolean(value)
    if op == "-":
        return negate(value)
    if op == "~":
        return ~to_int32(value)
    return arithmetic("-", value, 0)  # unary + (reported at parse time): ToNumber


def _binary(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Binary)
    a = evaluate(expr.left, scope)
    b = evaluate(expr.right, scope)
    op = expr.op
    if op == "+":
        return add(a, b)
    if op in ("-", "*", "/", "%"):
        return arithmetic(op, a, b)
    if op in ("<", ">", "<=", ">="):
        return compare(op, a, b)
    if op == "===":
        return strict_equals(a, b)
    if op == "!==":
        return not strict_equals(a, b)
    if op == "==":
        return loose_equals(a, b)
    if op == "!=":
        return not loose_equals(a, b)
    return bitwise(op, a, b)


def _logical(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Logical)
    left = evaluate(expr.left, scope)
    if expr.op == "&&":
        return evaluate(expr.right, scope) if to_boolean(left) else left
    return left if to_boolean(left) else evaluate(expr.right, scope)


def _conditional(expr: Expr, scope: Scope) -> JSValue:
    assert isinstance(expr, Conditional)
    branch = expr.consequent if to_boolean(evaluate(expr.test, scope)) else expr.alternate
    return evaluate(branch, scope)


def _call(expr: Expr, scope: Scope) -> JSValue:
    # Reported at parse time. In wcc only WXS functions are callable and cards have none.
    return UNDEFINED


_EVAL: dict[type[Expr], Callable[[Expr, Scope], JSValue]] = {
    Literal: _literal,
    Ident: _ident,
    Member: _member,
    Index: _index,
    ArrayLit: _array,
    ObjectLit: _object,
    Spread: _spread,
    Unary: _unary,
    Binary: _binary,
    Logical: _logical,
    Conditional: _conditional,
    Call: _call,
}
