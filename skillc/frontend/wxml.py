"""WXML source -> typed AST with positions on every node, attribute name and attribute value.

The lark grammar (wxml.lark) is flat: tags, attributes, text, comments. This module matches
open and close tags with a stack, so a mismatched close tag is reported with the place of the
open tag and the tree recovers like an HTML parser would; nothing recurses on deep input.
Lark runs with an inline transformer (no parse tree is built), which is what makes a 1 MB
template parse in about a second.

Malformed input never raises: it becomes a diagnostic, and the parser goes on (restarting
the LALR parser after the defect when it must) and returns the tree it could build.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from skillc.diagnostics import DiagnosticSink, Span

# Deeper elements are dropped (with WXML012): everything downstream of the parser (lowering,
# rendering, JSON) walks the tree recursively, and no real card comes near this depth.
MAX_DEPTH = 200
# After this many restarts the rest of the file is not parsed (WXML013).
MAX_RESTARTS = 100

# -- AST ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Loc:
    """A source range as lark reports it: 1-based line and column, exclusive end."""

    line: int
    column: int
    end_line: int
    end_column: int

    def span(self) -> Span:
        end_column = self.end_column
        if self.end_line == self.line and end_column <= self.column:
            end_column = self.column + 1
        return Span.trusted(self.line, self.column, self.end_line, end_column)

    def to(self, other: Loc) -> Loc:
        return Loc(self.line, self.column, other.end_line, other.end_column)

    def to_json(self) -> str:
        return f"{self.line}:{self.column}-{self.end_line}:{self.end_column}"


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


# -- entities ------------------------------------------------------------------------------

_ENTITY = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos|nbsp));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'", "nbsp": "\u00a0"}


def _entity(m: re.Match[str]) -> str:
    dec, hexa, name = m.groups()
    if name is not None:
        return _NAMED[name]
    code = int(dec) if dec is not None else int(hexa, 16)
    # Surrogates and out-of-range code points stay as written, as a browser would show them.
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return m.group(0)
    return chr(code)


def decode_entities(text: str) -> str:
    """Decode &lt; &gt; &amp; &quot; &apos; &nbsp; and numeric references; others stay as written."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


# The same patterns as the grammar's, to split what one token holds.
_MUSTACHE_IN_TEXT = re.compile(
    r"""\{\{(?:[^{}"']|\{(?!\{)|\}(?!\})|"(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*')*\}\}"""
)
_MUSTACHE_IN_DQ = re.compile(r"""\{\{(?:[^{}"']|\{(?!\{)|\}(?!\})|'(?:[^'"\\]|\\[^"])*')*\}\}""")
_MUSTACHE_IN_SQ = re.compile(r"""\{\{(?:[^{}"']|\{(?!\{)|\}(?!\})|"(?:[^"'\\]|\\[^'])*")*\}\}""")
# Inside a FAST_TAG token the lexer has checked the syntax: a quoted value cannot hold its quote.
_FAST_ATTR = re.compile(r"""([A-Za-z_:@][\w\-.:@]*)(?:\s*=\s*("[^"]*"|'[^']*'))?""")
_TAG_NAME_END = re.compile(r"[\s/>]")


def _rel(value: str, line: int, column: int, offset: int) -> tuple[int, int]:
    """Line and column of ``value[offset]`` when ``value`` starts at ``line``, ``column``."""
    if "\n" not in value:
        return line, column + offset
    newlines = value.count("\n", 0, offset)
    if not newlines:
        return line, column + offset
    return line + newlines, offset - value.rfind("\n", 0, offset)


def _rel_loc(value: str, line: int, column: int, start: int, end: int) -> Loc:
    """The Loc of ``value[start:end]`` when ``value`` starts at ``line``, ``column``."""
    return Loc(*_rel(value, line, column, start), *_rel(value, line, column, end))


