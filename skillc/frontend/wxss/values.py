"""Typed CSS values: the parts a declaration's value is made of, and their CSS text.

Each part knows its own normalised spelling; ``serialize_value`` joins them and can leave
chosen lengths out as objects, so later phases substitute rpx, vw or em without parsing
the value again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from tinycss2.serializer import serialize_string_value, serialize_url

__all__ = [
    "LENGTH_UNITS",
    "UNSUPPORTED_UNITS",
    "Color",
    "Dimension",
    "Function",
    "Keyword",
    "Length",
    "Number",
    "Operator",
    "Part",
    "Raw",
    "String",
    "Url",
    "format_number",
    "serialize_value",
    "value_css",
]

LENGTH_UNITS = frozenset({"rpx", "px", "vw", "em", "rem", "%"})
# Length units cards cannot render; everything else (deg, s, ...) is a plain Dimension.
UNSUPPORTED_UNITS = frozenset({"vh", "vmin", "vmax", "pt", "pc", "cm", "mm", "in", "q", "ex", "ch", "svh", "dvh"})


def format_number(value: float) -> str:
    """Shortest stable spelling: 1.0 -> 1, .50 -> 0.5, -0 -> 0; not finite (a product in calc()) -> 0."""
    if not math.isfinite(value):
        return "0"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(frozen=True, slots=True)
class Length:
    """A number with one of LENGTH_UNITS (``%`` included)."""

    value: float
    unit: str
    kind: ClassVar[str] = "length"

    def css(self) -> str:
        return format_number(self.value) + self.unit


@dataclass(frozen=True, slots=True)
class Dimension:
    """A number with a non-length unit: deg, turn, s, ms, fr, ..."""

    value: float
    unit: str
    kind: ClassVar[str] = "dimension"

    def css(self) -> str:
        return format_number(self.value) + self.unit


@dataclass(frozen=True, slots=True)
class Number:
    value: float
    kind: ClassVar[str] = "number"

    def css(self) -> str:
        return format_number(self.value)


@dataclass(frozen=True, slots=True)
class Color:
    """A hex or named color, lower-cased; rgb()/rgba()/hsl() stay Functions."""

    text: str
    kind: ClassVar[str] = "color"

    def css(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Keyword:
    name: str
    kind: ClassVar[str] = "keyword"

    def css(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class String:
    value: str
    kind: ClassVar[str] = "string"

    def css(self) -> str:
        return '"' + str(serialize_string_value(self.value)) + '"'


@dataclass(frozen=True, slots=True)
class Url:
    value: str
    kind: ClassVar[str] = "url"

    def css(self) -> str:
        return "url(" + str(serialize_url(self.value)) + ")"


@dataclass(frozen=True, slots=True)
class Operator:
    """``,`` ``/`` and the calc() operators ``+ - *``."""

    op: str
    kind: ClassVar[str] = "operator"

    def css(self) -> str:
        return self.op


@dataclass(frozen=True, slots=True)
class Raw:
    """Anything else, kept as its CSS text."""

    text: str
    kind: ClassVar[str] = "raw"

    def css(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Function:
    """``name(args)``; a bare parenthesised group (inside calc) has the name ``""``."""

    name: str
    args: tuple[Part, ...]
    kind: ClassVar[str] = "function"

    def css(self) -> str:
        return self.name + "(" + value_css(self.args) + ")"


Part = Length | Dimension | Number | Color | Keyword | String | Url | Operator | Raw | Function


def serialize_value(parts: Sequence[Part], keep: Callable[[Length], bool] | None = None) -> list[str | Length]:
    """Normalised CSS text of a value, split around the lengths ``keep`` selects.

    Later phases substitute those lengths (rpx, vw, em ...) without re-parsing.
    Separators are normalised: ``a, b`` for commas, single spaces elsewhere.
    """
    out: list[str | Length] = []
    buf: list[str] = []

    def walk(items: Sequence[Part]) -> None:
        first = True
        for part in items:
            if isinstance(part, Operator) and part.op == ",":
                buf.append(",")
                first = False
                continue
            if not first:
                buf.append(" ")
            first = False
            if isinstance(part, Function):
                buf.append(part.name + "(")
                walk(part.args)
                buf.append(")")
            elif keep is not None and isinstance(part, Length) and keep(part):
                out.append("".join(buf))
                buf.clear()
                out.append(part)
            else:
                buf.append(part.css())

    walk(parts)
    out.append("".join(buf))
    return [s for s in out if s != ""]


def value_css(parts: Sequence[Part]) -> str:
    return "".join(str(s) for s in serialize_value(parts))
