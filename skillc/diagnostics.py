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

    model_config = ConfigDict(frozen=True, defer_build=True)

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

    model_config = ConfigDict(frozen=True, defer_build=True)

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

    @classmethod
    def trusted(
        cls, code: str, severity: Severity, message: str, file: str | None, span: Span | None, hint: str | None
    ) -> Diagnostic:
        """A diagnostic a parser builds from values it holds the types of (the severity from
        ``explain``), without validation: a sheet can give thousands. Filled as ``Span.trusted``
        is; a test checks the result equals one from ``make``."""
        diag = _new_object(cls)
        _set_attr(
            diag,
            "__dict__",
            {"code": code, "severity": severity, "message": message, "file": file, "span": span, "hint": hint},
        )
        # A set of its own, as model_construct gives: model_copy(update=...) adds to it.
        _set_attr(diag, "__pydantic_fields_set__", set(_DIAGNOSTIC_FIELDS))
        _set_attr(diag, "__pydantic_extra__", None)
        _set_attr(diag, "__pydantic_private__", None)
        return diag

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        line = self.span.line if self.span else 0
        column = self.span.column if self.span else 0
        return (self.file or "", line, column, _SEVERITY_RANK[self.severity], self.code, self.message)


_DIAGNOSTIC_FIELDS = frozenset(Diagnostic.model_fields)


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
    # The official validator's rule id(s) this code corresponds to ("V002", "V012/V015"), "" when
    # the finding is skillc's own. An official rule's failure is always an error here.
    official: str = ""
    # The gate judges, the renderer draws: a finding never stops a card being drawn, except one
    # that leaves no tree to draw (WXML or a {{ }} that does not parse). Those codes say so here.
    blocks_render: bool = False


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

