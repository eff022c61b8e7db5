"""The lark parser of WXML (grammar in wxml.lark) and ``parse_wxml``, which drives it.

Lark runs with an inline transformer (no parse tree is built), which is what makes a 1 MB
template parse in about a second: its callbacks hand each reduction to the builder in
source order. Malformed input never raises: after a lark error the parser restarts past the
defect, at most ``MAX_RESTARTS`` times, and returns the tree it could build.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml.builder import _Builder, _tok_loc
from skillc.frontend.wxml.nodes import Attribute, Comment, Document, Loc, Part, Wxs
from skillc.frontend.wxml.recovery import _blank, _recover

__all__ = ["MAX_RESTARTS", "parse_wxml"]

# After this many restarts the rest of the file is not parsed (WXML013).
MAX_RESTARTS = 100


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

    def leaf(self, children: list[Token]) -> None:
        self._builder().leaf(children[0])

    def close_tag(self, children: list[Token]) -> None:
        tok = children[0]
        self._builder().close_tags(str(tok).rstrip(), tok.line, tok.column)  # type: ignore[arg-type]

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
_grammar: str | None = None


def _build(callbacks: _Callbacks) -> Lark:
    """The parser from the committed tables (tables.py), or from the grammar when they are stale."""
    from skillc.frontend.wxml.tables import OPTIONS, load_tables  # only when a parser is built

    global _grammar
    if _grammar is None:
        _grammar = _GRAMMAR.read_text(encoding="utf-8")
    tables = load_tables(_grammar)
    if tables is not None:
        data, memo = tables
        return Lark._load_from_dict(data, memo, transformer=callbacks)  # type: ignore[no-untyped-call,no-any-return]
    return Lark(_grammar, **OPTIONS, transformer=callbacks)


def _parser() -> tuple[Lark, _Callbacks]:
    cached: tuple[Lark, _Callbacks] | None = getattr(_local, "parser", None)
    if cached is None:
        callbacks = _Callbacks()
        cached = (_build(callbacks), callbacks)
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
