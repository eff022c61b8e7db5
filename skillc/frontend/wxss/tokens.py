"""tinycss2's tokens in the source text: offsets <-> positions, token ends, token lists.

tinycss2 gives a token only its start line and column; where it ends, where a block's
closing bracket is and the span over several tokens are computed here from the text as
tinycss2 saw it, so every diagnostic carries an exact span.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any

from skillc.diagnostics import Span

__all__ = ["Token"]

Token = Any  # a tinycss2 node; the library ships no type information

_CLOSERS = {"{} block": "}", "() block": ")", "[] block": "]", "function": ")"}
_NAMES = frozenset({"ident", "at-keyword", "hash"})
_NUMBERS = frozenset({"number", "percentage", "dimension"})
# Where a name-like or numeric token ends: serialize() would be exact but is slow on a hot path.
_NAME_REST = re.compile(r"(?:[\w-]|\\[^\n]|[^\x00-\x7f])*")
_NUMBER = re.compile(r"[-+]?(?:\d*\.)?\d+(?:[eE][-+]?\d+)?(?:%|(?:[\w-]|\\[^\n]|[^\x00-\x7f])*)")


class _Source:
    """Offsets <-> positions over the text exactly as tinycss2 saw it (newlines normalised)."""

    def __init__(self, text: str, origin: tuple[int, int]) -> None:
        self.text = text
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", text))
        self.line0, self.col0 = origin

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column - 1

    def tok_start(self, tok: Token) -> int:
        return self.offset(tok.source_line, tok.source_column)

    def span(self, start: int, end: int) -> Span:
        end = max(end, start + 1)
        line, col = self._loc(start)
        if self.text.find("\n", start, end) < 0:  # the common single-line case: no second search
            end_line, end_col = line, col + end - start
        else:
            end_line, end_col = self._loc(end)
        return Span.trusted(line, col, end_line, end_col)

    def tok_span(self, first: Token, last: Token | None = None) -> Span:
        return self.span(self.tok_start(first), self.tok_end(last if last is not None else first))

    def _loc(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        line, col = index + 1, offset - self.starts[index] + 1
        if line == 1:
            col += self.col0 - 1
        return line + self.line0 - 1, col

    def tok_end(self, tok: Token) -> int:
        kind = tok.type
        if kind in _CLOSERS:
            close = self.close_offset(tok)
            return len(self.text) if close is None else close + 1
        start = self.tok_start(tok)
        if kind in ("string", "url"):
            return start + len(tok.representation)
        if kind == "literal":
            return start + len(tok.value)
        if kind in _NAMES:  # '#name', '@name': the sigil is one char
            return _NAME_REST.match(self.text, start + (kind != "ident")).end()  # type: ignore[union-attr]
        if kind in _NUMBERS:
            match = _NUMBER.match(self.text, start)
            return match.end() if match else start + len(tok.serialize())
        return start + len(tok.serialize())

    def close_offset(self, tok: Token) -> int | None:
        """Offset of the bracket closing ``tok``, None when the file ends first."""
        children = tok.arguments if tok.type == "function" else tok.content
        last = next((t for t in reversed(children) if t.type not in ("whitespace", "error", "comment")), None)
        if last is not None:
            pos = self.tok_end(last)
        elif tok.type == "function":
            pos = self.tok_start(tok) + len(tok.serialize().split("(", 1)[0]) + 1
        else:
            pos = self.tok_start(tok) + 1
        return self._find_close(pos, _CLOSERS[tok.type])

    def _find_close(self, pos: int, char: str) -> int | None:
        text, n = self.text, len(self.text)
        while pos < n:
            c = text[pos]
            if c == char:
                return pos
            if c in " \t\n":
                pos += 1
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    return None
                pos = end + 2
            else:  # our end estimate fell short (escapes): fall back to a plain search
                found = text.find(char, pos)
                return None if found < 0 else found
        return None


MAX_NESTING = 32  # blocks inside blocks: { }, ( ), [ ] and functions, @media included


def _prune(tokens: Sequence[Token], limit: int = MAX_NESTING) -> Token | None:
    """Empty every block nested deeper than ``limit`` (the readers recurse per level), without
    recursing here; return the first such block, or None when the tree is within the limit."""
    first: Token | None = None
    stack: list[tuple[Sequence[Token], int]] = [(tokens, 1)]
    while stack:
        children, level = stack.pop()
        for tok in children:
            if tok.type not in _CLOSERS:
                continue
            inner = tok.arguments if tok.type == "function" else tok.content
            if level > limit:
                if first is None or (tok.source_line, tok.source_column) < (first.source_line, first.source_column):
                    first = tok
                inner.clear()
            else:
                stack.append((inner, level + 1))
    return first


def _significant(tokens: Sequence[Token]) -> list[Token]:
    return [t for t in tokens if t.type not in ("whitespace", "comment", "error")]


def _split(tokens: Sequence[Token], sep: str) -> list[list[Token]]:
    parts: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.type == "literal" and tok.value == sep:
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts
