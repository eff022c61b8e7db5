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


class _CoreSchemaLoader(yaml.SafeLoader):
    """PyYAML reads YAML 1.1 (``yes`` is true, ``2026-01-01`` a date); hosts of agent skills read
    YAML 1.2's core schema and compare the front matter field by field as JSON. So plain scalars
    resolve as the core schema does: null, true/false, integers, floats; everything else is text."""


_CoreSchemaLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
):
    _CoreSchemaLoader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), _first)


def _core_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)  # "010" is ten in YAML 1.2, not eight


def _core_bool(loader: yaml.SafeLoader, node: yaml.Node) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"  # type: ignore[arg-type]


def _core_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    text = str(loader.construct_scalar(node)).lower()  # type: ignore[arg-type]
    if text.endswith("inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float("nan") if text == ".nan" else float(text)


_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:bool", _core_bool)
_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:float", _core_float)

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
        loaded = yaml.load(block, Loader=_CoreSchemaLoader) if block.strip() else {}  # a SafeLoader: no objects
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