def _split(value: str, pattern: re.Pattern[str], line: int, column: int) -> list[Part]:
    """Literal text (entities decoded) and mustaches (with positions) of a text or value."""
    parts: list[Part] = []
    pos = 0
    for m in pattern.finditer(value):
        start, end = m.span()
        if start > pos:
            parts.append(decode_entities(value[pos:start]))
        parts.append(RawMustache(value[start + 2 : end - 2], _rel_loc(value, line, column, start, end)))
        pos = end
    if pos < len(value):
        parts.append(decode_entities(value[pos:]))
    return parts


# -- building the tree -------------------------------------------------------------------


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

    def text_token(self, tok: Token) -> None:
        start = tok.start_pos
        assert start is not None and tok.end_pos is not None
        if tok.end_pos <= self.floor:
            return
        value = str(tok)
        line: int = tok.line  # type: ignore[assignment]
        column: int = tok.column  # type: ignore[assignment]
        if start < self.floor:
            cut = self.floor - start
            line, column = _rel(value, line, column, cut)
            value = value[cut:]
        loc = Loc(line, column, tok.end_line, tok.end_column)  # type: ignore[arg-type]
        if "{{" not in value:
            self.add_part(decode_entities(value), loc)
            return
        for part in _split(value, _MUSTACHE_IN_TEXT, line, column):
            self.add_part(part, loc)

    def fast_tag(self, tok: Token) -> None:
        """An open tag the lexer matched whole: split out its name and attributes."""
        value = str(tok).rstrip()
        line: int = tok.line  # type: ignore[assignment]
        column: int = tok.column  # type: ignore[assignment]
        name_end = _TAG_NAME_END.search(value, 1)
        end = name_end.start() if name_end is not None else len(value) - 1
        self_closing = value.endswith("/>")
        attrs: list[Attribute] = []
        for m in _FAST_ATTR.finditer(value, end, len(value) - (2 if self_closing else 1)):
            n0, n1 = m.span(1)
            attr = Attribute(m.group(1), _rel_loc(value, line, column, n0, n1))
            quoted = m.group(2)
            if quoted is not None:
                attr.value_loc = value_loc = _rel_loc(value, line, column, *m.span(2))
                raw = quoted[1:-1]
                attr.raw = raw
                if "{{" in raw:
                    pattern = _MUSTACHE_IN_DQ if quoted[0] == '"' else _MUSTACHE_IN_SQ
                    attr.value = tuple(_split(raw, pattern, value_loc.line, value_loc.column + 1))
                else:
                    attr.value = (decode_entities(raw),) if raw else ()
            attrs.append(attr)
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
                self.unterminated_mustache(tok)
            value = decode_entities(str(tok))
            if parts and isinstance(parts[-1], str):
                parts[-1] += value
            else:
                parts.append(value)
        return tuple(parts)

    def unterminated_mustache(self, tok: Token) -> None:
        self.emit(
            "WXML007",
            "'{{' is not closed by '}}' (or a string inside it is not closed)",
            _tok_loc(tok),
            hint="close the expression with }}; inside an attribute the value's own quote also ends it",
        )


