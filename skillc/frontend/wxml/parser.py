"""The lark parser of WXML (grammar in wxml.lark) and ``parse_wxml``, which runs it.

``parse_wxml`` runs the driver (driver.py): one-token items go straight to the builder, tags
read piecewise through lark's LALR parser, whose inline transformer (no parse tree is built)
hands each reduction to the builder in source order. Malformed input never raises: after a
lark error the parser restarts past the defect, at most ``MAX_RESTARTS`` times, and returns
the tree it could build. Lark alone over the whole text (``_parse(..., driven=False)``) is the
driver's reference: tests compare the two.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml.builder import _Builder, _tok_loc
from skillc.frontend.wxml.driver import _Driver, driver_for
from skillc.frontend.wxml.nodes import Attribute, Document, Loc, Part, Wxs
from skillc.frontend.wxml.recovery import _blank, _recover, _too_many_errors

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

    # One-token items: the builder's *_item methods, which the driver calls without lark.
    def _one_token(self, method: Callable[[_Builder, str, int, int, int, int], None], tok: Token) -> None:
        assert tok.start_pos is not None and tok.end_pos is not None
        method(self._builder(), str(tok), tok.start_pos, tok.end_pos, tok.line, tok.column)  # type: ignore[arg-type]

    def text(self, children: list[Token]) -> None:
        self._one_token(_Builder.text_item, children[0])

    def open_mustache(self, children: list[Token]) -> None:
        self._one_token(_Builder.open_mustache_item, children[0])

    def stray_lt(self, children: list[Token]) -> None:
        self._one_token(_Builder.stray_lt_item, children[0])

    def leaf(self, children: list[Token]) -> None:
        self._one_token(_Builder.leaf_item, children[0])

    def close_tag(self, children: list[Token]) -> None:
        self._one_token(_Builder.close_tag_item, children[0])

    def comment(self, children: list[Token]) -> None:
        self._one_token(_Builder.comment_item, children[0])

    def unclosed_comment(self, children: list[Token]) -> None:
        self._one_token(_Builder.unclosed_comment_item, children[0])

    def tag(self, children: list[Any]) -> None:
        if len(children) == 1:
            self._one_token(_Builder.fast_tag_item, children[0])
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


def _driver(lark: Lark) -> _Driver | None:
    """The driver of the thread's parser, read from its tables once."""
    cached: tuple[Lark, _Driver | None] | None = getattr(_local, "driver", None)
    if cached is None or cached[0] is not lark:
        cached = (lark, driver_for(lark))
        _local.driver = cached
    return cached[1]


def parse_wxml(text: str, *, file: str, sink: DiagnosticSink) -> Document:
    """Parse WXML. Never raises on bad input: defects go to ``sink``, the tree is returned."""
    return _parse(text, file, sink, driven=True)


def _parse(text: str, file: str, sink: DiagnosticSink, *, driven: bool) -> Document:
    """``driven``: through the driver (driver.py); else lark parses the whole text, as the
    driver's reference (tests compare the two)."""
    lark, callbacks = _parser()
    builder = _Builder(text, file, sink)
    previous = callbacks.b
    callbacks.b = builder
    try:
        driver = _driver(lark) if driven else None
        left = driver.run(builder, MAX_RESTARTS) if driver is not None else (0, 0)
        if left is not None:
            _parse_rest(lark, builder, *left)
        builder.finish()
    finally:
        callbacks.b = previous
    return Document(file, builder.root)


def _parse_rest(lark: Lark, builder: _Builder, start: int, restarts: int) -> None:
    """Lark alone, from ``start`` to the end of the text, restarting after each syntax error."""
    text = builder.text
    if start:
        builder.floor = start
    source = _blank(text, start) if start else text
    while True:
        try:
            lark.parse(source)
            return
        except UnexpectedInput as err:
            resume = _recover(err, builder)
        if resume >= len(text):
            return
        restarts += 1
        if restarts > MAX_RESTARTS:
            _too_many_errors(builder, resume, MAX_RESTARTS)
            return
        builder.floor = resume
        source = _blank(text, resume)