# fmt: off
_CATALOGUE: tuple[CodeInfo, ...] = (
    # -- skill package layout (frontend/package.py, frontend/project.py) --------------
    CodeInfo("SKL001", _E, "The path is not a skill folder: it does not exist or holds neither SKILL.md nor mcp.json."),
    CodeInfo("SKL002", _E, "SKILL.md is missing from the skill folder.", official="V014"),
    CodeInfo("SKL003", _E, "SKILL.md exists under another letter case; the runtime reads only the exact name.", official="V014"),
    CodeInfo("SKL004", _E, "SKILL.md is larger than 16000 bytes of UTF-8.", official="V020"),
    CodeInfo("SKL005", _E, "A text file (SKILL.md, .js, .json, .wxml, .wxss) is not valid UTF-8."),
    CodeInfo("SKL006", _E, "mcp.json is missing from the skill folder."),
    CodeInfo("SKL007", _E, "index.js is missing from the skill folder."),
    CodeInfo("SKL008", _E, "A symbolic link points outside the skill folder; it is ignored."),
    CodeInfo("SKL009", _E, "A file could not be read."),
    CodeInfo("SKL010", _W, "SKILL.md is empty."),
    CodeInfo("SKL011", _I, "JavaScript files no index.js reaches (tests, tools, drafts) are not skill code; they are listed once and only compiled (JS007), as WeChat's upload compiles every file."),
    CodeInfo("SKL012", _I, "A cloudfunctions/ folder holds Node code deployed to WeChat's cloud on its own: its JavaScript is neither compiled nor checked as skill code."),
    CodeInfo("SKL013", _W, "SKILL.md's front matter (the '---' block) is not a YAML mapping; agents that read name and description from it get none."),
    CodeInfo("SKL014", _W, "SKILL.md's front matter names the skill other than its served name, or its description is not text: agent hosts (MCP Skills, skills/list) are not offered the skill."),
    CodeInfo("PRJ001", _E, "app.json of a mini-program project is invalid or lists no agent.skills."),
    CodeInfo("PRJ002", _E, "An agent.skills[] entry is malformed or its path is not a folder."),
    CodeInfo("PRJ003", _E, "An agent.skills[] entry has no non-empty description; the agent picks skills by it.", official="V016"),
    CodeInfo("PRJ004", _E, "The agent instruction file (app.json agent.instruction) is larger than 10000 bytes of UTF-8, or missing.", official="V020"),
    CodeInfo("PRJ005", _E, "app.json lists more than 30 agent.skills.", official="V020"),
    CodeInfo("PRJ006", _E, "The page metadata file (app.json agent.pageMetadata) is larger than 8000 bytes of UTF-8, or missing.", official="V020"),
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
    CodeInfo("MCP010", _W, "_meta.ui.componentPath names no components[] entry with exactly that path; the card is shown as a static card without relatedPage (its folder is still checked, V012).", official="V015"),
    CodeInfo("MCP011", _E, "A component folder lacks one of index.js, index.json, index.wxml, index.wxss.", official="V012"),
    CodeInfo("MCP012", _E, "_meta.ui.pagePath must start with '/' and carry no query string.", official="V017"),
    CodeInfo("MCP013", _E, "Two components[] entries have the same path."),
    CodeInfo("MCP014", _E, "components[].relatedPage must start with '/'.", official="V015"),
    CodeInfo("MCP015", _E, "components[].expirable must be a boolean."),
    CodeInfo("MCP016", _E, 'components[].permissions["scope.dynamic"].desc must be a string.'),
    CodeInfo("MCP017", _W, "A component folder is referenced by no API and no components[] entry."),
    CodeInfo("MCP018", _E, "mcp.json is longer than 24000 characters as compact JSON without outputSchema.", official="V013"),
    CodeInfo("MCP019", _W, "mcp.json uses 90 % or more of its 24000-character budget.", official="V013"),
    CodeInfo("MCP020", _E, 'A components[] entry has no "path".'),
    CodeInfo("MCP021", _E, "A componentPath must have the form components/<name>/index.", official="V012"),
    CodeInfo("MCP022", _E, "A components[] path points at a folder that does not exist.", official="V012"),
    CodeInfo("MCP023", _E, "An inputSchema or outputSchema nests more than 64 levels of arrays and objects; it is not checked."),
    CodeInfo("MCP024", _E, "More APIs (500) or components (800) than a 24000-character mcp.json can hold; the rest are not checked."),
    CodeInfo("MCP025", _W, "A schema pattern (or patternProperties key) RE2 cannot run (backreference, lookaround): calls of the API are refused (RUN040)."),
    CodeInfo("MCP030", _W, 'An inputSchema string has "format": "image" or "file", a local upload path WeChat fills in; skillc has no uploaded file, so a call that passes it answers unsupported_format (RUN081).'),
    CodeInfo("MCP031", _W, "An API name is not a tool name model APIs accept (^[a-zA-Z0-9_-]{1,64}$: dots, spaces, CJK, over 64 characters); skillc serve serves it under a stable safe name."),
    # -- skill scripts, scanned statically (frontend/scripts.py) ------------------------
    CodeInfo("JS001", _E, "An API declared in mcp.json is never registered by index.js.", official="V007"),
    CodeInfo("JS002", _E, "index.js registers an API that mcp.json does not declare.", official="V007"),
    CodeInfo("JS003", _E, "A require() path does not resolve to a file inside the skill.", official="V001/V008"),
    CodeInfo("JS004", _E, "An API handler is not declared async; WeChat's validator fails the build (the runtime awaits a promise).", official="V002"),
    CodeInfo("JS005", _W, "An API is registered more than once; the last registration wins."),
    CodeInfo("JS006", _E, "index.js registers more APIs than mcp.json can declare (500); the rest are not checked."),
    CodeInfo("JS007", _E, "A JavaScript file of the skill (any but cloudfunctions/) does not compile (QuickJS, compile only); WeChat's upload refuses it, and whatever requires it fails to load."),
    CodeInfo("JS008", _W, "Skill code uses a wx API that skillc does not provide, or that WeChat does not offer in this context (APIs or cards); the call fails with an error that names it."),
    CodeInfo("JS009", _E, "Skill code calls getApp(); skills run in an independent subpackage, without the app instance.", official="V001"),
    CodeInfo("JS010", _W, "Skill code uses a wx name that skillc neither provides nor lists among the wx APIs it lacks; a call fails with an error saying skillc does not provide it."),
    CodeInfo("JS011", _E, "A static card's JavaScript (no permissions[\"scope.dynamic\"]) calls wx.request, wx.login, wx.checkSession, setTimeout or setInterval, or any card's JavaScript uses wx.cloud.", official="V021"),
    CodeInfo("JS012", _W, "index.js registers APIs under computed names (a loop, a table): the declared APIs no literal registerAPI names could not be verified statically (V007); the loader verifies them when index.js runs (RUN002)."),
    CodeInfo("JS020", _W, "A card's Component({...}) uses an option cards do not have (behaviors, relations, externalClasses, pageLifetimes); it is ignored."),
    # -- consistency between manifest, API code, cards and pages (frontend/consistency.py) --
    CodeInfo("CON001", _E, "An API returns a structuredContent key (top level of an object literal) that its outputSchema.properties lacks.", official="V009"),
    CodeInfo("CON002", _E, "A card reads result.structuredContent.X, but its API neither returns nor declares X.", official="V010"),
    CodeInfo("CON003", _W, "A {{ }} binding root of a card is never set in data, properties or setData (wx:for item/index names exempt).", official="V011"),
    CodeInfo("CON004", _W, "A card's setData key is never bound in its WXML.", official="V011"),
    CodeInfo("CON005", _E, "_meta.ui.pagePath names a page that app.json lists neither in pages nor in a subpackage.", official="V017"),
    CodeInfo("CON006", _W, "An API declares _meta.ui.pagePath but its code returns no handoff, so the page is never opened.", official="V017"),
    CodeInfo("CON007", _W, "A handoff query key is never read in the page's onLoad(query).", official="V018"),
    CodeInfo("CON008", _W, "components[].relatedPage names a page that app.json lists neither in pages nor in a subpackage.", official="V015"),
    # -- WeChat's cli agent artefacts (wxa/destructive.py) [WXA###] -----------------------
    CodeInfo("WXA001", _I, "An API whose name or description uses a destructive word (V019) has no decision in cli-agent-run/destructive-manifest.json (missing or destructive: null); `skillc agent execute` refuses it until it is decided; `check --format wxa` reports it as V019's error."),
    CodeInfo("WXA002", _W, "cli-agent-run/destructive-manifest.json is not valid JSON of the manifest's shape; its decisions are ignored and `skillc agent execute` refuses every API a destructive word hits."),
    CodeInfo("RISK001", _I, "The API's risk level was inferred from its name, description and code; pin it with _meta.x_skillc.risk."),
    # -- component folders (frontend/package.py) ----------------------------------------
    CodeInfo("CMP001", _E, 'A component\'s index.json must be an object with "component": true.'),
    # -- {{ }} expressions (frontend/expr/) [EXPR###] ----------------------------------
    CodeInfo("EXPR001", _E, "A {{ }} expression has a syntax error; the unexpected token is shown.", blocks_render=True),
    CodeInfo("EXPR002", _E, "A '{{' is never closed by '}}'.", blocks_render=True),
    CodeInfo("EXPR003", _E, "A string literal in an expression is not closed on its line.", blocks_render=True),
    CodeInfo("EXPR004", _E, "Exponent (1.5e3) or hex/octal/binary (0x10) number literals; WeChat's compiler rejects them."),
    CodeInfo("EXPR005", _E, "Unary '+' (as in {{+a}}); WeChat's compiler rejects it."),
    CodeInfo("EXPR006", _W, "A function call in an expression; WeChat compiles it and renders it as empty (undefined). Compute the value in setData."),
    CodeInfo("EXPR007", _E, "A JavaScript operator or keyword WXML does not have (typeof, in, new, =, ??, ?., **, >>>, `...`)."),
    CodeInfo("EXPR008", _E, "An expression is nested too deeply (more than 64 levels, or a tree deeper than 200)."),
    CodeInfo("EXPR009", _E, "Member access or a call on a literal or a parenthesized expression ('ab'.length, (a).b)."),
    CodeInfo("EXPR010", _E, "A non-ASCII character where a name is expected; WeChat's compiler accepts only ASCII names."),
    CodeInfo("EXPR011", _E, "Spread '...' in an array literal; WeChat's compiler rejects it (object spread is fine)."),
    CodeInfo("EXPR012", _W, "A number with a leading zero; WeChat reads 010 as octal 8."),
    CodeInfo("EXPR013", _W, "A backslash escape in a string literal; WeChat does not decode escapes like JavaScript (an error for \\' \\\" \\n in an attribute value, which wcc refuses)."),
    CodeInfo("EXPR014", _E, "'}}' inside an object literal; WeChat's compiler ends the mustache there and refuses the file. Write '} }'.", blocks_render=True),
    CodeInfo("EXPR015", _W, "An empty {{ }}; it renders as empty text."),
    CodeInfo("EXPR016", _W, "A number literal longer than 300 characters; WeChat reads it as a double (Infinity past 1.8e308)."),
    # -- WXML syntax (frontend/wxml/) [WXML###] ------------------------------------------
    CodeInfo("WXML001", _E, "Unexpected character inside a tag: expected an attribute name, '>' or '/>'.", blocks_render=True),
    CodeInfo("WXML002", _E, "A close tag does not match the innermost open element; the open tag's position is shown.", blocks_render=True),
    CodeInfo("WXML003", _E, "A close tag has no matching open tag; it is ignored.", blocks_render=True),
    CodeInfo("WXML004", _E, "An element is never closed before the end of the file.", blocks_render=True),
    CodeInfo("WXML005", _E, "An attribute value's opening quote is never closed.", blocks_render=True),
    CodeInfo("WXML006", _E, "A comment '<!--' is never closed with '-->'; the rest of the file is a comment.", blocks_render=True),
    CodeInfo("WXML007", _E, "'{{' is not closed by '}}' (or a quoted string inside it is not closed).", blocks_render=True),
    CodeInfo("WXML008", _E, "'<' in text does not start a tag; write &lt; for a literal '<'.", blocks_render=True),
    CodeInfo("WXML009", _E, "An attribute value is not quoted; wcc rejects unquoted values.", blocks_render=True),
    CodeInfo("WXML010", _E, "A tag is not closed with '>' (or '/>') before the next tag or the end of the file.", blocks_render=True),
    CodeInfo("WXML011", _E, "A <wxs> element is never closed with </wxs>.", blocks_render=True),
    CodeInfo("WXML012", _E, "Elements are nested deeper than the parser accepts; deeper elements are dropped.", blocks_render=True),
    CodeInfo("WXML013", _E, "Too many syntax errors; the rest of the file is not checked.", blocks_render=True),
    # -- template IR and card rules (ir/lower.py) [TPL###] ---------------------------------
    CodeInfo("TPL001", _E, "A tag that is not a card component (custom components, form controls such as input, textarea, checkbox, radio, picker, and other built-ins); <textarea> slips the official pattern but cards do not render it.", official="V003"),
    CodeInfo("TPL002", _I, "map or canvas: allowed in cards by WeChat; skillc shows a static preview (a map's centre and markers, a canvas's 2d drawing)."),
    CodeInfo("TPL003", _E, "<wxs> does not run in cards.", official="V003"),
    CodeInfo("TPL004", _E, "<slot> is not supported in cards.", official="V003"),
    CodeInfo("TPL005", _E, "A scroll-view in a card needs scroll-x.", official="V003"),
    CodeInfo("TPL006", _E, "A scroll-view with scroll-y=\"true\" (or {{true}}); cards scroll horizontally only.", official="V003"),
    CodeInfo("TPL007", _E, "button open-type is not available in cards.", official="V003"),
    CodeInfo("TPL008", _E, "An event cards do not deliver (input, change, longpress, touch and the rest): only tap, and load/error on <image>, with bind or catch.", official="V003"),
    CodeInfo("TPL010", _W, "wx:for without wx:key; items are matched by position."),
    CodeInfo("TPL011", _E, "wx:elif or wx:else does not follow an element with wx:if or wx:elif."),
    CodeInfo("TPL012", _W, "An unknown wx: directive, or a malformed wx:key, wx:for-item or wx:for-index; wcc compiles and ignores it."),
    CodeInfo("TPL013", _W, "An <import> or <include> src that does not name a .wxml file inside the skill; wcc compiles it and renders nothing for it."),
    CodeInfo("TPL014", _E, "<import> or <include> files form a cycle."),
    CodeInfo("TPL015", _W, "<template is> names no template defined in the file or imported into it; wcc renders nothing there."),
    CodeInfo("TPL016", _W, "A malformed <template>: no name or is, or a duplicate name (the last wins, as in wcc); an error for data wcc refuses (not one {{ }})."),
    CodeInfo("TPL017", _W, "wx:if or wx:elif holds a plain string (no {{ }}), so it is always true (or false if empty)."),
    CodeInfo("TPL018", _E, "Templates and includes nest too deeply to expand."),
    CodeInfo("TPL019", _W, "A scroll-view with a bare or data-bound scroll-y: the official rule V003 lets it pass, but cards scroll horizontally only."),
    CodeInfo("TPL020", _E, "<import> or <include> in a card's index.wxml: the official validator (V003) fails the build; skillc still expands it.", official="V003"),
    CodeInfo("TPL021", _E, "An <image> src in a format cards do not show (.webp, .gif, .svg, .bmp, .avif).", official="V003"),
    CodeInfo("TPL030", _W, "A <canvas> without type=\"2d\": cards have only the 2d canvas, so it stays blank."),
    # -- WXSS syntax and card style rules (frontend/wxss/) [WXSS###] ---------------------
    CodeInfo("WXSS001", _E, "WXSS syntax error: a malformed rule or declaration, or a nested rule; it is skipped."),
    CodeInfo("WXSS002", _E, "A '{' (or '(' / '[') is never closed: the file ends inside the block."),
    CodeInfo("WXSS003", _E, "A quoted string or url() is not closed; the declaration is skipped."),
    CodeInfo("WXSS004", _E, "A stray '}' (or ')' / ']') closes nothing; the next rule's selector is broken."),
    CodeInfo("WXSS005", _E, "A selector cannot be parsed (empty, or an unexpected token); the selector is skipped."),
    CodeInfo("WXSS006", _E, "A selector form WeChat's validator refuses ('>', '+', '~', :pseudo, ::pseudo, [attr=...]); it is dropped.", official="V006"),
    CodeInfo("WXSS007", _E, "A property WeChat's validator refuses (z-index, float, overflow, gap, cursor, text-decoration, transition, animation, ...); the renderer draws gap, overflow and -webkit-box line clamps as WeChat does, the end state of a transition or animation, and drops the rest.", official="V005"),
    CodeInfo("WXSS008", _E, "A value WeChat's validator refuses (position: fixed/sticky, display: grid/table/inline-flex/-webkit-box); it is dropped, except display: -webkit-box, drawn as a line clamp with -webkit-line-clamp and -webkit-box-orient: vertical.", official="V005"),
    CodeInfo("WXSS009", _E, "CSS variables (--name declarations, var()) are not supported in cards; the declaration is dropped.", official="V005"),
    CodeInfo("WXSS010", _W, "A length unit cards do not support (vh, pt, cm, ...); the declaration is dropped."),
    CodeInfo("WXSS011", _E, "@keyframes: cards do not animate; the rule is ignored.", official="V005"),
    CodeInfo("WXSS012", _W, "A media query cards cannot evaluate (unknown feature, type or syntax); it never matches."),
    CodeInfo("WXSS013", _E, "An @import names a file that does not exist in the skill."),
    CodeInfo("WXSS014", _E, "An @import cycle: a file imports itself through other files; the cycle is cut."),
    CodeInfo("WXSS015", _E, "An @import path is absolute, a URL, not .wxss, or escapes the skill folder."),
    CodeInfo("WXSS016", _E, "Blocks ({ }, ( ), [ ], functions, @media) nest more than 32 levels deep; deeper blocks are dropped."),
    CodeInfo("WXSS017", _E, "A number in a value is out of range (more than 1e15 in size, as 1e999rpx); the declaration is ignored."),
    CodeInfo("WXSS018", _W, "A selector cards cannot match that WeChat's validator lets through ('*', [attr] without a value); it is dropped."),
    CodeInfo("WXSS019", _W, "An unknown property, or one cards do not support that no official rule names (clear, grid-*, outline, transition of opacity/transform, ...); it is dropped (a transition draws its end state)."),
    CodeInfo("WXSS020", _W, "A value cards do not render that no official rule names (a dashed or dotted border, filter other than blur(), display: contents, ...); it is dropped."),
    CodeInfo("WXSS021", _W, "An at-rule cards do not support (@supports, @page, ...) or one in the wrong place; it is ignored."),
    CodeInfo("WXSS022", _W, "A value that is not valid CSS for its property (width: 10qq, color: #ggg, five margins, font-size: 12); it is dropped, and the previous declaration of the property applies."),
    CodeInfo("WXSS030", _I, "An @font-face rule: WeChat's cards load the font, skillc's renderers do not, so its text is drawn in the next family of the font-family list."),
    # -- style resolution (ir/styles.py) [STY###] ------------------------------------------
    CodeInfo("STY001", _W, "A selector names a tag cards never contain (page, input, ...); the rule can never match."),
    # -- rendering, diff and backends (ir/, backends/) [RND###] -----------------------------
    CodeInfo("RND001", _W, "Two items of a wx:for have the same wx:key; the later ones are keyed by index."),
    CodeInfo("RND002", _W, "A <template is> names a template that does not exist at render time; nothing is rendered there, as in WeChat."),
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
    CodeInfo("RUN060", _E, "An API at risk level L1 or above (it needs a signed-in user) was called by an anonymous caller; give a user DID (--user)."),
    CodeInfo("RUN061", _W, "wx.checkSession refused a capability token that is malformed, carries a signature that does not match, or is bound to another user, agent, merchant or skill."),
    CodeInfo("RUN062", _E, "The identity key that signs wx.login tokens cannot be used: unreadable, not 32 hex-encoded bytes, or readable by other users."),
    CodeInfo("RUN080", _W, "An API returned a key an atomic API result does not have (x_anp, ...): neither the model nor the card receives it; card-only data goes in _meta."),
    CodeInfo("RUN081", _E, 'An API was called with an argument whose inputSchema says "format": "image" or "file" (a local upload path WeChat fills in); skillc has no uploaded file, so the call answers unsupported_format.'),
    CodeInfo("RUN100", _W, "A wx stand-in (requestPayment, getPhoneNumber, chooseAddress, getLocation, getFuzzyLocation) was refused: the API call was not approved at the level it needs (L3 to pay, L4 for the user's profile); it failed as WeChat does when the user says no."),
    CodeInfo("RUN101", _W, "A profile stand-in (getPhoneNumber, chooseAddress, getLocation, getFuzzyLocation) failed: there is no user profile (--profile FILE), or it lacks the phone, address or location asked for."),
    CodeInfo("RUN102", _E, "The user profile file (--profile) is not valid: an unknown key, a missing one, or a value of the wrong type or out of range."),
    CodeInfo("RUN103", _W, "wx.requestPayment did not succeed: the payment provider answered fail or cancel, or no provider was reachable."),
    CodeInfo("RUN104", _W, "A flow step's payment outcome did not apply: no wx.requestPayment ran during the step, or the payment provider cannot be scripted."),
    CodeInfo("RUN105", _E, "The storage file (--storage) is not valid: not JSON, not an object of key -> value, or a key or the whole over the storage limits."),
    CodeInfo("HND001", _E, "An API returned a handoff that is not {query, payload?, card?} (query a string or an object of scalars); it is dropped."),
    CodeInfo("HND002", _W, "An API returned a handoff but declares no _meta.ui.pagePath; there is no page to open."),
    # -- mini-program pages in the debug console (runtime/pages/) [PAGE###] --
    CodeInfo("PAGE001", _E, "The page has no sources to render: the skill sits in no mini-program project (app.json), or the project has no <route>.wxml."),
    CodeInfo("PAGE002", _E, "The page's .js failed to load (it does not compile, throws at its top level, or never calls Page({...})); the page renders its WXML with the data it has."),
    CodeInfo("PAGE003", _E, "A page hook the console runs (onLoad with the handoff query, onShow, onReady) threw; the page renders the data set before the throw."),
    CodeInfo("PAGE004", _E, "A page method called for a tap threw; the page keeps the data set before the throw."),
    CodeInfo("PAGE005", _W, "A tap's handler names a method the page does not define; nothing runs."),
    CodeInfo("PAGE006", _W, "The page defines a lifecycle hook the console never calls (onHide, onUnload, onRouteDone, onSaveExitState): it opens one page and never leaves it."),
    CodeInfo("PAGE007", _W, "The page defines onPullDownRefresh or onReachBottom: the console has no pull-down or scroll-to-the-end gesture, so it never runs."),
    CodeInfo("PAGE008", _W, "The page defines a page event handler the console never fires (onPageScroll, onResize, onTabItemTap, onShareAppMessage, onShareTimeline, onAddToFavorites)."),
    CodeInfo("PAGE009", _W, "The page calls a navigation API (wx.navigateTo, redirectTo, navigateBack, switchTab, reLaunch): the console shows one page, so the call fails."),
    CodeInfo("PAGE010", _W, "The page calls a page-frame API (navigation bar, pull-down refresh, tab bar, page scroll): the console draws no frame around the page, so the call fails."),
    CodeInfo("PAGE011", _W, "usingComponents in the page's .json names a component whose files are not in the project."),
    CodeInfo("PAGE012", _W, "The page's WXML uses a custom component (usingComponents): the console does not run custom components; the tag is drawn as a plain box with its children."),
    CodeInfo("PAGE013", _I, "The page's .json sets window options (navigation bar, background, pull-down refresh...): the console draws no window frame and applies none of them."),
    CodeInfo("PAGE014", _W, "The page's .json is not valid JSON or not an object; it is ignored."),
    CodeInfo("PAGE015", _W, "The page calls getApp() or getCurrentPages(): no App() runs in the console; getApp() gives {globalData: {}} and getCurrentPages() this page alone."),
    CodeInfo("PAGE016", _E, "The page's JavaScript ran past its deadline, out of memory or out of stack and was stopped; the page keeps its last render and taps do nothing."),
    CodeInfo("PAGE017", _W, "The page's WXML uses a tag the card renderer does not know; the console draws it as a plain box with its children."),
    # -- component VM and orchestrator (runtime/) [CMPVM###] --
    CodeInfo("CMPVM001", _E, "A component's index.js threw, failed to compile or never called Component({...}); the card falls back."),
    CodeInfo("CMPVM002", _E, "A component lifetime (created or attached) threw; the card falls back to a generic card."),
    CodeInfo("CMPVM003", _E, "A component's Input or Result notification handler threw; the card falls back to a generic card."),
    CodeInfo("CMPVM004", _E, "An event handler, setData callback or Expire/Overflow handler threw; the card keeps its last render."),
    CodeInfo("CMPVM005", _W, "An event names a method the component does not define; nothing runs."),
    CodeInfo("CMPVM006", _E, "sendFollowUpMessage was refused: it needs a text block first, and api/call names declared in mcp.json."),
    CodeInfo("CMPVM007", _W, "setData was given a key that is not a data path, or an undefined value; that key is ignored."),
    CodeInfo("CMPVM008", _E, "The bound component cannot be compiled (missing folder or index.wxml, or a template that does not parse); the card falls back."),
    CodeInfo("CMPVM009", _E, "Rendering the card from its data failed; a new card falls back, a mounted one keeps its last render."),
    CodeInfo("CMPVM010", _W, "The rendered content is taller than the card's maxHeight; an Overflow notification was sent."),
    CodeInfo("CMPVM011", _E, "The card's JavaScript exceeded its deadline, memory or stack; the card is closed (or falls back)."),
    CodeInfo("CMPVM012", _W, "An event or expiry named a card or node that does not exist, or a card that has expired."),
    CodeInfo("CMPVM013", _W, "A card action had bad arguments (openDetailPage without url, setRelatedPage, reapplyApiCall, updateModelContext, previewMedia, makePhoneCall); it was refused."),
    CodeInfo("CMPVM014", _I, "A card was rebuilt in a fresh context from its persisted data (after eviction or a restart)."),
    CodeInfo("CMPVM015", _W, "setData named an array index beyond card_max_data_index; that key is ignored and nothing is allocated."),
    CodeInfo("CMPVM016", _E, "A card's data is larger than card_max_data_bytes as JSON; a new card falls back, a mounted one keeps its last data."),
    CodeInfo("CMPVM017", _W, "A card event produced more actions than card_max_actions; the extra actions were dropped."),
    CodeInfo("CMPVM030", _W, "The card's SelectorQuery or 2d canvas used what skillc's static preview lacks (a selector other than #id, a canvas op outside the subset, a MapContext); it was left out."),
    CodeInfo("CMPVM040", _W, "A dynamic card set a timer while it already had card_max_timers live timers; that timer was not started."),
    CodeInfo("CMPVM041", _W, "A dynamic card's setInterval, or a setTimeout set inside a timer callback, asked for less than card_timer_min_interval_ms; it was raised to it."),
    CodeInfo("CMPVM050", _E, "A card was changed by another instance sharing the state store each time an event was applied to it (CARD_WRITE_ATTEMPTS times); the event was not applied."),
    CodeInfo("CMPVM051", _I, "A live card was brought up to data another instance wrote: its context, timers included, goes on with that data."),
    # -- MCP server (server/) [SRV###] --
    CodeInfo("SRV001", _E, "A path given to `skillc serve` is not served: it is not a skill, or its mcp.json is unusable."),
    CodeInfo("SRV002", _E, "Two served skills have the same folder name; only the first is served."),
    CodeInfo("SRV003", _I, "Two served skills declare an API of the same name; the tool is named <skill>__<api>."),
    CodeInfo("SRV004", _E, "A served skill's index.js cannot load (it throws or does not compile); its tools are not advertised."),
    CodeInfo("SRV010", _E, "The JWKS file given to `skillc serve --auth-jwks` is unusable: not JSON, not a key set, or a key that cannot verify (symmetric keys are refused)."),
    CodeInfo("SRV020", _W, "A request's _meta[\"skillc/session\"] is not a session the server minted for this caller (made up, altered, another caller's, or another fleet's): the request runs in a fresh session of its own; logged once per connection."),
    CodeInfo("SRV030", _E, "A consent token (the in-card consent control's, or an elicitation requestState) is not this server's: malformed, or its signature does not match; nothing ran."),
    CodeInfo("SRV031", _E, "A consent token has expired (it is good for CONSENT_TTL_S after the user was asked); nothing ran. Ask again."),
    CodeInfo("SRV032", _E, "A consent token was already used: each consent approves or declines one call once; nothing ran."),
    CodeInfo("SRV033", _E, "A consent token was issued to another caller (another user DID); nothing ran."),
    CodeInfo("SRV034", _E, "A consent token was given for another call (another tool, other arguments, or the other way of asking); nothing ran."),
    CodeInfo("SRV035", _I, "The user declined an L3/L4 call in the card; nothing ran."),
    CodeInfo("SRV050", _E, "The state store did not answer (down, restarting, refusing new connections) or dropped the connection mid-statement: the call is an isError result with this code and a request-log line; a read was tried once more first. Try again; /readyz says when the store is back."),
    CodeInfo("SRV051", _E, "Every pooled state-store connection of this worker was in use for --state-pool-timeout: the call answers at once with this code instead of queueing. Raise --state-pool-max (within max_connections) or add capacity."),
    CodeInfo("SRV052", _W, "Events, the audit record or the card expiries of a call could not be written to the state store after the call ran: the call still answers with its outcome; lost events are counted and logged, an audit record is logged whole, cards left live are logged."),
    CodeInfo("SRV053", _E, "`skillc serve`: --workers x --state-pool-max cannot fit the PostgreSQL server's max_connections (less its reserved connections): refused at start. As a warning: it fits alone but not beside the connections already open."),
    CodeInfo("SRV090", _W, "The wx.login signing key is kept in the PostgreSQL store's rows: give it with $SKILLC_IDENTITY_KEY or $SKILLC_IDENTITY_KEY_FILE instead (docs/deploy.md, Secrets)."),
)
# fmt: on

