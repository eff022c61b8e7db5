"""The precedence-climbing parser of ``{{ }}`` expressions, and ``parse_expression``.

It reads the lexer's tokens into the tree of ``nodes``, with JavaScript's precedences and
wcc's restrictions: JavaScript-only operators and keywords, calls, member access on literals
and empty or trailing-comma literals are reported where wcc would refuse them, and nesting
is bounded so nothing downstream recurses too deep.
"""

from __future__ import annotations

import re
from typing import Final

from skillc.diagnostics import DiagnosticSink, Severity, Span
from skillc.frontend.expr import nodes
from skillc.frontend.expr.lexer import _END, _KEYWORDS, _KW, _NAME, _NUM, _OP, _STR, _Abort, _Lexer, _Locator, _Tok
from skillc.frontend.expr.nodes import Expr
from skillc.frontend.expr.relocate import moved

__all__ = ["MAX_DEPTH", "MAX_NESTING", "parse_expression"]

# Deep expressions only come from generated or hostile input; the limits keep the parser,
# the evaluator and `dependencies` far from Python's recursion limit even when the caller
# (the WXML parser) is itself nested.
MAX_NESTING: Final = 64  # parser recursion: parentheses, brackets, ternary branches, unary chains
MAX_DEPTH: Final = 200  # depth of the finished tree, including long left-associative chains

_HINT_SETDATA = "compute it in setData (or in the API result) and bind the computed field"

# Names that start JavaScript operators wcc does not have; seen before an operand they get a
# precise message instead of "unexpected token".
_JS_PREFIX_WORDS: Final = frozenset({"typeof", "void", "delete", "new", "await", "yield"})
_JS_INFIX_WORDS: Final = frozenset({"in", "instanceof"})
_JS_ONLY_OPS: Final = frozenset({">>>", "??", "?.", "**", "=", ";"})

# Binary operators: precedence as in JavaScript (higher binds tighter).
_BINARY_PREC: Final = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "===": 6,
    "!==": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}
_UNARY: Final = frozenset({"!", "-", "~", "+"})


