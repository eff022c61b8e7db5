"""Offsets to 1-based line/column spans, shared by every parser of the frontend."""

from __future__ import annotations

import bisect
import re

from skillc.diagnostics import Span

_NEWLINE = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Maps character offsets of one text to line/column positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def loc(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def span(self, start: int, end: int | None = None) -> Span:
        line, col = self.loc(start)
        end_line, end_col = self.loc(max(end if end is not None else start + 1, start + 1))
        # Positions computed here are valid by construction: no validation (one span per node).
        return Span.trusted(line, col, end_line, end_col)


def decode_utf8(data: bytes) -> tuple[str | None, tuple[int, int] | None]:
    """Decode strictly. On failure return (None, (line, column)) of the first bad byte."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        prefix = data[: err.start].decode("utf-8", errors="replace")
        return None, LineIndex(prefix).loc(len(prefix))
