"""Diagnostics shared by every stage: the model, the one catalogue of codes, and rendering.

No stage raises on bad user input. Each stage reports through a :class:`DiagnosticSink`
and returns as much result as it can; the CLI and the servers render what was collected.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Span(BaseModel):
    """A source range. Lines and columns are 1-based; the end is exclusive."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=1)
    column: int = Field(ge=1)
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=1)

    @classmethod
    def point(cls, line: int, column: int, width: int = 1) -> Span:
        return cls(line=line, column=column, end_line=line, end_column=column + max(width, 1))


class Diagnostic(BaseModel):
    """One finding. ``file`` is relative to the skill root, with forward slashes."""

    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity
    message: str
    file: str | None = None
    span: Span | None = None
    hint: str | None = None

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        line = self.span.line if self.span else 0
        column = self.span.column if self.span else 0
        return (self.file or "", line, column, _SEVERITY_RANK[self.severity], self.code, self.message)


# --------------------------------------------------------------------------------------
# The catalogue. Every code any stage emits is declared here, once, with its default
# severity and a one-line explanation; docs/diagnostics.md is generated from it
# (``skillc codes --markdown``) and a test keeps the two in sync.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeInfo:
    code: str
    severity: Severity
    summary: str


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

_CATALOGUE: tuple[CodeInfo, ...] = (
    # -- skill package layout (frontend/package.py, frontend/project.py) --------------
    CodeInfo("SKL001", _E, "The path is not a skill folder: it does not exist or holds neither SKILL.md nor mcp.json."),
    CodeInfo("SKL002", _E, "SKILL.md is missing from the skill folder."),
    CodeInfo("SKL003", _E, "SKILL.md exists under another letter case; the runtime reads only the exact name."),
    CodeInfo("SKL004", _E, "SKILL.md is larger than 16000 bytes of UTF-8."),
    CodeInfo("SKL005", _E, "A text file (SKILL.md, .js, .json, .wxml, .wxss) is not valid UTF-8."),
    CodeInfo("SKL006", _E, "mcp.json is missing from the skill folder."),
    CodeInfo("SKL007", _E, "index.js is missing from the skill folder."),
    CodeInfo("SKL008", _E, "A symbolic link points outside the skill folder; it is ignored."),
    CodeInfo("SKL009", _E, "A file could not be read."),
    CodeInfo("SKL010", _W, "SKILL.md is empty."),
    CodeInfo("PRJ001", _E, "app.json of a mini-program project is invalid or lists no agent.skills."),
    CodeInfo("PRJ002", _E, "An agent.skills[] entry is malformed or its path is not a folder."),
    # -- JSON syntax (frontend/jsonsrc.py) -----------------------------------------------
    CodeInfo("JSON001", _E, "The file is not valid JSON; the position of the syntax error is shown."),
    CodeInfo("JSON002", _E, "A trailing comma before } or ]; JSON does not allow it."),
    CodeInfo("JSON003", _E, "The same key appears twice in one object; the last value would win silently."),
    CodeInfo("JSON004", _E, "The file starts with a UTF-8 byte-order mark, which JSON.parse rejects."),
    CodeInfo("JSON005", _E, "JSON nesting is deeper than the loader accepts."),
    # -- mcp.json manifest (frontend/manifest.py) --------------------------------------
    CodeInfo("MCP001", _E, "mcp.json must hold a JSON object at the top level."),
    CodeInfo("MCP002", _E, 'mcp.json must have an "apis" array.'),
    CodeInfo("MCP003", _E, "A field of mcp.json has the wrong type."),
    CodeInfo("MCP004", _E, 'An API has no "name".'),
    CodeInfo("MCP005", _E, "Two APIs have the same name."),
    CodeInfo("MCP006", _E, 'An API has no "description"; the agent chooses APIs by their descriptions.'),
    CodeInfo("MCP007", _E, 'An API has no "inputSchema" object; with no parameters use an empty object schema.'),
    CodeInfo("MCP008", _E, "inputSchema is not a valid JSON Schema."),
    CodeInfo("MCP009", _E, "outputSchema is not a valid JSON Schema."),
    CodeInfo("MCP010", _E, "_meta.ui.componentPath names no components[] entry with exactly that path."),
    CodeInfo("MCP011", _E, "A component folder lacks one of index.js, index.json, index.wxml, index.wxss."),
    CodeInfo("MCP012", _E, "_meta.ui.pagePath must start with '/' and carry no query string."),
    CodeInfo("MCP013", _E, "Two components[] entries have the same path."),
    CodeInfo("MCP014", _E, "components[].relatedPage must start with '/'."),
    CodeInfo("MCP015", _E, "components[].expirable must be a boolean."),
    CodeInfo("MCP016", _E, 'components[].permissions["scope.dynamic"].desc must be a string.'),
    CodeInfo("MCP017", _W, "A component folder is referenced by no API and no components[] entry."),
    CodeInfo("MCP018", _E, "mcp.json is longer than 24000 characters as compact JSON without outputSchema."),
    CodeInfo("MCP019", _W, "mcp.json uses 90 % or more of its 24000-character budget."),
    CodeInfo("MCP020", _E, 'A components[] entry has no "path".'),
    CodeInfo("MCP021", _E, "A componentPath must have the form components/<name>/index."),
    CodeInfo("MCP022", _E, "A components[] path points at a folder that does not exist."),
    # -- skill scripts, scanned statically (frontend/scripts.py) ------------------------
    CodeInfo("JS001", _E, "An API declared in mcp.json is never registered by index.js."),
    CodeInfo("JS002", _E, "index.js registers an API that mcp.json does not declare."),
    CodeInfo("JS003", _E, "A require() path does not resolve to a file inside the skill."),
    CodeInfo("JS004", _W, "An API handler is not declared async; the runtime awaits a promise."),
    CodeInfo("JS005", _W, "An API is registered more than once; the last registration wins."),
    # -- component folders (frontend/package.py) ----------------------------------------
    CodeInfo("CMP001", _E, 'A component\'s index.json must be an object with "component": true.'),
    # -- {{ }} expressions (frontend/expr.py) [EXPR###] ----------------------------------
    # -- WXML syntax (frontend/wxml.py) [WXML###] ------------------------------------------
    # -- template IR and card rules (ir/lower.py) [TPL###] ---------------------------------
    # -- WXSS syntax and card style rules (frontend/wxss.py) [WXSS###] ---------------------
    # -- style resolution (ir/styles.py) [STY###] ------------------------------------------
    # -- rendering, diff and backends (ir/, backends/) [RND###] -----------------------------
    # -- runtime: API VM, loader, host boundary (runtime/) [RUN###] ------------------------
)