class _Parser(_Lexer):
    __slots__ = ("_i", "_nesting", "depth")

    def __init__(self, src: str, file: str, loc: _Locator, sink: DiagnosticSink, attribute: bool = False) -> None:
        super().__init__(src, file, loc, sink, attribute)
        self._nesting = 0
        self._i = 0
        self.depth = 0  # of the finished tree, set by parse_root

    # -- grammar -------------------------------------------------------------------------

    def _peek(self) -> _Tok:
        return self._toks[self._i]

    def _next(self) -> _Tok:
        tok = self._toks[self._i]
        if tok.kind != _END:
            self._i += 1
        return tok

    def _is_op(self, text: str) -> bool:
        tok = self._toks[self._i]
        return tok.kind == _OP and tok.text == text

    def _expect(self, text: str, what: str) -> _Tok:
        tok = self._toks[self._i]
        if tok.kind == _OP and tok.text == text:
            self._i += 1
            return tok
        raise self._unexpected(tok, f"expected {what}")

    def _unexpected(self, tok: _Tok, expected: str | None = None) -> _Abort:
        if tok.kind == _END:
            msg = "unexpected end of expression"
            return self._fail("EXPR001", msg + (f", {expected}" if expected else ""), tok.start, tok.end)
        if tok.kind == _OP and tok.text in _JS_ONLY_OPS:
            return self._fail(
                "EXPR007",
                f"operator {tok.text!r} is not supported in WXML expressions",
                tok.start,
                tok.end,
                _HINT_SETDATA,
            )
        msg = f"unexpected token {tok.text!r}"
        return self._fail("EXPR001", msg + (f", {expected}" if expected else ""), tok.start, tok.end)

    def _enter(self, tok: _Tok) -> None:
        self._nesting += 1
        if self._nesting > MAX_NESTING:
            raise self._fail(
                "EXPR008",
                f"expression is nested more than {MAX_NESTING} levels deep",
                tok.start,
                tok.end,
                "simplify the expression or compute the value in setData",
            )

    def _depth(self, tok_start: int, tok_end: int, *children: int) -> int:
        # (Inlined in _binary, which calls this only to report.)
        d = 1 + max(children)
        if d > MAX_DEPTH:
            raise self._fail(
                "EXPR008",
                f"expression is more than {MAX_DEPTH} operations deep",
                tok_start,
                tok_end,
                "simplify the expression or compute the value in setData",
            )
        return d

    def parse_root(self, object_form: bool) -> Expr:
        if self._peek().kind == _END:
            # wcc compiles an empty mustache to the empty string.
            self._report("EXPR015", "empty {{ }} renders as empty text", 0, max(len(self._src), 1))
            return nodes.Literal(self._sp(0, max(len(self._src), 1)), "")
        if object_form:
            expr, self.depth = self._object_body(None)
        else:
            expr, self.depth = self._conditional()
        tok = self._peek()
        if tok.kind != _END:
            if tok.kind == _OP and tok.text == ",":
                raise self._fail(
                    "EXPR001",
                    "unexpected ','; a comma list is only allowed in <template data=\"{{...}}\">",
                    tok.start,
                    tok.end,
                )
            if tok.kind == _NAME and tok.text in _JS_INFIX_WORDS:
                raise self._js_word(tok)
            raise self._unexpected(tok)
        return expr

    def _js_word(self, tok: _Tok) -> _Abort:
        return self._fail(
            "EXPR007",
            f"{tok.text!r} is not supported in WXML expressions",
            tok.start,
            tok.end,
            _HINT_SETDATA,
        )

    # The hot paths below (_conditional, _binary, _postfix) spell out _peek, _enter, _depth and
    # _sp: each is a call per operand otherwise, and expressions are a large share of a template.

    def _conditional(self) -> tuple[Expr, int]:
        start_tok = self._toks[self._i]
        self._nesting += 1
        if self._nesting > MAX_NESTING:
            self._nesting -= 1
            self._enter(start_tok)  # reports and raises
        test, d = self._binary(1)
        tok = self._toks[self._i]
        if tok.kind == _OP and tok.text == "?":
            self._next()
            cons, dc = self._conditional()
            self._expect(":", "':' of the conditional")
            alt, da = self._conditional()
            d = self._depth(start_tok.start, start_tok.end, d, dc, da)
            test = nodes.Conditional(self._sp(start_tok.start, self._prev_end()), test, cons, alt)
        self._nesting -= 1
        return test, d

    def _prev_end(self) -> int:
        return self._toks[self._i - 1].end if self._i else 0

    def _binary(self, min_prec: int) -> tuple[Expr, int]:
        toks = self._toks
        start = toks[self._i].start
        left, d = self._unary()
        while True:
            tok = toks[self._i]
            if tok.kind != _OP:
                if tok.kind == _NAME and tok.text in _JS_INFIX_WORDS:
                    raise self._js_word(tok)
                return left, d
            prec = _BINARY_PREC.get(tok.text)
            if prec is None or prec < min_prec:
                if tok.text in _JS_ONLY_OPS:
                    raise self._unexpected(tok)
                return left, d
            self._i += 1
            right, dr = self._binary(prec + 1)
            d = (d if d > dr else dr) + 1
            if d > MAX_DEPTH:
                self._depth(tok.start, tok.end, d - 1)  # reports and raises
            span = self._loc.span(start, toks[self._i - 1].end)
            if tok.text in ("&&", "||"):
                left = nodes.Logical(span, tok.text, left, right)
            else:
                left = nodes.Binary(span, tok.text, left, right)

    def _unary(self) -> tuple[Expr, int]:
        tok = self._peek()
        if tok.kind == _OP and tok.text in _UNARY:
            self._next()
            self._enter(tok)
            nxt = self._peek()
            if tok.text == "-" and nxt.kind == _OP and nxt.text in ("!", "~"):
                raise self._fail(
                    "EXPR001",
                    f"unexpected token {nxt.text!r} after unary '-'",
                    nxt.start,
                    nxt.end,
                    f"WeChat's compiler needs parentheses here: -({nxt.text}...)",
                )
            arg, d = self._unary()
            self._nesting -= 1
            if tok.text == "+":
                self._report(
                    "EXPR005",
                    "unary '+' is not supported by WeChat's compiler",
                    tok.start,
                    tok.end,
                    "drop the '+', or convert the value to a number in setData",
                )
            return nodes.Unary(self._sp(tok.start, self._prev_end()), tok.text, arg), self._depth(tok.start, tok.end, d)
        if tok.kind == _NAME and tok.text in _JS_PREFIX_WORDS:
            # `typeof a` is an operator in JavaScript; a lone `typeof` is just a data field.
            nxt = self._toks[self._i + 1]
            if nxt.kind in (_NAME, _NUM, _STR, _KW) or (
                nxt.kind == _OP and nxt.text in ("(", "[", "{", "!", "-", "~", "+")
            ):
                raise self._js_word(tok)
        return self._postfix()

    def _postfix(self) -> tuple[Expr, int]:
        toks = self._toks
        tok = toks[self._i]
        if tok.kind == _NAME:  # _primary's commonest case
            self._i += 1
            expr: Expr = nodes.Ident(self._loc.span(tok.start, tok.end), tok.text)
            d = 1
            chainable = True
        else:
            expr, d = self._primary()
            # wcc allows member access and calls on names, member chains, calls and array
            # literals only; `'ab'.length`, `(a).b` and `{a: 1}.a` are compile errors there.
            chainable = not (tok.kind in (_NUM, _STR, _KW) or (tok.kind == _OP and tok.text in ("(", "{")))
        while True:
            nxt = toks[self._i]
            if nxt.kind != _OP or nxt.text not in (".", "[", "("):
                return expr, d
            if not chainable:
                self._report(
                    "EXPR009",
                    f"{'a call' if nxt.text == '(' else 'member access'} on a literal or a parenthesized "
                    "expression is not supported by WeChat's compiler",
                    nxt.start,
                    nxt.end,
                    "bind the value to a data field first",
                )
                chainable = True
            self._next()
            if nxt.text == ".":
                name = self._next()
                if name.kind != _NAME:
                    raise self._unexpected(name, "expected a property name after '.'")
                expr = nodes.Member(self._sp(tok.start, name.end), expr, name.text)
                d = self._depth(nxt.start, nxt.end, d)
            elif nxt.text == "[":
                index, di = self._conditional()
                close = self._expect("]", "']'")
                expr = nodes.Index(self._sp(tok.start, close.end), expr, index)
                d = self._depth(nxt.start, nxt.end, d, di)
            else:
                args: list[Expr] = []
                depths = [d]
                while not self._is_op(")"):
                    arg, da = self._conditional()
                    args.append(arg)
                    depths.append(da)
                    if not self._is_op(")"):
                        comma = self._expect(",", "',' or ')'")
                        if self._is_op(")"):
                            raise self._fail("EXPR001", "trailing comma in a call", comma.start, comma.end)
                close = self._next()
                expr = nodes.Call(self._sp(tok.start, close.end), expr, tuple(args))
                # wcc compiles a call and evaluates it to undefined (cards have no WXS), so the
                # card still renders: a warning at the call, not a refused card.
                self._report(
                    "EXPR006",
                    "function calls are not supported in WXML expressions; WeChat renders them as empty",
                    tok.start,
                    close.end,
                    _HINT_SETDATA,
                )
                d = self._depth(nxt.start, nxt.end, *depths)

    def _primary(self) -> tuple[Expr, int]:
        tok = self._next()
        kind = tok.kind
        if kind == _NAME:
            return nodes.Ident(self._sp(tok.start, tok.end), tok.text), 1
        if kind in (_NUM, _STR, _KW):
            return nodes.Literal(self._sp(tok.start, tok.end), tok.value), 1
        if kind == _OP:
            if tok.text == "(":
                inner, d = self._conditional()
                self._expect(")", "')'")
                return inner, d
            if tok.text == "[":
                return self._array(tok)
            if tok.text == "{":
                return self._object_body(tok)
        raise self._unexpected(tok)

    def _array(self, open_tok: _Tok) -> tuple[Expr, int]:
        items: list[Expr] = []
        depths = [0]
        while not self._is_op("]"):
            tok = self._peek()
            if tok.kind == _OP and tok.text == ",":
                raise self._fail(
                    "EXPR001", "empty array element (wcc allows no holes or trailing commas)", tok.start, tok.end
                )
            if tok.kind == _OP and tok.text == "...":
                self._next()
                arg, d = self._conditional()
                self._report(
                    "EXPR011",
                    "spread '...' in an array literal is not supported by WeChat's compiler",
                    tok.start,
                    tok.end,
                    "build the array in setData",
                )
                items.append(nodes.Spread(self._sp(tok.start, self._prev_end()), arg))
            else:
                arg, d = self._conditional()
                items.append(arg)
            depths.append(d)
            if not self._is_op("]"):
                self._expect(",", "',' or ']'")
                if self._is_op("]"):
                    t = self._toks[self._i - 1]
                    raise self._fail("EXPR001", "trailing comma in an array literal", t.start, t.end)
        close = self._next()
        return nodes.ArrayLit(self._sp(open_tok.start, close.end), tuple(items)), self._depth(
            open_tok.start, open_tok.end, *depths
        )

    def _object_body(self, open_tok: _Tok | None) -> tuple[Expr, int]:
        """`{a, b: c, ...d}`; with open_tok None, the brace-less form of <template data>."""
        start_tok = open_tok or self._peek()
        closer = "}" if open_tok is not None else None
        entries: list[nodes.Property | nodes.Spread] = []
        depths = [0]

        def at_close() -> bool:
            tok = self._peek()
            return tok.kind == _END if closer is None else (tok.kind == _OP and tok.text == closer)

        if open_tok is not None and at_close():
            raise self._fail(
                "EXPR001",
                "empty object literal {} is not supported by WeChat's compiler",
                open_tok.start,
                self._peek().end,
                "bind an empty object from data instead",
            )
        while True:
            tok = self._next()
            if tok.kind == _OP and tok.text == "...":
                arg, d = self._conditional()
                entries.append(nodes.Spread(self._sp(tok.start, self._prev_end()), arg))
            elif tok.kind == _NAME:
                if self._is_op(":"):
                    self._next()
                    value, d = self._conditional()
                else:
                    value, d = nodes.Ident(self._sp(tok.start, tok.end), tok.text), 1
                entries.append(nodes.Property(tok.text, value, self._sp(tok.start, self._prev_end())))
            elif tok.kind in (_STR, _NUM, _KW) or (tok.kind == _OP and tok.text == "["):
                raise self._fail(
                    "EXPR001",
                    f"object key {tok.text!r} is not supported: keys must be plain names",
                    tok.start,
                    tok.end,
                    "wcc accepts only identifier keys such as {name: value}",
                )
            else:
                raise self._unexpected(tok, "expected a key, a `key: value` pair or `...spread`")
            depths.append(d)
            if at_close():
                break
            self._expect(",", "',' between object entries")
            if at_close():
                t = self._toks[self._i - 1]
                raise self._fail("EXPR001", "trailing comma in an object literal", t.start, t.end)
        end = self._next().end if closer is not None else self._prev_end()
        return nodes.ObjectLit(self._sp(start_tok.start, end), tuple(entries)), self._depth(
            start_tok.start, start_tok.end, *depths
        )


