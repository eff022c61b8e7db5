"""Which regular expressions of a JSON Schema RE2 can run.

Schemas are checked at run time on RE2, which matches in time linear in the input (the
runtime's ``schema`` module). A pattern RE2 cannot compile (a backreference, lookaround) would
need a backtracking engine, so it is reported by ``check`` (``MCP025``) and refused at call time
(``RUN040``) rather than silently run on Python's ``re``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

from skillc.frontend.jsonsrc import PathPart, pointer

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print its parse errors to stderr


@dataclass(frozen=True)
class UnsupportedPattern:
    """A schema pattern RE2 cannot run, at ``path`` inside the schema."""

    path: tuple[PathPart, ...]
    pattern: str
    reason: str

    @property
    def where(self) -> str:
        """The JSON pointer of the pattern inside the schema."""
        return pointer(self.path)

    def __str__(self) -> str:
        shown = f"{self.pattern!r} " if self.pattern else ""
        return f"{self.where or '/'}: {shown}({self.reason})"


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """The RE2 program for ``pattern``, or the reason RE2 refuses it (a str)."""
    try:
        return re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as err:
        raw = err.args[0] if err.args else err
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    except (TypeError, ValueError, UnicodeError) as err:
        return str(err)


def unsupported_patterns(schema: Any) -> list[UnsupportedPattern]:
    """Every ``pattern`` and ``patternProperties`` key of ``schema`` that RE2 cannot compile.

    Walks the schema iteratively (a schema nested thousands deep cannot overflow the stack).
    """
    found: list[UnsupportedPattern] = []
    unevaluated: list[tuple[PathPart, ...]] = []
    has_pattern_properties = False
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            if "unevaluatedProperties" in node:
                unevaluated.append(path)
            has_pattern_properties = has_pattern_properties or isinstance(node.get("patternProperties"), dict)
            pat = node.get("pattern")
            if isinstance(pat, str) and isinstance(reason := compiled(pat), str):
                found.append(UnsupportedPattern((*path, "pattern"), pat, reason))
            props = node.get("patternProperties")
            if isinstance(props, dict):
                for key in props:
                    if isinstance(key, str) and isinstance(reason := compiled(key), str):
                        found.append(UnsupportedPattern((*path, "patternProperties", key), key, reason))
            stack.extend((v, (*path, str(k))) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
    if has_pattern_properties:
        # jsonschema evaluates unevaluatedProperties with Python's re (no override point): refuse it
        reason = "unevaluatedProperties with patternProperties would run the patterns on Python's re"
        found.extend(UnsupportedPattern((*p, "unevaluatedProperties"), "", reason) for p in unevaluated)
    return sorted(found, key=lambda u: u.where)
