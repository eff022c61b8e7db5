"""Diagnostics shared by every stage: the model, the one catalogue of codes, and rendering.

No stage raises on bad user input. Each stage reports through a :class:`DiagnosticSink`
and returns as much result as it can; the CLI and the servers render what was collected.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypedDict, Unpack

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

    @classmethod
    def trusted(cls, line: int, column: int, end_line: int, end_column: int) -> Span:
        """A span from positions a parser computed itself, without validation.

        Parsers build one per node; validation (even ``model_construct``) took a third of
        parse time. This fills the instance as ``model_construct`` does; a test checks the
        result equals a validated Span.
        """
        span = _new_object(cls)
        _set_attr(span, "__dict__", {"line": line, "column": column, "end_line": end_line, "end_column": end_column})
        _set_attr(span, "__pydantic_fields_set__", _SPAN_FIELDS)
        _set_attr(span, "__pydantic_extra__", None)
        _set_attr(span, "__pydantic_private__", None)
        return span


_SPAN_FIELDS = frozenset(Span.model_fields)
_new_object = object.__new__
_set_attr = object.__setattr__


class Where(TypedDict, total=False):
    """Where a diagnostic points and how it deviates from its code's default severity."""

    file: str | None
    span: Span | None
    hint: str | None
    severity: Severity | None


class Diagnostic(BaseModel):
    """One finding. ``file`` is relative to the skill root, with forward slashes."""

    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity
    message: str
    file: str | None = None
    span: Span | None = None
    hint: str | None = None

    @classmethod
    def make(cls, code: str, message: str, **where: Unpack[Where]) -> Diagnostic:
        """The one way to build a diagnostic: the catalogue gives its default severity (an
        unknown code is a bug and raises). A sink's ``emit`` is this plus keeping it."""
        return cls(
            code=code,
            severity=where.get("severity") or explain(code).severity,
            message=message,
            file=where.get("file"),
            span=where.get("span"),
            hint=where.get("hint"),
        )

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

