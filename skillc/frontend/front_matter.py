"""SKILL.md's YAML front matter: the ``---`` block before the instructions.

WeChat reads SKILL.md as plain Markdown, so a front matter is optional; agents' skill formats
(MCP Skills, SEP-2640) read ``name`` and ``description`` from it, verbatim, and hosts check them
field by field. So it is parsed as YAML (folded ``>`` and literal ``|`` blocks, quotes, escapes),
never by splitting lines at ``:``, and a block YAML cannot read is a finding with its line and
column, not a silently wrong description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from skillc.diagnostics import DiagnosticSink, Span

_OPENING = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)


@dataclass(frozen=True)
class FrontMatter:
    """``fields``: the mapping as YAML gives it ({} when there is no block or it cannot be read);
    ``body``: the Markdown after the block; ``body_line``: the 1-based line the body starts on."""

    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    present: bool = False

    def text(self, key: str) -> str | None:
        """A field as a string, when YAML gives one (a scalar that is not a string is written back
        in its YAML form, as a host comparing field by field would read it)."""
        value = self.fields.get(key)
        if value is None or isinstance(value, (dict, list)):
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


def parse_front_matter(text: str, sink: DiagnosticSink | None = None, *, file: str = "SKILL.md") -> FrontMatter:
    """The front matter of ``text``. Problems go to ``sink`` as SKL013 (with the YAML line and
    column, counted in the file); the body is then everything after the block."""
    opening = _OPENING.match(text)
    if opening is None:
        return FrontMatter(body=text)
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        if sink is not None:
            sink.emit(
                "SKL013",
                "SKILL.md starts a front matter with '---' but never closes it",
                file=file,
                span=Span.point(1, 1),
                hint="end the front matter with a line '---'",
            )
        return FrontMatter(body=text)
    block = text[opening.end() : closing.start()]
    rest = text[closing.end() :]
    body = rest[1:] if rest.startswith("\n") else rest[2:] if rest.startswith("\r\n") else rest
    body_line = text.count("\n", 0, closing.end()) + 2
    try:
        loaded = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as err:
        if sink is not None:
            mark = getattr(err, "problem_mark", None)
            line = 2 + (mark.line if mark is not None else 0)  # the block starts on line 2
            column = 1 + (mark.column if mark is not None else 0)
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            sink.emit(
                "SKL013",
                f"SKILL.md front matter is not valid YAML: {problem}",
                file=file,
                span=Span.point(line, column),
                hint="quote values that contain ': ' or start with a YAML indicator, or use a folded block (>)",
            )
        return FrontMatter(body=body, body_line=body_line, present=True)
    if not isinstance(loaded, dict):
        if sink is not None:
            sink.emit(
                "SKL013",
                f"SKILL.md front matter is a YAML {type(loaded).__name__}, not a mapping of fields",
                file=file,
                span=Span.point(2, 1),
                hint="write one 'key: value' per line (name, description)",
            )
        return FrontMatter(body=body, body_line=body_line, present=True)
    return FrontMatter(fields={str(k): v for k, v in loaded.items()}, body=body, body_line=body_line, present=True)
