"""The tokenizer of ``{{ }}`` expressions, and the mapping from offsets to file positions.

A hand-written regular-expression scanner: it reports what wcc refuses or reads differently
at the token level (unterminated strings, template literals, exponent and hex literals,
non-ASCII names, backslash escapes, leading zeros) and hands the parser a list of tokens.
``_Lexer`` is the parser's base class, so both report through the same helpers.
"""

from __future__ import annotations

import math
import re
from typing import Final, NamedTuple

from skillc.diagnostics import DiagnosticSink, Severity, Span
from skillc.frontend.expr.nodes import UNDEFINED, LiteralValue
from skillc.frontend.source import LineIndex

# --------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------


_span = Span.trusted


MAX_NUMBER_DIGITS = 300


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
            return _span(self._line, col, self._line, col + (end - start if end > start else 1))
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
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])")


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


class _Abort(Exception):
    """Stops a parse after its error was reported; never escapes ``parse_expression``."""


class _Lexer:
    __slots__ = ("_attribute", "_file", "_loc", "_sink", "_src", "_toks")

    def __init__(self, src: str, file: str, loc: _Locator, sink: DiagnosticSink, attribute: bool = False) -> None:
        self._src = src
        self._file = file
        self._loc = loc
        self._sink = sink
        self._attribute = attribute  # inside an attribute value, where wcc reads escapes differently
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
                refused = _attribute_refuses(body) if self._attribute and "\\" in body else None
                if refused is not None:
                    # In an attribute value wcc fails to compile \' \" and \n (text takes them).
                    self._sink.emit(
                        "EXPR013",
                        f"backslash escape {refused!r} in a string literal of an attribute value: "
                        "WeChat's compiler refuses it",
                        file=self._file,
                        span=self._loc.span(pos, end),
                        hint="use the other quote character, or put the text in data",
                        severity=Severity.ERROR,
                    )
                    body = _decode_string(body)
                elif "\\" in body:
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
        if len(digits) > MAX_NUMBER_DIGITS:
            # wcc compiles it and JavaScript reads it as a double (Infinity once past 1.8e308);
            # float() does the same without int()'s 4300-digit limit.
            value_long = _long_number(digits)
            self._report(
                "EXPR016",
                f"number literal of {len(digits)} characters (more than {MAX_NUMBER_DIGITS}); "
                f"WeChat reads it as {_js_number(value_long)}",
                start,
                end,
                "compute the number in setData",
            )
            return _Tok(_NUM, text, start, end, value_long)
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


def _attribute_refuses(body: str) -> str | None:
    """The first escape of a string body that wcc refuses inside an attribute value, if any."""
    i = body.find("\\")
    while 0 <= i < len(body) - 1:
        esc = body[i : i + 2]
        if esc[1] in "'\"n":
            return esc
        i = body.find("\\", i + 2)
    return None


def _long_number(digits: str) -> float:
    whole, _, frac = digits.partition(".")
    if not frac and len(whole) > 1 and whole[0] == "0" and all(c in "01234567" for c in whole):
        try:  # sloppy-mode octal, as for short literals
            return float(int(whole, 8))
        except OverflowError:
            return math.inf
    return float(digits)


def _js_number(value: float) -> str:
    """``String(value)`` of JavaScript, for the message (1e-7, not Python's 1e-07)."""
    if math.isinf(value):
        return "Infinity"
    text = _fmt(value) if 1e-6 <= abs(value) < 1e21 or value == 0 else repr(value)
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", text)


def _fmt(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
