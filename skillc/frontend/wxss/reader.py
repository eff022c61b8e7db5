"""The state of reading one file of the sheet, which every part of the parser shares.

The selector, declaration and media-query readers are mixins over this base and the
parser's ``_File`` combines them; every part reports through ``emit``, with the file's
name, into the sink of the sheet being parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.wxss.tokens import Token, _Source


class _Sheet(Protocol):
    # The parser's current sink, read at each emit: it is muted while a file imported a second
    # time is parsed again.
    sink: DiagnosticSink


class _FileReader:
    """Parsing state for one file of the sheet (the entry file or an @import target)."""

    def __init__(self, parser: _Sheet, src: _Source, file: str) -> None:
        self.p = parser
        self.src = src
        self.file = file
        # Blocks beyond MAX_NESTING were emptied (WXSS016): a value that then fails its grammar
        # is dropped without a second, follow-on diagnostic.
        self.pruned = False

    def emit(self, code: str, message: str, span: Span, hint: str | None = None) -> None:
        self.p.sink.emit(code, message, file=self.file, span=span, hint=hint)

    def text_of(self, sig: Sequence[Token]) -> str:
        """Source text from the first to the last token, whitespace collapsed."""
        if not sig:
            return ""
        start, end = self.src.tok_range(sig[0], sig[-1])
        return " ".join(self.src.text[start:end].split())
