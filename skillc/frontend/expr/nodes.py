"""The expression tree: one frozen node class per construct of the ``{{ }}`` language.

The parser builds these, the evaluator in ``skillc.ir`` walks them, and ``deps`` reads the
data paths off them; nothing here parses or evaluates. ``UNDEFINED`` and ``Mustache`` sit
here too because both are values of the tree the rest of the compiler passes around.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from skillc.diagnostics import Span

__all__ = [
    "UNDEFINED",
    "ArrayLit",
    "Binary",
    "Call",
    "Conditional",
    "Expr",
    "Ident",
    "Index",
    "Literal",
    "LiteralValue",
    "Logical",
    "Member",
    "Mustache",
    "ObjectLit",
    "Property",
    "Spread",
    "Unary",
    "Undefined",
]


class Undefined:
    """JavaScript ``undefined``. A singleton distinct from None, which stands for ``null``.

    It lives here rather than in skillc/ir/jsvalue.py because the literal ``undefined`` is
    part of the language the frontend parses, and the frontend must not import ``ir``.
    """

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Final = Undefined()

LiteralValue = None | bool | int | float | str | Undefined


@dataclass(frozen=True, slots=True)
class Expr:
    span: Span


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    value: LiteralValue


@dataclass(frozen=True, slots=True)
class Ident(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Member(Expr):
    obj: Expr
    prop: str


@dataclass(frozen=True, slots=True)
class Index(Expr):
    obj: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Spread(Expr):
    arg: Expr


@dataclass(frozen=True, slots=True)
class ArrayLit(Expr):
    items: tuple[Expr, ...]  # a Spread item is reported (wcc rejects it) but kept


@dataclass(frozen=True, slots=True)
class Property:
    key: str
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ObjectLit(Expr):
    entries: tuple[Property | Spread, ...]


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str  # "!", "-", "~"; "+" is reported (wcc rejects it) but kept
    arg: Expr


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Logical(Expr):
    op: str  # "&&" or "||"
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Conditional(Expr):
    test: Expr
    consequent: Expr
    alternate: Expr


@dataclass(frozen=True, slots=True)
class Call(Expr):
    callee: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Mustache:
    source: str  # text between the braces
    expr: Expr | None  # None when it did not parse (a diagnostic was emitted)
    span: Span  # of the whole {{...}}