def parse_expression(
    source: str,
    *,
    file: str,
    line: int,
    column: int,
    sink: DiagnosticSink,
    object_form: bool = False,
    attribute: bool = False,
) -> Expr | None:
    """Parse the text between ``{{`` and ``}}``. (line, column) is the position of source[0].

    ``object_form`` parses the brace-less object of ``<template data="{{a, b: c, ...d}}">``;
    ``attribute`` says the mustache sits in an attribute value, where wcc refuses more escapes.
    Returns None when a syntax error stopped the parse. Unsupported-but-parseable features
    (calls, unary ``+``, array spread, member access on literals) are reported and the tree
    is still returned, so later stages can keep going.
    """
    key = (source, object_form, attribute)
    parsed = _MEMO.get(key)
    if parsed is not None:
        return parsed.at_place(file, line, column, sink)
    if not object_form:
        simple = _member_chain(source, line, column)
        if simple is not None:
            _remember(key, _Parsed(simple, line, column, ()))
            return simple
    if "\n" in source or "\r" in source:
        return _parse(source, file, line, column, sink, object_form, attribute)[0]
    return _parse_first(key, file, line, column, sink)


def _parse(
    source: str, file: str, line: int, column: int, sink: DiagnosticSink, object_form: bool, attribute: bool
) -> tuple[Expr | None, int]:
    """The tree (None after a syntax error) and its depth."""
    parser = _Parser(source, file, _Locator(source, line, column), sink, attribute)
    try:
        parser.tokenize()
        return parser.parse_root(object_form), parser.depth
    except _Abort:
        return None, 0