CATALOGUE: Mapping[str, CodeInfo] = {info.code: info for info in _CATALOGUE}


def explain(code: str) -> CodeInfo:
    try:
        return CATALOGUE[code]
    except KeyError:
        raise KeyError(f"diagnostic code {code!r} is not in the catalogue") from None


def render_blockers(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The findings that leave no tree to draw; every other finding is reported beside the card."""
    return [d for d in diags if d.severity is Severity.ERROR and CATALOGUE.get(d.code, _NO_INFO).blocks_render]


_NO_INFO = CodeInfo("", Severity.INFO, "")


def catalogue_markdown() -> str:
    """The body of docs/diagnostics.md, generated so the two never drift apart."""
    lines = [
        "# Diagnostic codes",
        "",
        "Every diagnostic skillc prints carries one of these codes. The code is stable: tools may",
        "match on it. The severity is the default; `skillc check` exits 1 when any error is reported.",
        "This file is generated by `skillc codes --markdown`; a test keeps it in sync with the code.",
        "",
        "The official column names the rule of WeChat's validator (`validate.mjs`, V001-V021) a",
        "code corresponds to; whatever that rule fails a build for is an error here too. Where",
        "skillc and the official rule disagree on purpose, the notes below the table say why.",
        "",
        "Findings judge a card; they do not stop it being drawn. `render`, `build`, `serve` and `debug`",
        "draw every card they can build a tree for and report its findings beside it. Only these",
        "errors leave no tree to draw, so the card is refused (a generic card stands in when served): "
        + ", ".join(f"`{i.code}`" for i in _CATALOGUE if i.blocks_render)
        + ".",
        "",
        "| code | severity | official | meaning |",
        "|---|---|---|---|",
    ]
    for info in _CATALOGUE:
        summary = info.summary.replace("|", r"\|")
        official = info.official or "-"
        lines.append(f"| `{info.code}` | {info.severity.value} | {official} | {summary} |")
    lines += ["", *_OFFICIAL_NOTES]
    return "\n".join(lines) + "\n"


_OFFICIAL_NOTES = (
    "## Where skillc departs from the official rule",
    "",
    "- **V002** looks for `async` by the API's name, not at the function `registerAPI` receives:",
    "  a sync handler passes when an async function of that name exists elsewhere, and a handler",
    "  registered under another name is judged by the wrong function. skillc (`JS004`) follows the",
    "  value handed to `registerAPI` (an inline function, a `require`d module's `module.exports`,",
    "  a local declaration) and judges that one.",
    "- **V009** collects every `key:` inside a `structuredContent: {...}` literal, nested objects",
    "  included, so `{order: {id: 1}}` reports `id` as missing from `outputSchema.properties`.",
    "  Only top-level keys name properties; skillc (`CON001`) checks those alone.",
    "- **V011** is reported as warnings (`CON003`, `CON004`): a card's data also arrives through",
    "  computed `setData({[key]: v})` keys and properties a static scan cannot see.",
    "- **V018**'s level is not confirmed in v0.2.1; skillc warns (`CON007`), since a page that",
    "  ignores a key still opens. An object `query` (v0.2.1) is accepted as well as a string (O6b).",
    "- **V019** (O6b) writes a destructive manifest for APIs whose names or descriptions use words",
    "  like delete, cancel, unbind, 注销, and fails on each undecided entry. skillc writes the same",
    "  manifest with `check --format wxa` (keeping its decisions), where an undecided entry is V019's",
    "  error; plain `check` informs (`WXA001`), since `skillc agent execute` refuses the API and the",
    "  same words make its inferred risk L3 (`RISK001`): consent before it runs when served.",
    "- **V015**'s page check is O6b's (v0.2.1 does not require relatedPage, and no validate.mjs",
    "  of O6b is confirmed): skillc warns (`CON008`) when relatedPage is not a page of app.json.",
    "  For the same reason a componentPath without a `components[]` entry is a warning (`MCP010`):",
    "  v0.2.1's V012 checks the path and the component's four files (still errors: `MCP011`,",
    "  `MCP022`), not an entry, and WeChat shows such a card as a static one.",
    "- **V021** is a text match in the validator; skillc (`JS011`) matches calls outside comments",
    "  and strings, in the `.js` files of the component's folder. A static card that still calls",
    "  a timer fails at run time with an error naming the call and `scope.dynamic`.",
    "- **V001** bounds `require` by the subpackage root; skillc holds WXSS `@import` to the same",
    "  boundary (`WXSS015`), so a card may import `../_shared/` sheets as its code requires them.",
    "- **V016**, **V020** (30 skills, the agent instruction file) and the page checks of V015,",
    "  V017 and V018 need the mini-program project: a skill checked on its own skips them.",
)


# --------------------------------------------------------------------------------------
# Collection
# --------------------------------------------------------------------------------------


class DiagnosticSink:
    """Collects diagnostics for one unit of work. Stages get one passed in."""

    def __init__(self) -> None:
        self._items: list[Diagnostic] = []

    def emit(self, code: str, message: str, **where: Unpack[Where]) -> Diagnostic:
        file = where.get("file")
        span = where.get("span")
        hint = where.get("hint")
        severity = where.get("severity")
        # Values of exactly the field types pass validation unchanged: build those unvalidated
        # (lowering and the parsers emit thousands); anything else is validated as before.
        if (
            type(message) is str
            and (file is None or type(file) is str)
            and (span is None or type(span) is Span)
            and (hint is None or type(hint) is str)
            and (severity is None or type(severity) is Severity)
            and type(code) is str
        ):
            diag = Diagnostic.trusted(code, severity or explain(code).severity, message, file, span, hint)
        else:
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
    """``file:line:col`` under ``prefix``; a diagnostic about no one file is located at the skill
    (``prefix``). Without either there is nothing to name, and the location is empty."""
    if diag.file is None:
        where = prefix.rstrip("/") if prefix else ""
    else:
        where = _join(prefix, diag.file)
    if where and diag.span is not None:
        where += f":{diag.span.line}:{diag.span.column}"
    return where


# SGR codes, not a terminal library: diagnostics imports no phase and no CLI toolkit.
_RESET, _BOLD = "\x1b[0m", "\x1b[1m"
_SEVERITY_COLOUR = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}
_HINT_COLOUR = "\x1b[1;36m"


def _paint(text: str, sgr: str, on: bool) -> str:
    return f"{sgr}{text}{_RESET}" if on and text else text


def render_text(
    diags: Iterable[Diagnostic],
    sources: SourceLookup | Mapping[str, str] | None = None,
    *,
    prefix: str = "",
    color: bool = False,
) -> str:
    """Compiler-style text: ``file:line:col: severity[CODE]: message``, the line, a caret.

    ``color`` adds ANSI colours (severity, location, caret, hint); the caller decides when
    (a terminal, ``NO_COLOR``, ``--color``).
    """
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
        sgr = _SEVERITY_COLOUR[diag.severity]
        where = format_location(diag, prefix)
        head = _paint(f"{where}:", _BOLD, color) + " " if where else ""
        label = _paint(f"{diag.severity.value}[{diag.code}]", sgr, color)
        out.append(f"{head}{label}: {diag.message}")
        if diag.file is not None and diag.span is not None:
            if diag.file not in split:
                text = lookup(diag.file)
                split[diag.file] = text.splitlines() if text is not None else None
            lines = split[diag.file]
            if lines is not None:
                excerpt = _excerpt(lines, diag.span)
                if excerpt and color:
                    gutter, _, carets = excerpt[1].partition("| ")
                    excerpt[1] = f"{gutter}| {_paint(carets, sgr, True)}"
                out.extend(excerpt)
        if diag.hint:
            out.append(f"  = {_paint('hint:', _HINT_COLOUR, color)} {diag.hint}")
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


# GitHub Actions workflow commands: https://docs.github.com/actions/reference/workflow-commands
_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diags: Iterable[Diagnostic], prefix: str = "") -> str:
    """One ``::error file=...,line=...,col=...,endLine=...,endColumn=...,title=CODE::message`` line
    per diagnostic (``::warning`` / ``::notice`` for the others), for the annotations of a run."""
    out: list[str] = []
    for diag in sort_diagnostics(diags):
        props: list[tuple[str, str]] = []
        if diag.file is not None:
            props.append(("file", _join(prefix, diag.file)))
        elif prefix:
            props.append(("file", prefix.rstrip("/")))
        if diag.file is not None and diag.span is not None:
            span = diag.span
            # GitHub's endColumn is the last annotated column; a Span's end is exclusive.
            end_column = span.end_column - 1 if span.end_line > span.line else max(span.end_column - 1, span.column)
            props += [
                ("line", str(span.line)),
                ("col", str(span.column)),
                ("endLine", str(span.end_line)),
                ("endColumn", str(max(end_column, 1))),
            ]
        props.append(("title", diag.code))
        message = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
        head = ",".join(f"{k}={_github_property(v)}" for k, v in props)
        out.append(f"::{_GITHUB_COMMAND[diag.severity]} {head}::{_github_data(message)}")
    return "\n".join(out) + ("\n" if out else "")


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sarif_uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace("\\", "/"), safe="/")


def sarif_log(units: Iterable[tuple[str, Iterable[Diagnostic]]], *, tool_version: str) -> dict[str, object]:
    """A SARIF 2.1.0 log: one run of skillc, every catalogue code a rule (ruleIndex is the code's
    place in the catalogue), and one result per diagnostic of each (prefix, diagnostics) unit."""
    index = {info.code: i for i, info in enumerate(_CATALOGUE)}
    rules: list[dict[str, object]] = []
    for info in _CATALOGUE:
        rules.append(
            {
                "id": info.code,
                "shortDescription": {"text": info.summary},
                "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
            }
        )
    results: list[dict[str, object]] = []
    for prefix, diags in units:
        for diag in sort_diagnostics(diags):
            text = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
            result: dict[str, object] = {
                "ruleId": diag.code,
                "level": _SARIF_LEVEL[diag.severity],
                "message": {"text": text},
            }
            if diag.code in index:
                result["ruleIndex"] = index[diag.code]
            path = _join(prefix, diag.file) if diag.file is not None else prefix.rstrip("/")
            if path:
                physical: dict[str, object] = {"artifactLocation": {"uri": _sarif_uri(path)}}
                if diag.file is not None and diag.span is not None:
                    physical["region"] = {
                        "startLine": diag.span.line,
                        "startColumn": diag.span.column,
                        "endLine": diag.span.end_line,
                        "endColumn": diag.span.end_column,  # exclusive in SARIF too
                    }
                result["locations"] = [{"physicalLocation": physical}]
            results.append(result)
    driver: dict[str, object] = {"name": "skillc", "version": tool_version, "rules": rules}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        # Columns are counted in characters (code points), as Python strings index them.
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }


def render_sarif(units: Iterable[tuple[str, Iterable[Diagnostic]]], *, tool_version: str) -> str:
    """:func:`sarif_log` as indented JSON text."""
    log = sarif_log(units, tool_version=tool_version)
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"
