"""Moving a parsed one-line expression to another place in a file.

The same ``{{ }}`` source recurs many times in a skill and across skills (``item.id``,
``index + 1``, a class-name helper call): ``parse_expression`` parses each distinct source once
and moves that tree to where the text actually is. On one line a move is a column shift: every
span keeps its length, only its line and column change, so the tree is rebuilt node for node
with the shifted spans (several times cheaper than tokenizing and parsing it again).
"""

from __future__ import annotations

from collections.abc import Callable

from skillc.diagnostics import Span
from skillc.frontend.expr import nodes
from skillc.frontend.expr.nodes import Expr

_span = Span.trusted


def moved(expr: Expr, line: int, shift: int) -> Expr:
    """``expr`` (parsed on one line) on ``line``, every column ``shift`` further right."""
    return _MOVE[type(expr)](expr, line, shift)


def _at(span: Span, line: int, shift: int) -> Span:
    return _span(line, span.column + shift, line, span.end_column + shift)


def _literal(e: nodes.Literal, line: int, shift: int) -> Expr:
    return nodes.Literal(_at(e.span, line, shift), e.value)


def _ident(e: nodes.Ident, line: int, shift: int) -> Expr:
    return nodes.Ident(_at(e.span, line, shift), e.name)


def _member(e: nodes.Member, line: int, shift: int) -> Expr:
    return nodes.Member(_at(e.span, line, shift), moved(e.obj, line, shift), e.prop)


def _index(e: nodes.Index, line: int, shift: int) -> Expr:
    return nodes.Index(_at(e.span, line, shift), moved(e.obj, line, shift), moved(e.index, line, shift))


def _spread(e: nodes.Spread, line: int, shift: int) -> nodes.Spread:
    return nodes.Spread(_at(e.span, line, shift), moved(e.arg, line, shift))


def _array(e: nodes.ArrayLit, line: int, shift: int) -> Expr:
    return nodes.ArrayLit(_at(e.span, line, shift), tuple(moved(item, line, shift) for item in e.items))


def _entry(e: nodes.Property | nodes.Spread, line: int, shift: int) -> nodes.Property | nodes.Spread:
    if isinstance(e, nodes.Spread):
        return _spread(e, line, shift)
    return nodes.Property(e.key, moved(e.value, line, shift), _at(e.span, line, shift))


def _object(e: nodes.ObjectLit, line: int, shift: int) -> Expr:
    return nodes.ObjectLit(_at(e.span, line, shift), tuple(_entry(entry, line, shift) for entry in e.entries))


def _unary(e: nodes.Unary, line: int, shift: int) -> Expr:
    return nodes.Unary(_at(e.span, line, shift), e.op, moved(e.arg, line, shift))


def _binary(e: nodes.Binary, line: int, shift: int) -> Expr:
    return nodes.Binary(_at(e.span, line, shift), e.op, moved(e.left, line, shift), moved(e.right, line, shift))


def _logical(e: nodes.Logical, line: int, shift: int) -> Expr:
    return nodes.Logical(_at(e.span, line, shift), e.op, moved(e.left, line, shift), moved(e.right, line, shift))


def _conditional(e: nodes.Conditional, line: int, shift: int) -> Expr:
    return nodes.Conditional(
        _at(e.span, line, shift),
        moved(e.test, line, shift),
        moved(e.consequent, line, shift),
        moved(e.alternate, line, shift),
    )


def _call(e: nodes.Call, line: int, shift: int) -> Expr:
    return nodes.Call(
        _at(e.span, line, shift), moved(e.callee, line, shift), tuple(moved(arg, line, shift) for arg in e.args)
    )


# One mover per node class; a class missing here fails loudly (KeyError) rather than being
# returned unmoved with the spans of another place.
_MOVE: dict[type, Callable[..., Expr]] = {
    nodes.Literal: _literal,
    nodes.Ident: _ident,
    nodes.Member: _member,
    nodes.Index: _index,
    nodes.Spread: _spread,
    nodes.ArrayLit: _array,
    nodes.ObjectLit: _object,
    nodes.Unary: _unary,
    nodes.Binary: _binary,
    nodes.Logical: _logical,
    nodes.Conditional: _conditional,
    nodes.Call: _call,
}
