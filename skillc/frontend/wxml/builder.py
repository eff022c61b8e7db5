"""Building the tree from the parser's reductions, with a stack of the open elements.

Open and close tags are matched here with a stack, not in the grammar, so a mismatched close
tag is reported with the place of the open tag and the tree recovers like an HTML parser
would; nothing recurses on deep input, and elements deeper than ``MAX_DEPTH`` are dropped.
"""

from __future__ import annotations

import re

from lark import Token

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml.nodes import Attribute, Comment, Element, Loc, Node, Part, RawMustache, Text, Wxs
from skillc.frontend.wxml.text import (
    _CLOSE_TAG,
    _FAST_ATTR,
    _FAST_OPEN,
    _MUSTACHE_IN_DQ,
    _MUSTACHE_IN_SQ,
    _MUSTACHE_IN_TEXT,
    _TAG_NAME_END,
    _rel,
    _rel_loc,
    _split,
    _wxs_patterns,
    decode_entities,
)

__all__ = ["MAX_DEPTH"]

# Deeper elements are dropped (with WXML012): everything downstream of the parser (lowering,
# rendering, JSON) walks the tree recursively, and no real card comes near this depth.
MAX_DEPTH = 200


def _tok_loc(tok: Token) -> Loc:
    return Loc(tok.line, tok.column, tok.end_line, tok.end_column)  # type: ignore[arg-type]


