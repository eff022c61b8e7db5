"""tinycss2's tokens in the source text: offsets <-> positions, token ends, token lists.

tinycss2 gives a token only its start line and column; where it ends, where a block's
closing bracket is and the span over several tokens are computed here from the text as
tinycss2 saw it, so every diagnostic carries an exact span.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from itertools import accumulate
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
        # Each line starts one past the end of the one before; the last piece ends the text.
        self.starts = list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))
        self.starts.pop()
        self.line0, self.col0 = origin
        # The last tok_span asked for: spans are immutable, so a repeated request shares it.
        self._memo_first: Token = None
        self._memo_last: Token = None
        self._memo_span = Span.trusted(1, 1, 1, 2)  # never returned: no token is None
        self._memo_start = self._memo_end = 0  # its offsets, the end before widening to one char

    def tok_range(self, first: Token, last: Token) -> tuple[int, int]:
        """Offsets from the start of ``first`` to the end of ``last``."""
        if first is self._memo_first and last is self._memo_last:
            return self._memo_start, self._memo_end  # the span just made for these tokens (a selector's)
        return self.tok_start(first), self.tok_end(last)

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column - 1

    def offset_at(self, line: int, column: int) -> int:
        """The offset of a position a span of this source gives (origin applied): ``_loc`` undone."""
        index = line - self.line0
        if index == 0:
            column -= self.col0 - 1
        return self.starts[index] + column - 1

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
        # span(tok_start(first), tok_end(last)) without the bisect: the first token carries its line and column.
        if last is None:
            last = first
        if first is self._memo_first and last is self._memo_last:
            return self._memo_span  # a rule of one selector asks for the selector's span twice
        line, col = first.source_line, first.source_column
        start = self.starts[line - 1] + col - 1
        if last is first:
            end = self._end_from(first, start)
        else:
            end = self._end_from(last, self.starts[last.source_line - 1] + last.source_column - 1)
        self._memo_start, self._memo_end = start, end
        span = self.span_at(line, col, start, end)
        self._memo_first, self._memo_last, self._memo_span = first, last, span
        return span

    def bounded(self, first: Token, last: Token, stop: int) -> Span | None:
        """``tok_span(first, last)`` read from the text rather than computed, for a caller that
        knows only whitespace tokens lie between ``last`` and offset ``stop``, where the ';', '{'
        or '}' after them starts: the text up to ``stop``, whitespace cut, ends where ``last``
        does, unless a comment (no token) sits there or a token has a computed end; None then.
        Kept as tok_span's last answer, so tok_range and a repeated tok_span follow it."""
        start = self.starts[first.source_line - 1] + first.source_column - 1
        text = self.text[start:stop].rstrip(" \t\n")
        if "/*" in text or computed_end(text):
            return None
        end = start + len(text)
        span = self.span_at(first.source_line, first.source_column, start, end)
        self._memo_first, self._memo_last, self._memo_span = first, last, span
        self._memo_start, self._memo_end = start, end
        return span

    def span_at(self, line: int, col: int, start: int, end: int) -> Span:
        """The span from offset ``start``, which is at ``line``:``col`` of the text, to ``end``:
        ``span`` without the search for where ``start`` is."""
        if end <= start:
            end = start + 1
        if line == 1:
            col += self.col0 - 1
        line += self.line0 - 1
        if self.text.find("\n", start, end) < 0:
            return Span.trusted(line, col, line, col + end - start)
        end_line, end_col = self._loc(end)
        return Span.trusted(line, col, end_line, end_col)

    def _loc(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        line, col = index + 1, offset - self.starts[index] + 1
        if line == 1:
            col += self.col0 - 1
        return line + self.line0 - 1, col

    def tok_end(self, tok: Token) -> int:
        return self._end_from(tok, self.starts[tok.source_line - 1] + tok.source_column - 1)

    def _end_from(self, tok: Token, start: int) -> int:
        """Where ``tok``, starting at offset ``start``, ends."""
        kind = tok.type
        if kind in _CLOSERS:
            close = self.close_offset(tok)
            return len(self.text) if close is None else close + 1
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


def computed_end(text: str) -> bool:
    """Whether a token in ``text`` may have its end computed from its value rather than read
    (``_end_from``): an escape, a string or url (re-serialised), a unicode-range. There the
    computed end may fall short of or past the token's text. Substring tests: a regular
    expression here cost five times as much."""
    return (
        "\\" in text
        or '"' in text
        or "'" in text
        or ("(" in text and ("rl(" in text or "RL(" in text or "rL(" in text or "Rl(" in text))
        or ("+" in text and ("u+" in text or "U+" in text))
    )


def last_token(tokens: Sequence[Token]) -> Token | None:
    """The last of ``tokens`` that is not whitespace (comments are no tokens here)."""
    k = len(tokens) - 1
    while k >= 0 and tokens[k].type == "whitespace":
        k -= 1
    return tokens[k] if k >= 0 else None


MAX_NESTING = 32  # blocks inside blocks: { }, ( ), [ ] and functions, @media included


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