CATALOGUE: Mapping[str, CodeInfo] = {info.code: info for info in _CATALOGUE}


def explain(code: str) -> CodeInfo:
    try:
        return CATALOGUE[code]
    except KeyError:
        raise KeyError(f"diagnostic code {code!r} is not in the catalogue") from None


def catalogue_markdown() -> str:
    """The body of docs/diagnostics.md, generated so the two never drift apart."""
    lines = [
        "# Diagnostic codes",
        "",
        "Every diagnostic skillc prints carries one of these codes. The code is stable: tools may",
        "match on it. The severity is the default; `skillc check` exits 1 when any error is reported.",
        "This file is generated by `skillc codes --markdown`; a test keeps it in sync with the code.",
        "",
        "| code | severity | meaning |",
        "|---|---|---|",
    ]
    for info in _CATALOGUE:
        summary = info.summary.replace("|", r"\|")
        lines.append(f"| `{info.code}` | {info.severity.value} | {summary} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Collection
# --------------------------------------------------------------------------------------


class DiagnosticSink:
    """Collects diagnostics for one unit of work. Stages get one passed in."""

    def __init__(self) -> None:
        self._items: list[Diagnostic] = []

    def emit(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        span: Span | None = None,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        info = explain(code)
        diag = Diagnostic(
            code=code,
            severity=severity or info.severity,
            message=message,
            file=file,
            span=span,
            hint=hint,
        )
        self._items.append(diag)
        return diag

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self._items.extend(diags)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self._items)

    def sorted(self) -> list[Diagnostic]:
        return sort_diagnostics(self._items)


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Stable order: file, line, column, then severity and code."""
    return sorted(diags, key=Diagnostic.sort_key)


@dataclass(frozen=True)
class Counts:
    errors: int = 0
    warnings: int = 0
    infos: int = 0


def count(diags: Iterable[Diagnostic]) -> Counts:
    e = w = i = 0
    for d in diags:
        if d.severity is Severity.ERROR:
            e += 1
        elif d.severity is Severity.WARNING:
            w += 1
        else:
            i += 1
    return Counts(e, w, i)


# --------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------

SourceLookup = Callable[[str], str | None]


def _join(prefix: str, file: str) -> str:
    if not prefix or prefix == ".":
        return file
    return prefix.rstrip("/") + "/" + file


def format_location(diag: Diagnostic, prefix: str = "") -> str:
    if diag.file is None:
        where = prefix.rstrip("/") if prefix else "<skill>"
    else:
        where = _join(prefix, diag.file)
    if diag.span is not None:
        where += f":{diag.span.line}:{diag.span.column}"
    return where


def render_text(
    diags: Iterable[Diagnostic],
    sources: SourceLookup | Mapping[str, str] | None = None,
    *,
    prefix: str = "",
) -> str:
    """Compiler-style text: ``file:line:col: severity[CODE]: message``, the line, a caret."""
    lookup: SourceLookup
    if sources is None:
        lookup = lambda _f: None  # noqa: E731
    elif isinstance(sources, Mapping):
        mapping = sources
        lookup = mapping.get
    else:
        lookup = sources
    out: list[str] = []
    for n, diag in enumerate(sort_diagnostics(diags)):
        if n:
            out.append("")  # a blank line between diagnostics keeps excerpts readable
        out.append(f"{format_location(diag, prefix)}: {diag.severity.value}[{diag.code}]: {diag.message}")
        text = lookup(diag.file) if diag.file is not None and diag.span is not None else None
        if text is not None and diag.span is not None:
            out.extend(_excerpt(text, diag.span))
        if diag.hint:
            out.append(f"  = hint: {diag.hint}")
    return "\n".join(out) + ("\n" if out else "")


def _excerpt(text: str, span: Span) -> list[str]:
    lines = text.splitlines()
    if not 1 <= span.line <= len(lines):
        return []
    src = lines[span.line - 1].replace("\t", " ")
    gutter = str(span.line)
    pad = " " * len(gutter)
    start = min(span.column - 1, len(src))
    if span.end_line == span.line:
        width = max(span.end_column - span.column, 1)
    else:
        width = max(len(src) - start, 1)
    # Long minified lines: show a window around the caret rather than the whole line.
    if len(src) > 160:
        left = max(start - 60, 0)
        src = ("..." if left else "") + src[left : left + 120] + ("..." if left + 120 < len(src) else "")
        start = start - left + (3 if left else 0)
        width = min(width, 120)
    return [f" {gutter} | {src}", f" {pad} | {' ' * start}{'^' * width}"]


def to_json_obj(diags: Iterable[Diagnostic], prefix: str = "") -> list[dict[str, object]]:
    result = []
    for diag in sort_diagnostics(diags):
        obj = diag.model_dump(mode="json", exclude_none=True)
        if prefix:
            obj["path"] = _join(prefix, diag.file) if diag.file is not None else prefix
        result.append(obj)
    return result


def render_json(diags: Iterable[Diagnostic], prefix: str = "") -> str:
    return json.dumps(to_json_obj(diags, prefix), ensure_ascii=False, indent=2)