# fmt: off
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
    CodeInfo("JSON006", _E, "A number is beyond the range of a double (1e999): JSON.parse reads it as Infinity; it is read as null."),
    CodeInfo("JSON007", _E, "A string holds a lone surrogate escape (\\ud800) that is not a character; it is read as U+FFFD."),
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
    CodeInfo("MCP023", _E, "An inputSchema or outputSchema nests more than 64 levels of arrays and objects; it is not checked."),
    CodeInfo("MCP024", _E, "More APIs (500) or components (800) than a 24000-character mcp.json can hold; the rest are not checked."),
    CodeInfo("MCP025", _W, "A schema pattern (or patternProperties key) RE2 cannot run (backreference, lookaround): calls of the API are refused (RUN040)."),
    # -- skill scripts, scanned statically (frontend/scripts.py) ------------------------
    CodeInfo("JS001", _E, "An API declared in mcp.json is never registered by index.js."),
    CodeInfo("JS002", _E, "index.js registers an API that mcp.json does not declare."),
    CodeInfo("JS003", _E, "A require() path does not resolve to a file inside the skill."),
    CodeInfo("JS004", _W, "An API handler is not declared async; the runtime awaits a promise."),
    CodeInfo("JS005", _W, "An API is registered more than once; the last registration wins."),
    CodeInfo("JS006", _E, "index.js registers more APIs than mcp.json can declare (500); the rest are not checked."),
    # -- component folders (frontend/package.py) ----------------------------------------
    CodeInfo("CMP001", _E, 'A component\'s index.json must be an object with "component": true.'),
    # -- {{ }} expressions (frontend/expr/) [EXPR###] ----------------------------------
    CodeInfo("EXPR001", _E, "A {{ }} expression has a syntax error; the unexpected token is shown."),
    CodeInfo("EXPR002", _E, "A '{{' is never closed by '}}'."),
    CodeInfo("EXPR003", _E, "A string literal in an expression is not closed on its line."),
    CodeInfo("EXPR004", _E, "Exponent (1.5e3) or hex/octal/binary (0x10) number literals; WeChat's compiler rejects them."),
    CodeInfo("EXPR005", _E, "Unary '+' (as in {{+a}}); WeChat's compiler rejects it."),
    CodeInfo("EXPR006", _E, "A function call in an expression; WeChat renders it as empty. Compute the value in setData."),
    CodeInfo("EXPR007", _E, "A JavaScript operator or keyword WXML does not have (typeof, in, new, =, ??, ?., **, >>>, `...`)."),
    CodeInfo("EXPR008", _E, "An expression is nested too deeply (more than 64 levels, or a tree deeper than 200)."),
    CodeInfo("EXPR009", _E, "Member access or a call on a literal or a parenthesized expression ('ab'.length, (a).b)."),
    CodeInfo("EXPR010", _E, "A non-ASCII character where a name is expected; WeChat's compiler accepts only ASCII names."),
    CodeInfo("EXPR011", _E, "Spread '...' in an array literal; WeChat's compiler rejects it (object spread is fine)."),
    CodeInfo("EXPR012", _W, "A number with a leading zero; WeChat reads 010 as octal 8."),
    CodeInfo("EXPR013", _W, "A backslash escape in a string literal; WeChat does not decode escapes like JavaScript."),
    CodeInfo("EXPR014", _W, "'}}' inside an object literal; WeChat's compiler ends the mustache there. Write '} }'."),
    CodeInfo("EXPR015", _W, "An empty {{ }}; it renders as empty text."),
    CodeInfo("EXPR016", _E, "A number literal longer than 300 characters; it is beyond the range of a double."),
    # -- WXML syntax (frontend/wxml/) [WXML###] ------------------------------------------
    CodeInfo("WXML001", _E, "Unexpected character inside a tag: expected an attribute name, '>' or '/>'."),
    CodeInfo("WXML002", _E, "A close tag does not match the innermost open element; the open tag's position is shown."),
    CodeInfo("WXML003", _E, "A close tag has no matching open tag; it is ignored."),
    CodeInfo("WXML004", _E, "An element is never closed before the end of the file."),
    CodeInfo("WXML005", _E, "An attribute value's opening quote is never closed."),
    CodeInfo("WXML006", _E, "A comment '<!--' is never closed with '-->'; the rest of the file is a comment."),
    CodeInfo("WXML007", _E, "'{{' is not closed by '}}' (or a quoted string inside it is not closed)."),
    CodeInfo("WXML008", _E, "'<' in text does not start a tag; write &lt; for a literal '<'."),
    CodeInfo("WXML009", _E, "An attribute value is not quoted; wcc rejects unquoted values."),
    CodeInfo("WXML010", _E, "A tag is not closed with '>' (or '/>') before the next tag or the end of the file."),
    CodeInfo("WXML011", _E, "A <wxs> element is never closed with </wxs>."),
    CodeInfo("WXML012", _E, "Elements are nested deeper than the parser accepts; deeper elements are dropped."),
    CodeInfo("WXML013", _E, "Too many syntax errors; the rest of the file is not checked."),
    # -- template IR and card rules (ir/lower.py) [TPL###] ---------------------------------
    CodeInfo("TPL001", _E, "A tag that is not a card component (custom components and most built-ins are unavailable)."),
    CodeInfo("TPL002", _W, "map, canvas or collapsible-view: allowed in cards by WeChat, but skillc cannot render it."),
    CodeInfo("TPL003", _E, "<wxs> does not run in cards."),
    CodeInfo("TPL004", _E, "<slot> is not supported in cards."),
    CodeInfo("TPL005", _E, "A scroll-view in a card needs scroll-x."),
    CodeInfo("TPL006", _E, "A scroll-view in a card scrolls horizontally only; scroll-y is not supported."),
    CodeInfo("TPL007", _E, "button open-type is not available in cards."),
    CodeInfo("TPL008", _E, "An event cards do not deliver: only tap, and load/error on <image>, with bind or catch."),
    CodeInfo("TPL010", _W, "wx:for without wx:key; items are matched by position."),
    CodeInfo("TPL011", _E, "wx:elif or wx:else does not follow an element with wx:if or wx:elif."),
    CodeInfo("TPL012", _E, "An unknown wx: directive, or a malformed wx:key, wx:for-item or wx:for-index."),
    CodeInfo("TPL013", _E, "An <import> or <include> src that does not name a .wxml file inside the skill."),
    CodeInfo("TPL014", _E, "<import> or <include> files form a cycle."),
    CodeInfo("TPL015", _E, "<template is> names no template defined in the file or imported into it."),
    CodeInfo("TPL016", _E, "A malformed <template>: no name or is, a duplicate name, or data that is not one {{ }} object."),
    CodeInfo("TPL017", _W, "wx:if or wx:elif holds a plain string (no {{ }}), so it is always true (or false if empty)."),
    CodeInfo("TPL018", _E, "Templates and includes nest too deeply to expand."),
    # -- WXSS syntax and card style rules (frontend/wxss/) [WXSS###] ---------------------
    CodeInfo("WXSS001", _E, "WXSS syntax error: a malformed rule or declaration, or a nested rule; it is skipped."),
    CodeInfo("WXSS002", _E, "A '{' (or '(' / '[') is never closed: the file ends inside the block."),
    CodeInfo("WXSS003", _E, "A quoted string or url() is not closed; the declaration is skipped."),
    CodeInfo("WXSS004", _E, "A stray '}' (or ')' / ']') closes nothing; the next rule's selector is broken."),
    CodeInfo("WXSS005", _E, "A selector cannot be parsed (empty, or an unexpected token); the selector is skipped."),
    CodeInfo("WXSS006", _W, "A selector form cards do not support ('>', '+', '~', '*', [attr], :pseudo); it is dropped."),
    CodeInfo("WXSS007", _W, "A property cards do not support (z-index, float, overflow, gap, animation, ...) or an unknown one; it is dropped."),
    CodeInfo("WXSS008", _W, "A value cards do not support (position: fixed/sticky, display: grid/table/inline-flex, ...); it is dropped."),
    CodeInfo("WXSS009", _W, "CSS variables (--name declarations, var()) are not supported in cards; the declaration is dropped."),
    CodeInfo("WXSS010", _W, "A length unit cards do not support (vh, pt, cm, ...); the declaration is dropped."),
    CodeInfo("WXSS011", _W, "An at-rule cards do not support (@keyframes, @supports, ...) or one in the wrong place; it is ignored."),
    CodeInfo("WXSS012", _W, "A media query cards cannot evaluate (unknown feature, type or syntax); it never matches."),
    CodeInfo("WXSS013", _E, "An @import names a file that does not exist in the skill."),
    CodeInfo("WXSS014", _E, "An @import cycle: a file imports itself through other files; the cycle is cut."),
    CodeInfo("WXSS015", _E, "An @import path is absolute, a URL, not .wxss, or escapes the skill folder."),
    CodeInfo("WXSS016", _E, "Blocks ({ }, ( ), [ ], functions, @media) nest more than 32 levels deep; deeper blocks are dropped."),
    CodeInfo("WXSS017", _E, "A number in a value is out of range (more than 1e15 in size, as 1e999rpx); the declaration is ignored."),
    # -- style resolution (ir/styles.py) [STY###] ------------------------------------------
    CodeInfo("STY001", _W, "A selector names a tag cards never contain (page, input, ...); the rule can never match."),
    # -- rendering, diff and backends (ir/, backends/) [RND###] -----------------------------
    CodeInfo("RND001", _W, "Two items of a wx:for have the same wx:key; the later ones are keyed by index."),
    CodeInfo("RND002", _E, "A <template is> names a template that does not exist at render time."),
    CodeInfo("RND003", _E, "Template calls nest too deeply (a template that calls itself without end)."),
    CodeInfo("RND004", _E, "A data file for rendering is not a JSON object."),
    CodeInfo("RND005", _E, "A card renders more nodes, or walks more wx:for items, than card_max_render_nodes; a new card falls back, a mounted one keeps its last render."),
    CodeInfo("RND006", _E, "Template calls expand more times in one render than the limit (card_max_template_expansions); rendering stops."),
    CodeInfo("RND007", _E, "wx:for over a number larger than the limit (card_max_for_number); rendering stops instead of iterating."),
    CodeInfo("RND008", _E, "A setData path names an array index beyond the limit (card_max_data_index); the update is refused."),
    CodeInfo("RND101", _E, "No output backend is registered under that name; the message lists the available ones."),
    CodeInfo("RND102", _E, "A backend plug-in could not be loaded (import error or exception); the others still work."),
    CodeInfo("RND103", _E, "A backend plug-in lacks name, media_type, extension or a render() method."),
    # -- runtime: API VM, loader, host boundary (runtime/) [RUN###] ------------------------
    CodeInfo("RUN001", _E, "index.js (or a module it requires) threw or failed to compile while the skill loaded."),
    CodeInfo("RUN002", _E, "An API declared in mcp.json was not registered when index.js ran."),
    CodeInfo("RUN003", _W, "index.js registered an API that mcp.json does not declare; no agent can call it."),
    CodeInfo("RUN004", _E, "registerAPI() was given a handler that is not a function."),
    CodeInfo("RUN005", _W, "An API was registered more than once while index.js ran; the last registration wins."),
    CodeInfo("RUN010", _E, "The arguments of a call do not match the API's inputSchema; the pointer names the bad value."),
    CodeInfo("RUN011", _E, "The called API is not declared in mcp.json."),
    CodeInfo("RUN012", _E, "The call did not finish before its deadline (middleware and handler share one timeout)."),
    CodeInfo("RUN013", _E, "The API (or a middleware) threw an exception or returned a rejected promise."),
    CodeInfo("RUN014", _E, "The API returned something that is not an AtomicApiResult (content is required)."),
    CodeInfo("RUN015", _E, "content, structuredContent or _meta of a result is larger than 200 KB as JSON."),
    CodeInfo("RUN016", _W, "structuredContent does not match the API's outputSchema."),
    CodeInfo("RUN017", _E, "The call exceeded the JavaScript memory limit and was stopped."),
    CodeInfo("RUN018", _E, "The call exceeded the JavaScript stack size (recursion too deep)."),
    CodeInfo("RUN019", _E, "The API's risk level (L3/L4) needs the user's approval, which was not given."),
    CodeInfo("RUN020", _W, "wx.request to a host that is not on the allow list was refused."),
    CodeInfo("RUN021", _E, "The promise returned by the API never settled and no host call was pending."),
    CodeInfo("RUN022", _E, "The result of the API could not be converted to JSON (a cycle or a BigInt)."),
    CodeInfo("RUN023", _W, "The in-process deadline failed its start-up self-check; calls run in guard processes."),
    CodeInfo("RUN024", _E, "_meta.x_skillc.risk is not one of L0, L1, L2, L3, L4; the API is treated as L4."),
    CodeInfo("RUN040", _E, "An inputSchema pattern (or patternProperties key) cannot run on RE2 (backreference, lookaround); the call is refused."),
    CodeInfo("RUN041", _E, "Arguments or a result nest arrays/objects deeper than the limit (64); the call or result is refused."),
    CodeInfo("RUN042", _W, "Lone UTF-16 surrogates in a result, arguments, an error or the console were replaced by U+FFFD."),
    CodeInfo("RUN043", _E, "A flow script for `skillc run` is not valid: not JSON, an unknown step key or a value of the wrong type."),
    CodeInfo("RUN044", _W, "A call kept running past its deadline inside a native built-in the interrupt cannot reach; the skill's calls run in guard processes until it ends."),
    CodeInfo("RUN045", _W, "An API called expireAllCards more than card_max_actions times in one call; the extra calls failed and were dropped."),
    # -- component VM and orchestrator (runtime/) [CMPVM###] --
    CodeInfo("CMPVM001", _E, "A component's index.js threw, failed to compile or never called Component({...}); the card falls back."),
    CodeInfo("CMPVM002", _E, "A component lifetime (created or attached) threw; the card falls back to a generic card."),
    CodeInfo("CMPVM003", _E, "A component's Input or Result notification handler threw; the card falls back to a generic card."),
    CodeInfo("CMPVM004", _E, "An event handler, setData callback or Expire/Overflow handler threw; the card keeps its last render."),
    CodeInfo("CMPVM005", _W, "An event names a method the component does not define; nothing runs."),
    CodeInfo("CMPVM006", _E, "sendFollowUpMessage was refused: it needs a text block first, and api/call names declared in mcp.json."),
    CodeInfo("CMPVM007", _W, "setData was given a key that is not a data path, or an undefined value; that key is ignored."),
    CodeInfo("CMPVM008", _E, "The bound component cannot be compiled (missing folder or index.wxml, or a bad template); the card falls back."),
    CodeInfo("CMPVM009", _E, "Rendering the card from its data failed; a new card falls back, a mounted one keeps its last render."),
    CodeInfo("CMPVM010", _W, "The rendered content is taller than the card's maxHeight; an Overflow notification was sent."),
    CodeInfo("CMPVM011", _E, "The card's JavaScript exceeded its deadline, memory or stack; the card is closed (or falls back)."),
    CodeInfo("CMPVM012", _W, "An event or expiry named a card or node that does not exist, or a card that has expired."),
    CodeInfo("CMPVM013", _W, "A card action had bad arguments (openDetailPage without url, setRelatedPage, reapplyApiCall); it was refused."),
    CodeInfo("CMPVM014", _I, "A card was rebuilt in a fresh context from its persisted data (after eviction or a restart)."),
    CodeInfo("CMPVM015", _W, "setData named an array index beyond card_max_data_index; that key is ignored and nothing is allocated."),
    CodeInfo("CMPVM016", _E, "A card's data is larger than card_max_data_bytes as JSON; a new card falls back, a mounted one keeps its last data."),
    CodeInfo("CMPVM017", _W, "A card event produced more actions than card_max_actions; the extra actions were dropped."),
    # -- MCP server (server/) [SRV###] --
    CodeInfo("SRV001", _E, "A path given to `skillc serve` is not served: it is not a skill, or its mcp.json is unusable."),
    CodeInfo("SRV002", _E, "Two served skills have the same folder name; only the first is served."),
    CodeInfo("SRV003", _I, "Two served skills declare an API of the same name; the tool is named <skill>__<api>."),
)
# fmt: on

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

    def emit(self, code: str, message: str, **where: Unpack[Where]) -> Diagnostic:
        diag = Diagnostic.make(code, message, **where)
        self._items.append(diag)
        return diag

    def extend(self, diags: Iterable[Diagnostic], *, unique: bool = False) -> None:
        """Add diagnostics; ``unique`` skips any equal to one already here (a file imported or a
        template expanded at several places has each of its defects reported once)."""
        if not unique:
            self._items.extend(diags)
            return
        seen = set(self._items)
        for diag in diags:
            if diag not in seen:
                seen.add(diag)
                self._items.append(diag)

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
    # Lines are split once per file: a file with thousands of diagnostics stays linear.
    split: dict[str, list[str] | None] = {}
    for n, diag in enumerate(sort_diagnostics(diags)):
        if n:
            out.append("")  # a blank line between diagnostics keeps excerpts readable
        out.append(f"{format_location(diag, prefix)}: {diag.severity.value}[{diag.code}]: {diag.message}")
        if diag.file is not None and diag.span is not None:
            if diag.file not in split:
                text = lookup(diag.file)
                split[diag.file] = text.splitlines() if text is not None else None
            lines = split[diag.file]
            if lines is not None:
                out.extend(_excerpt(lines, diag.span))
        if diag.hint:
            out.append(f"  = hint: {diag.hint}")
    return "\n".join(out) + ("\n" if out else "")


def _excerpt(lines: list[str], span: Span) -> list[str]:
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
