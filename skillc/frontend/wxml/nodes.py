"""The WXML tree: elements, text, comments and ``<wxs>``, with a source range on every part.

Text and attribute values keep their mustaches as ``RawMustache`` (source and position);
the expression parser reads them later, during lowering. Nothing here parses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from skillc.diagnostics import Span

__all__ = ["Attribute", "Comment", "Document", "Element", "Loc", "Node", "Part", "RawMustache", "Text", "Wxs"]


class Loc(NamedTuple):
    """A source range as lark reports it: 1-based line and column, exclusive end.

    A named tuple, not a frozen dataclass: the parser builds several per element, and a
    tuple is built several times faster (immutable and compared field by field all the same).
    """

    line: int
    column: int
    end_line: int
    end_column: int

    def span(self) -> Span:
        found = _SPANS.get(self)
        if found is None:
            end_column = self.end_column
            if self.end_line == self.line and end_column <= self.column:
                end_column = self.column + 1
            found = Span.trusted(self.line, self.column, self.end_line, end_column)
            if len(_SPANS) >= _SPANS_LIMIT:
                _SPANS.clear()
            _SPANS[self] = found
        return found

    def to(self, other: Loc) -> Loc:
        return Loc(self.line, self.column, other.end_line, other.end_column)

    def to_json(self) -> str:
        return f"{self.line}:{self.column}-{self.end_line}:{self.end_column}"


# Lowering asks for the span of one place several times (an element, its wx:if branch, a
# template body lowered once per call): equal places share one immutable Span.
_SPANS: dict[Loc, Span] = {}
_SPANS_LIMIT = 4096


def forget_spans() -> None:
    """Empty the shared spans (a benchmark times a cold build with it)."""
    _SPANS.clear()


@dataclass(frozen=True, slots=True)
class RawMustache:
    """``{{ source }}`` as written; ``loc`` covers the braces. Parsed later by the expression parser."""

    source: str
    loc: Loc

    @property
    def source_line(self) -> int:
        return self.loc.line

    @property
    def source_column(self) -> int:
        """Column of the first character inside the braces."""
        return self.loc.column + 2


Part = str | RawMustache


@dataclass(slots=True)
class Attribute:
    name: str
    name_loc: Loc
    # None for an attribute written without a value (``<view hidden>``).
    value: tuple[Part, ...] | None = None
    # The value with its quotes; None when there is no value.
    value_loc: Loc | None = None
    raw: str | None = None  # the value text as written, without quotes, entities not decoded

    @property
    def loc(self) -> Loc:
        return self.name_loc.to(self.value_loc) if self.value_loc is not None else self.name_loc


@dataclass(slots=True)
class Element:
    tag: str
    attributes: list[Attribute]
    children: list[Node]
    loc: Loc  # from "<" of the open tag to ">" of the close tag (or of the open tag)
    open_loc: Loc  # the open tag
    tag_loc: Loc  # the tag name in the open tag
    close_loc: Loc | None = None
    self_closing: bool = False

    def attribute(self, name: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        return None


@dataclass(slots=True)
class Text:
    parts: tuple[Part, ...]
    loc: Loc


@dataclass(slots=True)
class Comment:
    text: str
    loc: Loc


@dataclass(slots=True)
class Wxs:
    """``<wxs>`` keeps its JavaScript unparsed; cards do not run it (lowering reports it)."""

    attributes: list[Attribute]
    content: str
    loc: Loc
    open_loc: Loc
    tag_loc: Loc

    def attribute(self, name: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        return None


Node = Element | Text | Comment | Wxs


@dataclass(slots=True)
class Document:
    file: str
    children: list[Node] = field(default_factory=list)