class _Callbacks(Transformer[Token, None]):
    """Inline reductions: lark calls these while parsing, in source order."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.b: _Builder | None = None

    def _builder(self) -> _Builder:
        assert self.b is not None
        return self.b

    def start(self, _children: list[Any]) -> None:
        return None

    def items(self, _children: list[Any]) -> None:
        return None

    def text(self, children: list[Token]) -> None:
        self._builder().text_token(children[0])

    def open_mustache(self, children: list[Token]) -> None:
        b = self._builder()
        b.unterminated_mustache(children[0])
        b.add_part("{{", _tok_loc(children[0]))

    def stray_lt(self, children: list[Token]) -> None:
        b = self._builder()
        loc = _tok_loc(children[0])
        b.emit(
            "WXML008",
            "'<' in text does not start a tag",
            loc,
            hint="write &lt; for a literal '<' (a tag name must follow '<' directly)",
        )
        b.add_part("<", loc)

    def close_tag(self, children: list[Token]) -> None:
        tok = children[0]
        value = str(tok).rstrip()
        line: int = tok.line  # type: ignore[assignment]
        column: int = tok.column  # type: ignore[assignment]
        loc = _rel_loc(value, line, column, 0, len(value))
        self._builder().close_element(value[2:-1].strip(), loc)

    def comment(self, children: list[Token]) -> None:
        b = self._builder()
        b.flush()
        b.children.append(Comment(str(children[0])[4:-3], _tok_loc(children[0])))

    def unclosed_comment(self, children: list[Token]) -> None:
        b = self._builder()
        tok = children[0]
        loc = _tok_loc(tok)
        b.emit(
            "WXML006",
            "comment is never closed: everything after '<!--' is part of it",
            Loc(loc.line, loc.column, loc.line, loc.column + 4),
            hint="end the comment with -->",
        )
        b.flush()
        b.children.append(Comment(str(tok)[4:], loc))

    def tag(self, children: list[Any]) -> None:
        if len(children) == 1:
            self._builder().fast_tag(children[0])
            return
        end: Token = children[-1]
        self._builder().open_element(children[0], children[1:-1], _tok_loc(end), end.type == "SLASHGT")

    def wxs(self, children: list[Any]) -> None:
        b = self._builder()
        b.flush()
        open_tok: Token = children[0]
        attrs = [c for c in children if isinstance(c, Attribute)]
        content = ""
        open_end = children[len(attrs) + 1]
        for tok in children[len(attrs) + 1 :]:
            if tok.type == "WXS_BODY":
                content = str(tok)
        start = _tok_loc(open_tok)
        b.children.append(
            Wxs(
                attrs,
                content,
                start.to(_tok_loc(children[-1])),
                start.to(_tok_loc(open_end)),
                Loc(start.line, start.column + 1, start.end_line, start.end_column),
            )
        )

    def attr(self, children: list[Any]) -> Attribute:
        name: Token = children[0]
        attr = Attribute(str(name), _tok_loc(name))
        if len(children) == 3:
            attr.value, attr.value_loc, attr.raw = children[2]
        return attr

    def value(self, children: list[Token]) -> tuple[tuple[Part, ...], Loc, str]:
        return self._builder().attr_value(children)


# -- the parser, one per thread (a lark parser holds per-parse state in its callbacks) --

_GRAMMAR = Path(__file__).with_name("wxml.lark")
_local = threading.local()


def _parser() -> tuple[Lark, _Callbacks]:
    cached: tuple[Lark, _Callbacks] | None = getattr(_local, "parser", None)
    if cached is None:
        callbacks = _Callbacks()
        lark = Lark(
            _GRAMMAR.read_text(encoding="utf-8"),
            parser="lalr",
            lexer="contextual",
            transformer=callbacks,
            maybe_placeholders=False,
        )
        cached = (lark, callbacks)
        _local.parser = cached
    return cached


def parse_wxml(text: str, *, file: str, sink: DiagnosticSink) -> Document:
    """Parse WXML. Never raises on bad input: defects go to ``sink``, the tree is returned."""
    lark, callbacks = _parser()
    builder = _Builder(text, file, sink)
    previous = callbacks.b
    callbacks.b = builder
    try:
        source = text
        restarts = 0
        while True:
            try:
                lark.parse(source)
                break
            except UnexpectedInput as err:
                resume = _recover(err, builder)
            if resume >= len(text):
                break
            restarts += 1
            if restarts > MAX_RESTARTS:
                builder.emit(
                    "WXML013",
                    f"more than {MAX_RESTARTS} syntax errors; the rest of the file is not checked",
                    builder.loc_at(resume, resume + 1),
                )
                break
            builder.floor = resume
            source = _blank(text, resume)
        builder.finish()
    finally:
        callbacks.b = previous
    return Document(file, builder.root)


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str, upto: int) -> str:
    """``text`` with everything before ``upto`` turned to spaces, newlines kept: positions stay true."""
    return _NOT_NEWLINE.sub(" ", text[:upto]) + text[upto:]


def _error_offset(err: UnexpectedInput, length: int) -> int:
    if isinstance(err, UnexpectedCharacters):
        return int(err.pos_in_stream or 0)
    if isinstance(err, UnexpectedToken):
        tok: Token = err.token
        if tok.type == "$END" or tok.start_pos is None:
            return length
        return int(tok.start_pos)
    return length


def _describe(text: str, offset: int) -> str:
    if offset >= len(text):
        return "the end of the file"
    char = text[offset]
    return {"\n": "a line break", "\r": "a line break"}.get(char, f"'{char}'")


def _recover(err: UnexpectedInput, b: _Builder) -> int:
    """Report the defect behind a lark error and decide where the next parser run starts.

    A tag left open by the error is rebuilt from the parser's value stack (lark's ``e.token``
    says little: the message is made from the position and the parser's state instead).
    """
    text = b.text
    offset = max(_error_offset(err, len(text)), b.floor)
    interactive = getattr(err, "interactive_parser", None)
    stack: list[Any] = list(interactive.parser_state.value_stack) if interactive is not None else []
    opener = next(
        (i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], Token) and stack[i].type in _OPENERS),
        None,
    )
    if opener is None:
        # Content-level terminals cover every character, so this is not expected; skip one.
        b.emit("WXML001", f"unexpected {_describe(text, offset)}", b.loc_at(offset, offset + 1))
        return offset + 1
    b.flush()
    tag_tok: Token = stack[opener]
    name = str(tag_tok)[1:]
    # Repetitions (attr*, parts*) sit on the value stack as lists: flatten them.
    rest = _flatten(stack[opener + 1 :])
    attrs: list[Attribute] = [item for item in rest if isinstance(item, Attribute)]
    tail = [item for item in rest if isinstance(item, Token)]
    if tag_tok.type == "WXS_OPEN" and tail and tail[0].type == "GT":
        b.emit(
            "WXML011",
            "<wxs> is never closed with </wxs>",
            _tok_loc(tag_tok),
            hint="end the script with </wxs>",
        )
        _append_wxs(b, tag_tok, attrs, _tok_loc(tail[0]))
        return len(text)
    pending, quote = _pending_attribute(b, tail)
    if quote is not None:
        # The value runs to the end of the file: cut it at the first '>' after the quote.
        assert quote.end_pos is not None and quote.start_pos is not None
        gt = text.find(">", quote.end_pos)
        cut = gt if gt >= 0 else len(text)
        b.emit(
            "WXML005",
            f"attribute value opened with {quote} is never closed",
            _tok_loc(quote),
            hint=f"close the value with {quote}",
        )
        if tail and tail[0].type == "ATTR_NAME":
            value = decode_entities(text[quote.end_pos : cut])
            loc = b.loc_at(quote.start_pos, cut)
            attrs.append(Attribute(str(tail[0]), _tok_loc(tail[0]), (value,) if value else (), loc, value))
        return _close_at(b, tag_tok, attrs, gt, name)
    if pending is not None:
        attrs.append(pending)
    if offset >= len(text) or text[offset] == "<":
        b.emit(
            "WXML010",
            f"<{name}> is not closed with '>' before {_describe(text, offset)}",
            b.loc_at(offset, offset + 1) if offset < len(text) else _tok_loc(tag_tok),
            hint="add '>' (or '/>' for an empty element) at the end of the tag",
        )
        _open(b, tag_tok, attrs, b.loc_at(offset, offset), self_closing=False)
        return offset
    b.emit(
        "WXML001",
        f"unexpected {_describe(text, offset)} in <{name}>: expected an attribute name, '>' or '/>'",
        b.loc_at(offset, offset + 1),
        hint="attribute names start with a letter, '_', ':' or '@'; values are quoted",
    )
    return _close_at(b, tag_tok, attrs, text.find(">", offset), name)


_OPENERS = ("TAG_OPEN", "WXS_OPEN")


def _flatten(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, Tree):
            out.extend(_flatten(item.children))
        else:
            out.append(item)
    return out


def _pending_attribute(b: _Builder, tail: list[Token]) -> tuple[Attribute | None, Token | None]:
    """The attribute the parser had read but not reduced when it failed, or its unclosed quote."""
    if not tail or tail[0].type != "ATTR_NAME":
        return None, None
    name = tail[0]
    attr = Attribute(str(name), _tok_loc(name))
    if len(tail) < 3 or tail[1].type != "EQ":
        return attr, None
    first = tail[2]
    if first.type == "UNQUOTED":
        attr.value, attr.value_loc, attr.raw = b.attr_value([first])
        return attr, None
    last = tail[-1]
    if len(tail) < 4 or last.type != first.type:
        return None, first
    attr.value, attr.value_loc, attr.raw = b.attr_value(tail[2:])
    return attr, None


def _close_at(b: _Builder, tag_tok: Token, attrs: list[Attribute], gt: int, name: str) -> int:
    """Finish the broken tag at the '>' at ``gt`` (or at the end of the file) and resume after it."""
    text = b.text
    if gt < 0:
        _open(b, tag_tok, attrs, b.loc_at(len(text), len(text)), self_closing=False)
        return len(text)
    _open(b, tag_tok, attrs, b.loc_at(gt, gt + 1), self_closing=gt > 0 and text[gt - 1] == "/")
    return gt + 1


def _open(b: _Builder, tag_tok: Token, attrs: list[Attribute], end: Loc, *, self_closing: bool) -> None:
    if tag_tok.type == "WXS_OPEN":
        _append_wxs(b, tag_tok, attrs, end)
    else:
        b.open_element(tag_tok, attrs, end, self_closing)


def _append_wxs(b: _Builder, tag_tok: Token, attrs: list[Attribute], end: Loc) -> None:
    start = _tok_loc(tag_tok)
    b.children.append(
        Wxs(
            attrs, "", start.to(end), start.to(end), Loc(start.line, start.column + 1, start.end_line, start.end_column)
        )
    )


# -- JSON for golden snapshots and `skillc build --emit ast` -------------------------------


def _parts_json(parts: tuple[Part, ...]) -> list[object]:
    return [p if isinstance(p, str) else {"mustache": p.source, "loc": p.loc.to_json()} for p in parts]


def _attr_json(attr: Attribute) -> dict[str, object]:
    out: dict[str, object] = {"name": attr.name, "name_loc": attr.name_loc.to_json()}
    if attr.value is not None and attr.value_loc is not None:
        out["value"] = _parts_json(attr.value)
        out["value_loc"] = attr.value_loc.to_json()
    return out


def node_to_json(node: Node) -> dict[str, object]:
    if isinstance(node, Element):
        out: dict[str, object] = {"element": node.tag, "loc": node.loc.to_json(), "tag_loc": node.tag_loc.to_json()}
        if node.attributes:
            out["attributes"] = [_attr_json(a) for a in node.attributes]
        if node.self_closing:
            out["self_closing"] = True
        if node.children:
            out["children"] = [node_to_json(c) for c in node.children]
        return out
    if isinstance(node, Text):
        return {"text": _parts_json(node.parts), "loc": node.loc.to_json()}
    if isinstance(node, Comment):
        return {"comment": node.text, "loc": node.loc.to_json()}
    return {
        "wxs": node.content,
        "loc": node.loc.to_json(),
        "attributes": [_attr_json(a) for a in node.attributes],
    }


def document_to_json(doc: Document) -> dict[str, object]:
    """Plain JSON of the AST; positions are "line:column-end_line:end_column" strings."""
    return {"file": doc.file, "children": [node_to_json(n) for n in doc.children]}