class _Builder:
    """Receives the parser's reductions in source order and keeps the element stack."""

    def __init__(self, text: str, file: str, sink: DiagnosticSink) -> None:
        self.text = text
        self.file = file
        self.sink = sink
        self.root: list[Node] = []
        self.stack: list[Element] = []
        self.children = self.root
        self.parts: list[Part] = []
        self.text_start: Loc | None = None
        self.text_end: Loc | None = None
        # Text before this offset was already consumed by an earlier parser run (see _restart).
        self.floor = 0
        self.too_deep = False

    # positions not carried by a token
    def loc_at(self, start: int, end: int) -> Loc:
        return _rel_loc(self.text, 1, 1, start, end)

    def emit(self, code: str, message: str, loc: Loc, hint: str | None = None) -> None:
        self.sink.emit(code, message, file=self.file, span=loc.span(), hint=hint)

    # text and mustaches accumulate into one Text node until something else arrives
    def add_part(self, part: Part, loc: Loc) -> None:
        parts = self.parts
        if not parts:
            self.text_start = loc
        elif isinstance(part, str) and isinstance(parts[-1], str):
            parts[-1] += part
            self.text_end = loc
            return
        parts.append(part)
        self.text_end = loc

    def flush(self) -> None:
        if self.parts:
            assert self.text_start is not None and self.text_end is not None
            self.children.append(Text(tuple(self.parts), self.text_start.to(self.text_end)))
            self.parts = []

    # -- one-token items, as the parser's driver hands them over: the token's text, its start and
    # end offsets in the text, and the line and column of its start

    def text_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        if end <= self.floor:
            return
        end_line, end_column = _rel(value, line, column, len(value))
        if start < self.floor:
            cut = self.floor - start
            line, column = _rel(value, line, column, cut)
            value = value[cut:]
        self.text_run(value, Loc(line, column, end_line, end_column))

    def fast_tag_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        """An open tag the lexer matched whole: split out its name and attributes."""
        self.open_tag(value.rstrip(), line, column)

    def leaf_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        """An element with only text inside, matched whole: the open tag, the text, the close tag."""
        value = value.rstrip()
        opened = _FAST_OPEN.match(value)
        assert opened is not None
        open_end = opened.end()
        # Text holds no '<' outside its mustaches, and nothing follows the close tag.
        close_start = value.rfind("</")
        self.open_tag(value[:open_end], line, column)
        text = value[open_end:close_start]
        # Whitespace alone is what FAST_TAG would have dropped (see _WS_TO_TAG in the grammar).
        if text and not text.isspace():
            self.text_run(text, _rel_loc(value, line, column, open_end, close_start))
        self.close_tags(value[close_start:], *_rel(value, line, column, close_start))

    def close_tag_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        self.close_tags(value.rstrip(), line, column)

    def comment_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        self.flush()
        self.children.append(Comment(value[4:-3], _rel_loc(value, line, column, 0, len(value))))

    def unclosed_comment_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        self.emit(
            "WXML006",
            "comment is never closed: everything after '<!--' is part of it",
            Loc(line, column, line, column + 4),
            hint="end the comment with -->",
        )
        self.flush()
        self.children.append(Comment(value[4:], _rel_loc(value, line, column, 0, len(value))))

    def open_mustache_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        loc = _rel_loc(value, line, column, 0, len(value))
        self.unterminated_mustache(loc)
        self.add_part("{{", loc)

    def stray_lt_item(self, value: str, start: int, end: int, line: int, column: int) -> None:
        loc = _rel_loc(value, line, column, 0, len(value))
        self.emit(
            "WXML008",
            "'<' in text does not start a tag",
            loc,
            hint="write &lt; for a literal '<' (a tag name must follow '<' directly)",
        )
        self.add_part("<", loc)

    def whole_wxs(self, m: re.Match[str], line: int, column: int) -> None:
        """A ``<wxs>`` element matched whole by _WXS_WHOLE, built as the piecewise rule builds it."""
        value = m.group()
        base = m.start()  # the match's offsets are the text's; below they are the value's
        if m.group("empty") is not None:
            # <wxs .../>: the attributes end where "/>" starts, which ends the element
            open_end = m.start("empty") - base
            close = open_close = _rel_loc(value, line, column, open_end, open_end + 2)
            content = ""
        else:
            # <wxs ...>body</wxs>: the ">" before the body (or before the close tag)
            close_at = m.end("body") - base if m.group("body") is not None else value.rindex("<")
            content = m.group("body") or ""
            open_end = close_at - len(content) - 1
            open_close = _rel_loc(value, line, column, open_end, open_end + 1)
            close = _rel_loc(value, line, column, close_at, len(value))
        attrs: list[Attribute] = []
        for a in _wxs_patterns()[1].finditer(value, 4, open_end):
            name_loc = _rel_loc(value, line, column, *a.span(1))
            quoted = a.group(2)
            if quoted is None:
                attrs.append(Attribute(a.group(1), name_loc))
                continue
            raw = quoted[1:-1]
            value_loc = _rel_loc(value, line, column, *a.span(2))
            attrs.append(Attribute(a.group(1), name_loc, (decode_entities(raw),) if raw else (), value_loc, raw))
        start = Loc(line, column, line, column + 4)  # "<wxs"
        self.flush()
        self.children.append(
            Wxs(attrs, content, start.to(close), start.to(open_close), Loc(line, column + 1, line, column + 4))
        )

    def text_run(self, value: str, loc: Loc) -> None:
        if "{{" not in value:
            self.add_part(decode_entities(value), loc)
            return
        for part in _split(value, _MUSTACHE_IN_TEXT, loc.line, loc.column):
            self.add_part(part, loc)

    def close_tags(self, value: str, line: int, column: int) -> None:
        """One close tag or a run of them, trailing whitespace stripped."""
        if value.count("<") == 1:
            self.close_element(value[2:-1].strip(), _rel_loc(value, line, column, 0, len(value)))
            return
        for m in _CLOSE_TAG.finditer(value):
            self.close_element(m.group(1), _rel_loc(value, line, column, *m.span()))

    def open_tag(self, value: str, line: int, column: int) -> None:
        name_end = _TAG_NAME_END.search(value, 1)
        end = name_end.start() if name_end is not None else len(value) - 1
        self_closing = value.endswith("/>")
        attrs: list[Attribute] = []
        # Most tags are on one line: a position there is the column plus the offset.
        one_line = "\n" not in value
        for m in _FAST_ATTR.finditer(value, end, len(value) - (2 if self_closing else 1)):
            n0, n1 = m.span(1)
            name_loc = Loc(line, column + n0, line, column + n1) if one_line else _rel_loc(value, line, column, n0, n1)
            quoted = m.group(2)
            if quoted is None:
                attrs.append(Attribute(m.group(1), name_loc))
                continue
            q0, q1 = m.span(2)
            value_loc = Loc(line, column + q0, line, column + q1) if one_line else _rel_loc(value, line, column, q0, q1)
            raw = quoted[1:-1]
            if "{{" in raw:
                pattern = _MUSTACHE_IN_DQ if quoted[0] == '"' else _MUSTACHE_IN_SQ
                parts: tuple[Part, ...] = tuple(_split(raw, pattern, value_loc.line, value_loc.column + 1))
            else:
                parts = (decode_entities(raw),) if raw else ()
            attrs.append(Attribute(m.group(1), name_loc, parts, value_loc, raw))
        open_loc = _rel_loc(value, line, column, 0, len(value))
        self.add_element(value[1:end], attrs, open_loc, Loc(line, column + 1, line, column + end), self_closing)

    def open_element(self, tag_tok: Token, attrs: list[Attribute], end: Loc, self_closing: bool) -> None:
        start = _tok_loc(tag_tok)
        tag_loc = Loc(start.line, start.column + 1, start.end_line, start.end_column)
        self.add_element(str(tag_tok)[1:], attrs, start.to(end), tag_loc, self_closing)

    def add_element(self, name: str, attrs: list[Attribute], open_loc: Loc, tag_loc: Loc, self_closing: bool) -> None:
        self.flush()
        element = Element(name, attrs, [], open_loc, open_loc, tag_loc, None, self_closing)
        if len(self.stack) >= MAX_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                self.emit(
                    "WXML012",
                    f"elements are nested more than {MAX_DEPTH} levels deep; deeper elements are dropped",
                    tag_loc,
                )
        else:
            self.children.append(element)
        if not self_closing:
            self.stack.append(element)
            self.children = element.children

    def close_element(self, name: str, loc: Loc) -> None:
        self.flush()
        stack = self.stack
        if stack and stack[-1].tag == name:
            self._pop(loc)
            return
        depth = next((i for i in range(len(stack) - 1, -1, -1) if stack[i].tag == name), None)
        if depth is None:
            if stack:
                top = stack[-1]
                self.emit(
                    "WXML003",
                    f"close tag </{name}> has no open <{name}>; the innermost open element is <{top.tag}> "
                    f"(line {top.loc.line}, column {top.loc.column})",
                    loc,
                    hint="delete the close tag, or add the missing open tag",
                )
            else:
                self.emit("WXML003", f"close tag </{name}> has no open <{name}>", loc, hint="delete the close tag")
            return
        # Close everything opened after the matching element, as an HTML parser does.
        inner = stack[-1]
        self.emit(
            "WXML002",
            f"close tag </{name}> does not match <{inner.tag}> opened at line {inner.loc.line}, "
            f"column {inner.loc.column}",
            loc,
            hint=f"close <{inner.tag}> with </{inner.tag}> first",
        )
        while len(stack) - 1 > depth:
            self._pop(None)
        self._pop(loc)

    def _pop(self, close: Loc | None) -> None:
        element = self.stack.pop()
        if close is not None:
            element.close_loc = close
            element.loc = element.open_loc.to(close)
        self.children = self.stack[-1].children if self.stack else self.root

    def finish(self) -> None:
        self.flush()
        for element in self.stack:
            self.emit(
                "WXML004",
                f"<{element.tag}> is never closed",
                element.open_loc,
                hint=f"add </{element.tag}>, or write <{element.tag} ... /> for an empty element",
            )
        self.stack.clear()
        self.children = self.root

    def attr_value(self, tokens: list[Token]) -> tuple[tuple[Part, ...], Loc, str]:
        """An attribute value's tokens (quotes included) -> parts, location, raw text."""
        first = tokens[0]
        if first.type == "UNQUOTED":
            loc = _tok_loc(first)
            self.emit(
                "WXML009",
                f"attribute value {first} is not quoted",
                loc,
                hint=f'write "{first}": wcc rejects unquoted values',
            )
            return (decode_entities(str(first)),), loc, str(first)
        last = tokens[-1]
        assert first.end_pos is not None and last.start_pos is not None
        raw = self.text[first.end_pos : last.start_pos]
        return self.value_parts(tokens[1:-1]), _tok_loc(first).to(_tok_loc(last)), raw

    def value_parts(self, tokens: list[Token]) -> tuple[Part, ...]:
        parts: list[Part] = []
        for tok in tokens:
            kind = tok.type
            if kind in ("DQ_MUSTACHE", "SQ_MUSTACHE"):
                parts.append(RawMustache(str(tok)[2:-2], _tok_loc(tok)))
                continue
            if kind == "OPEN_MUSTACHE":
                self.unterminated_mustache(_tok_loc(tok))
            value = decode_entities(str(tok))
            if parts and isinstance(parts[-1], str):
                parts[-1] += value
            else:
                parts.append(value)
        return tuple(parts)

    def unterminated_mustache(self, loc: Loc) -> None:
        self.emit(
            "WXML007",
            "'{{' is not closed by '}}' (or a string inside it is not closed)",
            loc,
            hint="close the expression with }}; inside an attribute the value's own quote also ends it",
        )