# -- one parse per distinct source ---------------------------------------------------------------
#
# A one-line source parses to the same tree and the same reports wherever it stands, up to a
# column shift. It is parsed where it is first met; elsewhere that tree is moved (relocate.py)
# and its reports are emitted again at the new place, in the same order, so the sink receives
# exactly what a parse there would have emitted. Nothing of a file is kept: the file name is
# given at each emission, and messages name no position.

# code, message, start and end as offsets from the source's first column, hint, severity
_Report = tuple[str, str, int, int, str | None, Severity]


class _Parsed:
    __slots__ = ("at", "column", "line", "reports", "tree")

    def __init__(self, tree: Expr | None, line: int, column: int, reports: tuple[_Report, ...]) -> None:
        self.tree = tree  # None when a syntax error stopped the parse
        self.line = line  # where ``tree`` stands
        self.column = column
        self.reports = reports
        # A few more places, each moved once: a template's body is lowered once per call.
        self.at: dict[tuple[int, int], Expr] = {}

    def at_place(self, file: str, line: int, column: int, sink: DiagnosticSink) -> Expr | None:
        for code, message, start, end, hint, severity in self.reports:
            span = Span.trusted(line, column + start, line, column + end)
            sink.emit(code, message, file=file, span=span, hint=hint, severity=severity)
        tree = self.tree
        if tree is None or (line == self.line and column == self.column):
            return tree
        place = (line, column)
        found = self.at.get(place)
        if found is None:
            found = moved(tree, line, column - self.column)
            if len(self.at) < _PLACES:
                self.at[place] = found
        return found


