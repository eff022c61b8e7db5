"""The ``{{ }}`` expression language of WXML, as WeChat's compiler (wcc) accepts it.

A hand-written tokenizer and a precedence-climbing parser: expressions are a large share of
every template, and WXML parse+lower has a throughput target that a generated parser misses.
Where wcc deviates from JavaScript (no exponent literals, no unary ``+``, no member access on
literals or parentheses, ASCII-only names, escapes it does not decode) the parser reports a
diagnostic rather than silently accepting what WeChat would refuse or render differently;
docs/expressions.md lists every rule and the measured wcc behaviour behind it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NamedTuple

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.source import LineIndex

# Deep expressions only come from generated or hostile input; the limits keep the parser,
# the evaluator and `dependencies` far from Python's recursion limit even when the caller
# (the WXML parser) is itself nested.
MAX_NESTING: Final = 64  # parser recursion: parentheses, brackets, ternary branches, unary chains
MAX_DEPTH: Final = 200  # depth of the finished tree, including long left-associative chains

_HINT_SETDATA = "compute it in setData (or in the API result) and bind the computed field"


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


# --------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------


_span = Span.trusted


class _Locator:
    """Offsets inside one piece of text -> absolute file positions."""

    __slots__ = ("_column", "_index", "_line")

    def __init__(self, text: str, line: int, column: int) -> None:
        self._line = line
        self._column = column
        # Most expressions are one line: they need no index at all.
        self._index = LineIndex(text) if "\n" in text or "\r" in text else None

    def pos(self, offset: int) -> tuple[int, int]:
        if self._index is not None:
            row, col = self._index.loc(offset)
            if row > 1:
                return self._line + row - 1, col
        return self._line, self._column + offset

    def span(self, start: int, end: int) -> Span:
        if self._index is None:
            col = self._column + start
            return _span(self._line, col, self._line, col + max(end - start, 1))
        line, col = self.pos(start)
        end_line, end_col = self.pos(max(end, start + 1))
        return _span(line, col, end_line, end_col)


# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------

# kinds
_NUM, _STR, _NAME, _KW, _OP, _END = range(6)

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?P<exp>[eE][+-]?\d+)?(?P<tail>[A-Za-z0-9_$]*))
  | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<str>'(?:[^'\\\r\n]|\\[^\r\n])*'|"(?:[^"\\\r\n]|\\[^\r\n])*")
  | (?P<op>\.\.\.|===|!==|>>>|\?\?|\?\.(?!\d)|\*\*|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%<>!~&|^?:,.()\[\]{}=;])
    """,
    re.VERBOSE,
)
_KEYWORDS: Final = {"true": True, "false": False, "null": None, "undefined": UNDEFINED}
# Names that start JavaScript operators wcc does not have; seen before an operand they get a
# precise message instead of "unexpected token".
_JS_PREFIX_WORDS: Final = frozenset({"typeof", "void", "delete", "new", "await", "yield"})
_JS_INFIX_WORDS: Final = frozenset({"in", "instanceof"})
_JS_ONLY_OPS: Final = frozenset({">>>", "??", "?.", "**", "=", ";"})
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])")

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


class _Tok(NamedTuple):
    # A NamedTuple builds several times faster than a frozen dataclass; tokens are many.
    kind: int
    text: str
    start: int
    end: int
    value: LiteralValue = None


def _decode_string(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] == "u" and len(esc) > 1:
            code = int(esc[2:-1] if esc[1] == "{" else esc[1:], 16)
            return chr(code) if code <= 0x10FFFF else "\ufffd"
        if esc[0] == "x" and len(esc) == 3:
            return chr(int(esc[1:], 16))
        return _ESCAPES.get(esc, esc)

    return _ESCAPE.sub(one, body)


# --------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------


class _Abort(Exception):
    """Stops a parse after its error was reported; never escapes this module."""


