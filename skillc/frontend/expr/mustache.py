"""Splitting text into literal parts and ``{{ }}`` mustaches, each mustache parsed.

Where a mustache ends is decided here, before any expression is parsed, the way wcc decides
it: a ``}}`` inside a string or an object literal does not close it, and unclosed mustaches
and strings are reported against the whole text.
"""

from __future__ import annotations

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.expr.lexer import _Locator
from skillc.frontend.expr.nodes import Mustache
from skillc.frontend.expr.parser import parse_expression

__all__ = ["split_mustaches"]


def split_mustaches(text: str, *, file: str, line: int, column: int, sink: DiagnosticSink) -> list[str | Mustache]:
    """Split an attribute value or text node into literal parts and parsed mustaches.

    (line, column) is the position of text[0] in the file. A ``}}`` inside a string literal
    or an object literal does not end the mustache. Entities are not decoded here.
    """
    if "{{" not in text:
        return [text] if text else []
    loc = _Locator(text, line, column)

    def report(code: str, message: str, start: int, end: int, hint: str) -> None:
        sink.emit(code, message, file=file, span=loc.span(start, end), hint=hint)

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
        if close_at < 0:
            if open_string_at >= 0:
                # The string swallowed the closing braces; the string is the real mistake.
                report(
                    "EXPR003",
                    "unterminated string literal",
                    open_string_at,
                    n,
                    "close the string with the same quote on the same line",
                )
            else:
                report("EXPR002", "'{{' is never closed by '}}'", open_at, open_at + 2, "add the closing '}}'")
            out.append(Mustache(text[open_at + 2 :], None, loc.span(open_at, n)))
            break
        source = text[open_at + 2 : close_at]
        if inner_brace_at >= 0:
            report(
                "EXPR014",
                "'}}' inside an object literal: WeChat's compiler ends the mustache there",
                inner_brace_at,
                inner_brace_at + 2,
                "put a space between the braces: '} }'",
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