# Distinct sources kept; the memo starts over when full (a skill has a few thousand at most).
_MEMO_LIMIT: Final = 4096
_MEMO: dict[tuple[str, bool, bool], _Parsed] = {}
_PLACES: Final = 4
# Deeper trees are parsed at each place: moving one recurses once per level.
_MOVE_DEPTH: Final = 64


def _parse_first(key: tuple[str, bool, bool], file: str, line: int, column: int, sink: DiagnosticSink) -> Expr | None:
    source, object_form, attribute = key
    reports = DiagnosticSink()
    tree, depth = _parse(source, file, line, column, reports, object_form, attribute)
    sink.extend(reports)
    if depth <= _MOVE_DEPTH:
        kept: list[_Report] = []
        for d in reports:
            span = d.span
            assert span is not None and span.line == span.end_line == line  # one line: a column range
            kept.append((d.code, d.message, span.column - column, span.end_column - column, d.hint, d.severity))
        _remember(key, _Parsed(tree, line, column, tuple(kept)))
    return tree


def forget_parses() -> None:
    """Empty the memo: the next parse of every source is a first one (a benchmark times a cold
    build with it)."""
    _MEMO.clear()


def _remember(key: tuple[str, bool, bool], parsed: _Parsed) -> None:
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[key] = parsed


# A name or a chain of names (`title`, `item.price`) is most of the mustaches of a real template.
# It can hold no defect, so it is built from one match, with the nodes and spans the parser gives.
# Not on one line (the locator then needs an index), keywords (literals, and an error after '.')
# and chains near MAX_DEPTH take the parser.
_MEMBER_CHAIN = re.compile(r"[ \t]*([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)[ \t]*")
_CHAIN_LIMIT: Final = 64


def _member_chain(source: str, line: int, column: int) -> Expr | None:
    m = _MEMBER_CHAIN.fullmatch(source)
    if m is None:
        return None
    names = m.group(1).split(".")
    if len(names) > _CHAIN_LIMIT or not _KEYWORDS.keys().isdisjoint(names):
        return None
    start = column + m.start(1)
    end = start + len(names[0])
    expr: Expr = nodes.Ident(Span.trusted(line, start, line, end), names[0])
    for name in names[1:]:
        end += 1 + len(name)
        expr = nodes.Member(Span.trusted(line, start, line, end), expr, name)
    return expr
