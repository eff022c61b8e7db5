"""The state of reading one file of the sheet, which every part of the parser shares.

The selector, declaration and media-query readers are mixins over this base and the
parser's ``_File`` combines them; every part reports through ``emit``, with the file's
name, into the sink of the sheet being parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity, Span, explain
from skillc.frontend.wxss.nodes import Declaration
from skillc.frontend.wxss.tokens import Token, _Source

# A diagnostic with its span as offsets from the start of the text it was found in:
# (code, message, start, end, hint).
Found = tuple[str, str, int, int, str | None]


# What reading one declaration gave, position-free: its result (None when it was dropped; its
# span is where it was first read, replaced on replay) and its diagnostics relative to the
# declaration's first character. Equal text reads equal (tokens, checks and messages are a
# function of the text), so this replays it anywhere. A plain tuple: one is made per distinct
# declaration of a build, most never replayed.
Known = tuple[Declaration | None, tuple[Found, ...]]

# The declaration's source text -> what reading it gave; inside @font-face the text is keyed
# with a leading NUL, which no normalised text holds.
DeclarationMemo = dict[str, Known]


class _Sheet(Protocol):
    # The parser's current sink, read at each emit: it is muted while a file imported a second
    # time is parsed again.
    sink: DiagnosticSink
    # Shared by the sheets of one check or build (SheetCache), else by one parse.
    declarations: DeclarationMemo


# Each code's default severity, looked up once: emit builds diagnostics without validation.
_SEVERITY: dict[str, Severity] = {}


class _FileReader:
    """Parsing state for one file of the sheet (the entry file or an @import target)."""

    def __init__(self, parser: _Sheet, src: _Source, file: str) -> None:
        self.p = parser
        self.src = src
        self.file = file
        # Blocks beyond MAX_NESTING were emptied (WXSS016): a value that then fails its grammar
        # is dropped without a second, follow-on diagnostic.
        self.pruned = False
        # While a declaration is read for the memo: what it reports, its spans as offsets from
        # ``recording_at``, where the declaration starts.
        self.recording: list[Found] | None = None
        self.recording_at = 0

    def emit(self, code: str, message: str, span: Span, hint: str | None = None) -> None:
        severity = _SEVERITY.get(code)
        if severity is None:
            severity = _SEVERITY[code] = explain(code).severity  # an unknown code raises here, as make does
        self.p.sink.extend((Diagnostic.trusted(code, severity, message, self.file, span, hint),))
        if self.recording is not None:
            src, at = self.src, self.recording_at
            start = src.offset_at(span.line, span.column) - at
            self.recording.append((code, message, start, src.offset_at(span.end_line, span.end_column) - at, hint))

    def text_of(self, sig: Sequence[Token]) -> str:
        """Source text from the first to the last token, whitespace collapsed."""
        if not sig:
            return ""
        start, end = self.src.tok_range(sig[0], sig[-1])
        return " ".join(self.src.text[start:end].split())