class _Parser:
    __slots__ = ("_file", "_i", "_loc", "_nesting", "_sink", "_src", "_toks")

    def __init__(self, src: str, file: str, loc: _Locator, sink: DiagnosticSink) -> None:
        self._src = src
        self._file = file
        self._loc = loc
        self._sink = sink
        self._nesting = 0
        self._i = 0
        self._toks: list[_Tok] = []

    # -- diagnostics ---------------------------------------------------------------------

    def _report(self, code: str, message: str, start: int, end: int, hint: str | None = None) -> None:
        self._sink.emit(code, message, file=self._file, span=self._loc.span(start, end), hint=hint)

    def _fail(self, code: str, message: str, start: int, end: int, hint: str | None = None) -> _Abort:
        self._report(code, message, start, end, hint)
        return _Abort()

    def _sp(self, start: int, end: int) -> Span:
        return self._loc.span(start, end)

    # -- tokens --------------------------------------------------------------------------

    def tokenize(self) -> None:
        src, toks, n, pos = self._src, self._toks, len(self._src), 0
        match = _TOKEN.match
        while pos < n:
            m = match(src, pos)
            if m is None:
                ch = src[pos]
                if ch in "'\"":
                    raise self._fail(
                        "EXPR003",
                        "unterminated string literal",
                        pos,
                        n,
                        "close the string with the same quote on the same line",
                    )
                if ch == "`":
                    raise self._fail("EXPR007", "template literals are not supported in WXML expressions", pos, pos + 1)
                if ord(ch) > 127 and (ch.isalpha() or ch == "\u00a0"):
                    raise self._fail(
                        "EXPR010",
                        f"unexpected character {ch!r}: names in WXML expressions must be ASCII",
                        pos,
                        pos + 1,
                        "wcc rejects non-ASCII names and spaces; rename the data field",
                    )
                raise self._fail("EXPR001", f"unexpected character {ch!r}", pos, pos + 1)
            kind = m.lastgroup
            end = m.end()
            if kind == "ws":
                pass
            elif kind == "name":
                text = m.group()
                if text in _KEYWORDS:
                    toks.append(_Tok(_KW, text, pos, end, _KEYWORDS[text]))
                else:
                    toks.append(_Tok(_NAME, text, pos, end))
            elif kind == "op":
                toks.append(_Tok(_OP, m.group(), pos, end))
            elif kind == "str":
                text = m.group()
                body = text[1:-1]
                if "\\" in body:
                    self._report(
                        "EXPR013",
                        "backslash escape in a string literal: WeChat does not decode it like JavaScript",
                        pos,
                        end,
                        "wcc keeps most escapes verbatim and turns \\' into \\x27; use the other quote "
                        "character, or put the text in data",
                    )
                    body = _decode_string(body)
                toks.append(_Tok(_STR, text, pos, end, body))
            else:
                toks.append(self._number(m, pos, end))
            pos = end
        toks.append(_Tok(_END, "", n, n))

    def _number(self, m: re.Match[str], start: int, end: int) -> _Tok:
        text = m.group()
        if m.group("exp") is not None or (m.group("tail")[:1] in ("e", "E") and m.group("tail")):
            raise self._fail(
                "EXPR004",
                f"exponent literal {text!r} is not supported by WeChat's compiler",
                start,
                end,
                "write the number out in full (1.5e3 -> 1500) or compute it in setData",
            )
        tail = m.group("tail")
        if tail:
            if text[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
                raise self._fail(
                    "EXPR004",
                    f"number literal {text!r} is not supported by WeChat's compiler",
                    start,
                    end,
                    "write the number in decimal",
                )
            raise self._fail("EXPR001", f"invalid number {text!r}", start, end)
        digits = text[: len(text) - len(tail)]
        value: int | float
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            # Sloppy-mode JavaScript (which runs wcc's output) reads 010 as octal 8 and 09 as 9.
            whole = digits.partition(".")[0]
            octal = all(c in "01234567" for c in whole)
            if octal and "." in digits:
                raise self._fail("EXPR001", f"invalid number {text!r}", start, end, "drop the leading zero")
            value = int(whole, 8) if octal else (float(digits) if "." in digits else int(whole))
            if value != 0 or not octal:
                self._report(
                    "EXPR012",
                    f"number {digits!r} has a leading zero; WeChat reads it as {_fmt(value)}",
                    start,
                    end,
                    "drop the leading zero",
                )
        elif "." in digits:
            value = float(digits)
            if value.is_integer() and abs(value) <= 2**53:
                value = int(value)
        else:
            value = int(digits)
            if value > 2**53:
                value = float(value)
        return _Tok(_NUM, text, start, end, value)

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
            return Literal(self._sp(0, max(len(self._src), 1)), "")
        if object_form:
            expr, _ = self._object_body(None)
        else:
            expr, _ = self._conditional()
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

    def _conditional(self) -> tuple[Expr, int]:
        start_tok = self._peek()
        self._enter(start_tok)
        test, d = self._binary(1)
        if self._is_op("?"):
            self._next()
            cons, dc = self._conditional()
            self._expect(":", "':' of the conditional")
            alt, da = self._conditional()
            d = self._depth(start_tok.start, start_tok.end, d, dc, da)
            test = Conditional(self._sp(start_tok.start, self._prev_end()), test, cons, alt)
        self._nesting -= 1
        return test, d

    def _prev_end(self) -> int:
        return self._toks[self._i - 1].end if self._i else 0

    def _binary(self, min_prec: int) -> tuple[Expr, int]:
        start = self._peek().start
        left, d = self._unary()
        while True:
            tok = self._peek()
            if tok.kind != _OP:
                if tok.kind == _NAME and tok.text in _JS_INFIX_WORDS:
                    raise self._js_word(tok)
                return left, d
            prec = _BINARY_PREC.get(tok.text)
            if prec is None or prec < min_prec:
                if tok.text in _JS_ONLY_OPS:
                    raise self._unexpected(tok)
                return left, d
            self._next()
            right, dr = self._binary(prec + 1)
            d = self._depth(tok.start, tok.end, d, dr)
            span = self._sp(start, self._prev_end())
            if tok.text in ("&&", "||"):
                left = Logical(span, tok.text, left, right)
            else:
                left = Binary(span, tok.text, left, right)

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
            return Unary(self._sp(tok.start, self._prev_end()), tok.text, arg), self._depth(tok.start, tok.end, d)
        if tok.kind == _NAME and tok.text in _JS_PREFIX_WORDS:
            # `typeof a` is an operator in JavaScript; a lone `typeof` is just a data field.
            nxt = self._toks[self._i + 1]
            if nxt.kind in (_NAME, _NUM, _STR, _KW) or (
                nxt.kind == _OP and nxt.text in ("(", "[", "{", "!", "-", "~", "+")
            ):
                raise self._js_word(tok)
        return self._postfix()

    def _postfix(self) -> tuple[Expr, int]:
        tok = self._peek()
        expr, d = self._primary()
        # wcc allows member access and calls on names, member chains, calls and array
        # literals only; `'ab'.length`, `(a).b` and `{a: 1}.a` are compile errors there.
        chainable = not (tok.kind in (_NUM, _STR, _KW) or (tok.kind == _OP and tok.text in ("(", "{")))
        while True:
            nxt = self._peek()
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
                expr = Member(self._sp(tok.start, name.end), expr, name.text)
                d = self._depth(nxt.start, nxt.end, d)
            elif nxt.text == "[":
                index, di = self._conditional()
                close = self._expect("]", "']'")
                expr = Index(self._sp(tok.start, close.end), expr, index)
                d = self._depth(nxt.start, nxt.end, d, di)
            else:
                args: list[Expr] = []
                depths = [d]
                while not self._is_op(")"):
                    arg, da = self._conditional()
                    args.append(arg)
                    depths.append(da)
                    if not self._is_op(")"):
                        self._expect(",", "',' or ')'")
                close = self._next()
                expr = Call(self._sp(tok.start, close.end), expr, tuple(args))
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
            return Ident(self._sp(tok.start, tok.end), tok.text), 1
        if kind in (_NUM, _STR, _KW):
            return Literal(self._sp(tok.start, tok.end), tok.value), 1
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
                items.append(Spread(self._sp(tok.start, self._prev_end()), arg))
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
        return ArrayLit(self._sp(open_tok.start, close.end), tuple(items)), self._depth(
            open_tok.start, open_tok.end, *depths
        )

    def _object_body(self, open_tok: _Tok | None) -> tuple[Expr, int]:
        """`{a, b: c, ...d}`; with open_tok None, the brace-less form of <template data>."""
        start_tok = open_tok or self._peek()
        closer = "}" if open_tok is not None else None
        entries: list[Property | Spread] = []
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
                entries.append(Spread(self._sp(tok.start, self._prev_end()), arg))
            elif tok.kind == _NAME:
                if self._is_op(":"):
                    self._next()
                    value, d = self._conditional()
                else:
                    value, d = Ident(self._sp(tok.start, tok.end), tok.text), 1
                entries.append(Property(tok.text, value, self._sp(tok.start, self._prev_end())))
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
        return ObjectLit(self._sp(start_tok.start, end), tuple(entries)), self._depth(
            start_tok.start, start_tok.end, *depths
        )


def _fmt(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def parse_expression(
    source: str,
    *,
    file: str,
    line: int,
    column: int,
    sink: DiagnosticSink,
    object_form: bool = False,
) -> Expr | None:
    """Parse the text between ``{{`` and ``}}``. (line, column) is the position of source[0].

    ``object_form`` parses the brace-less object of ``<template data="{{a, b: c, ...d}}">``.
    Returns None when a syntax error stopped the parse. Unsupported-but-parseable features
    (calls, unary ``+``, array spread, member access on literals) are reported and the tree
    is still returned, so later stages can keep going.
    """
    parser = _Parser(source, file, _Locator(source, line, column), sink)
    try:
        parser.tokenize()
        return parser.parse_root(object_form)
    except _Abort:
        return None


def split_mustaches(text: str, *, file: str, line: int, column: int, sink: DiagnosticSink) -> list[str | Mustache]:
    """Split an attribute value or text node into literal parts and parsed mustaches.

    (line, column) is the position of text[0] in the file. A ``}}`` inside a string literal
    or an object literal does not end the mustache. Entities are not decoded here.
    """
    if "{{" not in text:
        return [text] if text else []
    loc = _Locator(text, line, column)
    out: list[str | Mustache] = []
    pos, n = 0, len(text)
    while pos < n:
        open_at = text.find("{{", pos)
        if open_at < 0:
            out.append(text[pos:])
            break
        if open_at > pos:
            out.append(text[pos:open_at])
        close_at, inner_brace_at, open_string_at = _find_close(text, open_at + 2)
        if close_at < 0 and open_string_at >= 0:
            # The string swallowed the closing braces; the string is the real mistake.
            sink.emit(
                "EXPR003",
                "unterminated string literal",
                file=file,
                span=loc.span(open_string_at, n),
                hint="close the string with the same quote on the same line",
            )
            out.append(Mustache(text[open_at + 2 :], None, loc.span(open_at, n)))
            break
        if close_at < 0:
            sink.emit(
                "EXPR002",
                "'{{' is never closed by '}}'",
                file=file,
                span=loc.span(open_at, open_at + 2),
                hint="add the closing '}}'",
            )
            out.append(Mustache(text[open_at + 2 :], None, loc.span(open_at, n)))
            break
        source = text[open_at + 2 : close_at]
        if inner_brace_at >= 0:
            sink.emit(
                "EXPR014",
                "'}}' inside an object literal: WeChat's compiler ends the mustache there",
                file=file,
                span=loc.span(inner_brace_at, inner_brace_at + 2),
                hint="put a space between the braces: '} }'",
            )
        sline, scol = loc.pos(open_at + 2)
        expr = parse_expression(source, file=file, line=sline, column=scol, sink=sink)
        out.append(Mustache(source, expr, loc.span(open_at, close_at + 2)))
        pos = close_at + 2
    return out


def _find_close(text: str, pos: int) -> tuple[int, int, int]:
    """Index of the `}}` that ends the mustache opened before pos, or -1; where a `}}` first
    appeared inside an object literal; where the first unterminated string started (-1 if
    never)."""
    depth = 0
    inner = -1
    open_string = -1
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch == "}":
            if depth == 0:
                if pos + 1 < n and text[pos + 1] == "}":
                    return pos, inner, open_string
            else:
                if inner < 0 and pos + 1 < n and text[pos + 1] == "}":
                    inner = pos
                depth -= 1
        elif ch == "{":
            depth += 1
        elif ch == "'" or ch == '"':
            # Skip the string; an unterminated one runs to the end of the line, as the
            # tokenizer will report it.
            quote_at = pos
            pos += 1
            while pos < n and text[pos] != ch and text[pos] not in "\r\n":
                pos += 2 if text[pos] == "\\" else 1
            if pos >= n or text[pos] != ch:
                if open_string < 0:
                    open_string = quote_at
                continue
        pos += 1
    return -1, inner, open_string


def dependencies(expr: Expr) -> frozenset[tuple[str | int, ...]]:
    """The data paths an expression reads, as far as they are static.

    ``order.lines[0].price`` -> {("order", "lines", 0, "price")}; a computed index cuts the
    path at its object: ``a[i]`` -> {("a",), ("i",)}. Paths are not reduced to prefixes.
    """
    found: set[tuple[str | int, ...]] = set()
    _collect(expr, found)
    return frozenset(found)


def _static_path(expr: Expr) -> tuple[str | int, ...] | None:
    parts: list[str | int] = []
    node = expr
    while True:
        if isinstance(node, Ident):
            parts.append(node.name)
            parts.reverse()
            return tuple(parts)
        if isinstance(node, Member):
            parts.append(node.prop)
            node = node.obj
        elif isinstance(node, Index) and isinstance(node.index, Literal):
            key = node.index.value
            if isinstance(key, bool) or not isinstance(key, (str, int, float)):
                return None
            if isinstance(key, float):
                if not key.is_integer():
                    return None
                key = int(key)
            parts.append(key)
            node = node.obj
        else:
            return None


def _collect(expr: Expr, found: set[tuple[str | int, ...]]) -> None:
    path = _static_path(expr)
    if path is not None:
        found.add(path)
        return
    if isinstance(expr, Member):
        _collect(expr.obj, found)
    elif isinstance(expr, Index):
        obj_path = _static_path(expr.obj)
        if obj_path is not None:
            found.add(obj_path)
        else:
            _collect(expr.obj, found)
        _collect(expr.index, found)
    elif isinstance(expr, ArrayLit):
        for item in expr.items:
            _collect(item, found)
    elif isinstance(expr, ObjectLit):
        for entry in expr.entries:
            _collect(entry.value if isinstance(entry, Property) else entry.arg, found)
    elif isinstance(expr, Spread | Unary):
        _collect(expr.arg, found)
    elif isinstance(expr, Binary | Logical):
        _collect(expr.left, found)
        _collect(expr.right, found)
    elif isinstance(expr, Conditional):
        _collect(expr.test, found)
        _collect(expr.consequent, found)
        _collect(expr.alternate, found)
    elif isinstance(expr, Call):
        # `list.join(",")` reads `list`; the method name is not data.
        _collect(expr.callee.obj if isinstance(expr.callee, Member) else expr.callee, found)
        for arg in expr.args:
            _collect(arg, found)
