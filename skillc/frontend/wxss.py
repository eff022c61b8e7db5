"""WXSS frontend: text -> typed :class:`Stylesheet`, with the card style rules checked.

tinycss2 only tokenizes here; rules, declarations, selectors and media queries are read by
this module so every diagnostic carries an exact span (tinycss2's own rule parser reports
at the stop token and, in 1.5.1, with a broken message). Unsupported selectors and
properties are reported once, here, and marked so later phases drop them silently.
"""

from __future__ import annotations

import bisect
import difflib
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import tinycss2
import tinycss2.color3
from tinycss2.serializer import serialize_string_value, serialize_url

from skillc.diagnostics import DiagnosticSink, Span

Token = Any  # a tinycss2 node; the library ships no type information

# ----------------------------------------------------------------------------------------
# Typed values
# ----------------------------------------------------------------------------------------

LENGTH_UNITS = frozenset({"rpx", "px", "vw", "em", "rem", "%"})
# Length units cards cannot render; everything else (deg, s, ...) is a plain Dimension.
UNSUPPORTED_UNITS = frozenset({"vh", "vmin", "vmax", "pt", "pc", "cm", "mm", "in", "q", "ex", "ch", "svh", "dvh"})


def format_number(value: float) -> str:
    """Shortest stable spelling: 1.0 -> 1, .50 -> 0.5, -0 -> 0."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(frozen=True, slots=True)
class Length:
    """A number with one of LENGTH_UNITS (``%`` included)."""

    value: float
    unit: str
    kind: ClassVar[str] = "length"

    def css(self) -> str:
        return format_number(self.value) + self.unit


@dataclass(frozen=True, slots=True)
class Dimension:
    """A number with a non-length unit: deg, turn, s, ms, fr, ..."""

    value: float
    unit: str
    kind: ClassVar[str] = "dimension"

    def css(self) -> str:
        return format_number(self.value) + self.unit


@dataclass(frozen=True, slots=True)
class Number:
    value: float
    kind: ClassVar[str] = "number"

    def css(self) -> str:
        return format_number(self.value)


@dataclass(frozen=True, slots=True)
class Color:
    """A hex or named color, lower-cased; rgb()/rgba()/hsl() stay Functions."""

    text: str
    kind: ClassVar[str] = "color"

    def css(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Keyword:
    name: str
    kind: ClassVar[str] = "keyword"

    def css(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class String:
    value: str
    kind: ClassVar[str] = "string"

    def css(self) -> str:
        return '"' + str(serialize_string_value(self.value)) + '"'


@dataclass(frozen=True, slots=True)
class Url:
    value: str
    kind: ClassVar[str] = "url"

    def css(self) -> str:
        return "url(" + str(serialize_url(self.value)) + ")"


@dataclass(frozen=True, slots=True)
class Operator:
    """``,`` ``/`` and the calc() operators ``+ - *``."""

    op: str
    kind: ClassVar[str] = "operator"

    def css(self) -> str:
        return self.op


@dataclass(frozen=True, slots=True)
class Raw:
    """Anything else, kept as its CSS text."""

    text: str
    kind: ClassVar[str] = "raw"

    def css(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Function:
    """``name(args)``; a bare parenthesised group (inside calc) has the name ``""``."""

    name: str
    args: tuple[Part, ...]
    kind: ClassVar[str] = "function"

    def css(self) -> str:
        return self.name + "(" + value_css(self.args) + ")"


Part = Length | Dimension | Number | Color | Keyword | String | Url | Operator | Raw | Function


def serialize_value(parts: Sequence[Part], keep: Callable[[Length], bool] | None = None) -> list[str | Length]:
    """Normalised CSS text of a value, split around the lengths ``keep`` selects.

    Later phases substitute those lengths (rpx, vw, em ...) without re-parsing.
    Separators are normalised: ``a, b`` for commas, single spaces elsewhere.
    """
    out: list[str | Length] = []
    buf: list[str] = []

    def walk(items: Sequence[Part]) -> None:
        first = True
        for part in items:
            if isinstance(part, Operator) and part.op == ",":
                buf.append(",")
                first = False
                continue
            if not first:
                buf.append(" ")
            first = False
            if isinstance(part, Function):
                buf.append(part.name + "(")
                walk(part.args)
                buf.append(")")
            elif keep is not None and isinstance(part, Length) and keep(part):
                out.append("".join(buf))
                buf.clear()
                out.append(part)
            else:
                buf.append(part.css())

    walk(parts)
    out.append("".join(buf))
    return [s for s in out if s != ""]


def value_css(parts: Sequence[Part]) -> str:
    return "".join(str(s) for s in serialize_value(parts))


# ----------------------------------------------------------------------------------------
# The stylesheet tree
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compound:
    """One compound selector: ``view#id.a.b``. Tags are lower-cased; classes keep case."""

    tag: str | None = None
    id: str | None = None
    classes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Selector:
    """Compounds joined by descendant combinators, outermost first."""

    compounds: tuple[Compound, ...]
    specificity: tuple[int, int, int]
    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class Declaration:
    name: str
    value: tuple[Part, ...]
    important: bool
    span: Span
    supported: bool = True  # False: reported at parse time, dropped by later phases


@dataclass(frozen=True, slots=True)
class MediaFeature:
    """``(name: value)``; lengths keep their unit, keywords are in ``keyword``."""

    name: str
    keyword: str | None = None
    number: float | None = None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class MediaQuery:
    negated: bool
    media_type: str  # "all", "screen", "print", ...
    features: tuple[MediaFeature, ...]
    supported: bool = True  # an unsupported query never matches (CSS "not all")


@dataclass(frozen=True, slots=True)
class MediaQueryList:
    """Comma-separated queries: matches when any query does."""

    queries: tuple[MediaQuery, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Rule:
    selectors: tuple[Selector, ...]  # unsupported selectors already dropped
    declarations: tuple[Declaration, ...]
    media: tuple[MediaQueryList, ...]  # enclosing @media lists (all must match); () = always
    order: int  # position in the flattened sheet, imports inlined
    span: Span  # the selector list
    file: str


@dataclass(frozen=True, slots=True)
class Import:
    path: str  # skill-relative target
    file: str  # the importing file
    span: Span
    found: bool


@dataclass(frozen=True, slots=True)
class FontFace:
    declarations: tuple[Declaration, ...]
    span: Span
    file: str


@dataclass(frozen=True, slots=True)
class Stylesheet:
    rules: tuple[Rule, ...]
    imports: tuple[Import, ...]
    font_faces: tuple[FontFace, ...]


# ----------------------------------------------------------------------------------------
# Card style rules (DESIGN.md "Card WXSS", notes/ai-mode-spec.md section 5)
# ----------------------------------------------------------------------------------------

_SIDES = ("top", "right", "bottom", "left")
SUPPORTED_PROPERTIES: frozenset[str] = frozenset(
    {
        "display", "position", "top", "right", "bottom", "left", "box-sizing", "pointer-events",
        "color", "opacity", "visibility", "aspect-ratio",
        "flex", "flex-direction", "flex-wrap", "flex-flow", "flex-grow", "flex-shrink", "flex-basis",
        "justify-content", "align-items", "align-self", "align-content", "order",
        "background", "background-color", "background-image", "background-size", "background-position",
        "background-repeat", "background-clip", "background-origin",
        "mask", "mask-image", "mask-size", "mask-position", "mask-repeat", "mask-origin", "mask-clip", "mask-mode",
        "width", "height", "min-width", "max-width", "min-height", "max-height",
        "padding", "margin", "border", "border-width", "border-style", "border-color", "border-radius",
        "box-shadow", "text-shadow",
        "font", "font-size", "font-weight", "font-family", "font-style",
        "line-height", "text-align", "word-break", "white-space", "text-overflow", "text-indent",
        "vertical-align", "letter-spacing", "word-spacing", "-wx-line-clamp",
        "transform", "transform-origin", "filter",
    }
    | {f"padding-{s}" for s in _SIDES}
    | {f"margin-{s}" for s in _SIDES}
    | {f"border-{s}{p}" for s in _SIDES for p in ("", "-width", "-style", "-color")}
    | {f"border-{v}-{h}-radius" for v in ("top", "bottom") for h in ("left", "right")}
)  # fmt: skip

# Why a known CSS property is not allowed, shown as the hint.
_PROPERTY_HINTS: dict[str, str] = {
    "z-index": "cards stack elements in document order; reorder the elements instead",
    "float": "use display: flex",
    "clear": "use display: flex",
    "overflow": "a card clips its content at its fixed height; remove overflow",
    "gap": "use margins on the children",
    "cursor": "cards are touch-only",
    "text-decoration": "cards cannot draw text decorations; use a border-bottom instead",
    "-webkit-line-clamp": "use -wx-line-clamp",
    "-webkit-box-orient": "use -wx-line-clamp with display: block",
}
_PREFIX_HINTS: tuple[tuple[str, str], ...] = (
    ("animation", "cards do not animate"),
    ("transition", "cards do not animate"),
    ("grid", "use display: flex"),
    ("overflow", _PROPERTY_HINTS["overflow"]),
    ("row-gap", _PROPERTY_HINTS["gap"]),
    ("column-gap", _PROPERTY_HINTS["gap"]),
    ("text-decoration", _PROPERTY_HINTS["text-decoration"]),
    ("border-collapse", "cards have no tables"),
    ("border-spacing", "cards have no tables"),
    ("table-layout", "cards have no tables"),
)
_KNOWN_CSS = frozenset(_PROPERTY_HINTS) | {
    "content", "outline", "resize", "user-select", "will-change", "clip-path", "object-fit", "list-style",
    "columns", "column-count", "backdrop-filter", "mix-blend-mode", "isolation", "contain", "inset",
    "scroll-behavior", "touch-action", "caret-color", "appearance", "word-wrap", "overflow-wrap",
}  # fmt: skip

_DISPLAY_OK = frozenset({"none", "inline", "inline-block", "block", "flex"})
_POSITION_OK = frozenset({"relative", "absolute", "static"})
_BORDER_STYLE_BAD = frozenset({"dashed", "dotted", "double", "groove", "ridge", "inset", "outset", "hidden"})
_BORDER_STYLE_PROPS = frozenset(
    {"border", "border-style"} | {f"border-{s}" for s in _SIDES} | {f"border-{s}-style" for s in _SIDES}
)
_GLOBAL_KEYWORDS = frozenset({"inherit", "initial", "unset"})

_MEDIA_LENGTH_FEATURES = frozenset({"width", "min-width", "max-width", "height", "min-height", "max-height"})
_MEDIA_KEYWORD_FEATURES = {"orientation": ("portrait", "landscape"), "prefers-color-scheme": ("light", "dark")}
_MEDIA_TYPES = frozenset({"all", "screen", "print"})

_PSEUDO_HINTS = {
    "hover": 'use hover-class="..." on the element',
    "active": 'use hover-class="..." on the element',
    "first-child": "add a class to the first item in the template",
    "last-child": "add a class to the last item in the template (wx:for index)",
    "nth-child": "add a class from the wx:for index",
}


def _property_hint(name: str) -> str | None:
    if name in _PROPERTY_HINTS:
        return _PROPERTY_HINTS[name]
    for prefix, hint in _PREFIX_HINTS:
        if name.startswith(prefix):
            return hint
    return None


@lru_cache(maxsize=4096)
def _is_color_name(name: str) -> bool:
    return tinycss2.color3.parse_color(name) is not None


# ----------------------------------------------------------------------------------------
# Source positions
# ----------------------------------------------------------------------------------------

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
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", text))
        self.line0, self.col0 = origin

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column - 1

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
        return self.span(self.tok_start(first), self.tok_end(last if last is not None else first))

    def _loc(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        line, col = index + 1, offset - self.starts[index] + 1
        if line == 1:
            col += self.col0 - 1
        return line + self.line0 - 1, col

    def tok_end(self, tok: Token) -> int:
        kind = tok.type
        if kind in _CLOSERS:
            close = self.close_offset(tok)
            return len(self.text) if close is None else close + 1
        start = self.tok_start(tok)
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


# ----------------------------------------------------------------------------------------
# Parser
# ----------------------------------------------------------------------------------------

_ERROR_MESSAGES = {
    "bad-string": ("WXSS003", "string is not closed before the end of the line"),
    "eof-in-string": ("WXSS003", "string is not closed before the end of the file"),
    "bad-url": ("WXSS003", "malformed url(): quote the address or escape spaces, quotes and parentheses"),
    "eof-in-url": ("WXSS003", "url( is not closed before the end of the file"),
    "}": ("WXSS004", "unmatched '}' (no '{' is open here)"),
    ")": ("WXSS004", "unmatched ')' (no '(' is open here)"),
    "]": ("WXSS004", "unmatched ']' (no '[' is open here)"),
}


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


class _Parser:
    def __init__(
        self,
        sink: DiagnosticSink,
        load: Callable[[str], str | None] | None,
    ) -> None:
        self.sink = sink
        self.load = load
        self.rules: list[Rule] = []
        self.imports: list[Import] = []
        self.font_faces: list[FontFace] = []
        self.stack: list[str] = []  # files being parsed, for @import cycles
        self.reported: set[str] = set()  # files whose diagnostics were already given once

    # -- entry points ---------------------------------------------------------------------

    def sheet(self, text: str, file: str, media: tuple[MediaQueryList, ...]) -> None:
        quiet = file in self.reported
        self.reported.add(file)
        saved = self.sink
        if quiet:  # a file imported twice: its rules count twice, its diagnostics once
            self.sink = DiagnosticSink()
        self.stack.append(file)
        try:
            src = _Source(_normalise(text), (1, 1))
            tokens = tinycss2.parse_component_value_list(src.text, skip_comments=True)
            f = _File(self, src, file)
            f.report_errors(tokens)
            f.report_unclosed(tokens)
            f.rule_list(tokens, media, top=True)
        finally:
            self.stack.pop()
            self.sink = saved

    def order(self) -> int:
        return len(self.rules)


def _normalise(text: str) -> str:
    return text.replace("\0", "\ufffd").replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")


class _File:
    """Parsing state for one file of the sheet (the entry file or an @import target)."""

    def __init__(self, parser: _Parser, src: _Source, file: str) -> None:
        self.p = parser
        self.src = src
        self.file = file

    def emit(self, code: str, message: str, span: Span, hint: str | None = None) -> None:
        self.p.sink.emit(code, message, file=self.file, span=span, hint=hint)

    def text_of(self, sig: Sequence[Token]) -> str:
        """Source text from the first to the last token, whitespace collapsed."""
        if not sig:
            return ""
        start, end = self.src.tok_start(sig[0]), self.src.tok_end(sig[-1])
        return " ".join(self.src.text[start:end].split())

    # -- whole-file checks ----------------------------------------------------------------

    def report_errors(self, tokens: Sequence[Token]) -> None:
        """tinycss2 leaves bad strings, bad urls and stray closers as error tokens in the tree."""
        for tok in tokens:
            kind = tok.type
            if kind == "error":
                code, message = _ERROR_MESSAGES.get(tok.kind, ("WXSS001", f"syntax error ({tok.kind})"))
                start = end = self.src.tok_start(tok)
                if tok.kind in ("bad-string", "eof-in-string"):  # the rest of the line is inside the string
                    end = self.src.text.find("\n", start)
                    end = len(self.src.text) if end < 0 else end
                self.emit(code, message, self.src.span(start, max(end, start + 1)))
            elif kind in _CLOSERS:
                self.report_errors(tok.arguments if kind == "function" else tok.content)

    def report_unclosed(self, tokens: Sequence[Token]) -> None:
        """Blocks still open at the end of the file are closed silently by the tokenizer."""
        chain = _significant(tokens)
        while chain and chain[-1].type in _CLOSERS:
            tok = chain[-1]
            if self.src.close_offset(tok) is None:
                opener = "{" if tok.type == "{} block" else "[" if tok.type == "[] block" else "("
                start = self.src.tok_start(tok)
                if tok.type == "function":
                    start += len(tok.serialize().split("(", 1)[0])
                self.emit(
                    "WXSS002",
                    f"'{opener}' is never closed: the file ends inside this block",
                    self.src.span(start, start + 1),
                    hint=f"add the missing '{_CLOSERS[tok.type]}'",
                )
            chain = _significant(tok.arguments if tok.type == "function" else tok.content)

    # -- rules ----------------------------------------------------------------------------

    def rule_list(self, tokens: Sequence[Token], media: tuple[MediaQueryList, ...], top: bool) -> None:
        i, n = 0, len(tokens)
        while i < n:
            tok = tokens[i]
            kind = tok.type
            if kind in ("whitespace", "error", "comment"):
                i += 1
                continue
            if kind == "at-keyword":
                j = i + 1
                while (
                    j < n
                    and tokens[j].type != "{} block"
                    and not (tokens[j].type == "literal" and tokens[j].value == ";")
                ):
                    j += 1
                block = tokens[j] if j < n and tokens[j].type == "{} block" else None
                self.at_rule(tok, tokens[i + 1 : j], block, media, top)
                i = j + 1
                continue
            j = i
            while j < n and tokens[j].type != "{} block":
                j += 1
            prelude = tokens[i:j]
            if j >= n:
                sig = _significant(prelude)
                if sig:
                    self.emit(
                        "WXSS001",
                        f"'{tinycss2.serialize(prelude).strip()}' is not followed by a {{ }} block",
                        self.src.tok_span(sig[0], sig[-1]),
                        hint="a rule is: selector { property: value; }",
                    )
                return
            self.qualified_rule(prelude, tokens[j], media)
            i = j + 1

    def qualified_rule(self, prelude: Sequence[Token], block: Token, media: tuple[MediaQueryList, ...]) -> None:
        sig = _significant(prelude)
        if not sig:
            span = self.src.span(self.src.tok_start(block), self.src.tok_start(block) + 1)
            self.emit("WXSS005", "a rule has no selector before '{'", span)
        else:
            span = self.src.tok_span(sig[0], sig[-1])
        selectors = self.selector_list(prelude)
        declarations = self.declaration_list(block.content, font_face=False)
        self.p.rules.append(Rule(selectors, declarations, media, self.p.order(), span, self.file))

    def at_rule(
        self,
        keyword: Token,
        prelude: Sequence[Token],
        block: Token | None,
        media: tuple[MediaQueryList, ...],
        top: bool,
    ) -> None:
        name = keyword.lower_value
        span = self.src.tok_span(keyword)
        if name == "import" and top:
            if block is not None:
                self.emit("WXSS001", "@import takes no { } block; end it with ';'", span)
            self.import_rule(keyword, prelude, media)
        elif name == "media":
            mql = self.media_query_list(prelude, span)
            if block is None:
                self.emit("WXSS001", "@media needs a { } block of rules", span)
                return
            self.rule_list(block.content, (*media, mql), top=False)
        elif name == "font-face" and top:
            if block is None:
                self.emit("WXSS001", "@font-face needs a { } block of descriptors", span)
                return
            decls = self.declaration_list(block.content, font_face=True)
            self.p.font_faces.append(FontFace(decls, span, self.file))
        elif name == "charset" and top:
            pass  # harmless: every skill file is UTF-8 already
        elif name.endswith("keyframes"):
            self.emit(
                "WXSS011",
                f"@{keyword.value} is not supported in cards: cards do not animate; the rule is ignored",
                span,
                hint="remove the animation",
            )
        elif name in ("import", "font-face", "charset"):
            self.emit("WXSS011", f"@{keyword.value} is only allowed at the top level of a file; it is ignored", span)
        else:
            self.emit("WXSS011", f"@{keyword.value} is not supported in cards; the rule is ignored", span)

    def import_rule(self, keyword: Token, prelude: Sequence[Token], media: tuple[MediaQueryList, ...]) -> None:
        sig = _significant(prelude)
        target: str | None = None
        if sig and sig[0].type in ("string", "url"):
            target = sig[0].value
        elif sig and sig[0].type == "function" and sig[0].lower_name == "url":
            args = _significant(sig[0].arguments)
            if len(args) == 1 and args[0].type == "string":
                target = args[0].value
        if target is None:
            self.emit(
                "WXSS001",
                "@import needs a quoted path",
                self.src.tok_span(keyword, sig[-1] if sig else keyword),
                hint='@import "../common/base.wxss";',
            )
            return
        span = self.src.tok_span(sig[0])
        if len(sig) > 1:
            start = sig[1]
            media = (*media, self.media_query_list(sig[1:], self.src.tok_span(start, sig[-1])))
        path = _resolve_import(self.file, target)
        if path is None:
            self.emit(
                "WXSS015",
                f'@import "{target}" must be a relative path to a .wxss file inside the skill',
                span,
                hint="import files of this skill with ./ or ../ paths that stay inside the skill folder",
            )
            return
        if path in self.p.stack:
            cycle = " -> ".join([*self.p.stack[self.p.stack.index(path) :], path])
            self.emit("WXSS014", f"@import cycle: {cycle}", span, hint="remove one of the imports")
            self.p.imports.append(Import(path, self.file, span, True))
            return
        text = self.p.load(path) if self.p.load is not None else None
        self.p.imports.append(Import(path, self.file, span, text is not None))
        if text is None:
            if self.p.load is not None:
                self.emit("WXSS013", f'@import "{target}": {path} does not exist in the skill', span)
            return
        self.p.sheet(text, path, media)

    # -- selectors ------------------------------------------------------------------------

    def selector_list(self, prelude: Sequence[Token]) -> tuple[Selector, ...]:
        result: list[Selector] = []
        for part in _split(prelude, ","):
            sig = _significant(part)
            if not sig:
                if len(_significant(prelude)) > 0 and not any(t.type == "error" for t in part):
                    comma = next((t for t in prelude if t.type == "literal" and t.value == ","), None)
                    where = self.src.tok_span(comma) if comma is not None else self.src.tok_span(prelude[0])
                    self.emit("WXSS005", "empty selector in a comma-separated list", where)
                continue
            if any(t.type == "error" for t in part):
                continue  # already reported by report_errors
            sel = self.selector(part, sig)
            if sel is not None:
                result.append(sel)
        return tuple(result)

    def selector(self, tokens: Sequence[Token], sig: list[Token]) -> Selector | None:
        compounds: list[Compound] = []
        tag: str | None = None
        ident: str | None = None
        classes: list[str] = []
        started = False
        toks = [t for t in tokens if t.type != "comment"]
        # strip outer whitespace
        while toks and toks[0].type == "whitespace":
            toks.pop(0)
        while toks and toks[-1].type == "whitespace":
            toks.pop()
        i, n = 0, len(toks)
        while i < n:
            tok = toks[i]
            kind = tok.type
            if kind == "whitespace":
                if started:
                    compounds.append(Compound(tag, ident, tuple(classes)))
                    tag, ident, classes, started = None, None, [], False
                i += 1
                continue
            if kind == "literal" and tok.value == "." and i + 1 < n and toks[i + 1].type == "ident":
                classes.append(toks[i + 1].value)
                started = True
                i += 2
                continue
            if kind == "hash" and tok.is_identifier and ident is None:
                ident, started = tok.value, True
                i += 1
                continue
            if kind == "ident" and not started:
                tag, started = tok.lower_value, True
                i += 1
                continue
            unsupported = self._unsupported_selector_part(toks, i)
            if unsupported is not None:
                message, end_index, hint = unsupported
                self.emit(
                    "WXSS006",
                    f"{message} is not supported in cards; the selector '{self.text_of(sig)}' is ignored",
                    self.src.tok_span(tok, toks[end_index]),
                    hint=hint,
                )
                return None
            what = tok.serialize()
            self.emit(
                "WXSS005",
                f"invalid selector '{self.text_of(sig)}': unexpected '{what}'",
                self.src.tok_span(tok),
                hint="card selectors are .class, #id, tag and descendants of them, separated by commas",
            )
            return None
        if started:
            compounds.append(Compound(tag, ident, tuple(classes)))
        ids = sum(1 for c in compounds if c.id)
        cls = sum(len(c.classes) for c in compounds)
        tags = sum(1 for c in compounds if c.tag)
        return Selector(tuple(compounds), (ids, cls, tags), self.src.tok_span(sig[0], sig[-1]), self.text_of(sig))

    def _unsupported_selector_part(self, toks: Sequence[Token], i: int) -> tuple[str, int, str | None] | None:
        tok = toks[i]
        if tok.type == "[] block":
            return "attribute selector", i, "add a class to the element instead"
        if tok.type != "literal":
            return None
        if tok.value in (">", "+", "~"):
            names = {">": "child combinator '>'", "+": "adjacent sibling combinator '+'", "~": "sibling combinator '~'"}
            hint = "use a descendant selector (a space) or a class on the element"
            return names[tok.value], i, hint
        if tok.value == "*":
            return "universal selector '*'", i, "name the elements with a class"
        if tok.value == ":":
            j = i + 1
            element = j < len(toks) and toks[j].type == "literal" and toks[j].value == ":"
            if element:
                j += 1
            if j < len(toks) and toks[j].type in ("ident", "function"):
                name = toks[j].lower_value if toks[j].type == "ident" else toks[j].lower_name
                label = f"pseudo-element '::{name}'" if element else f"pseudo-class ':{name}'"
                return label, j, _PSEUDO_HINTS.get(name)
            return None
        return None

    # -- declarations ---------------------------------------------------------------------

    def declaration_list(self, tokens: Sequence[Token], font_face: bool) -> tuple[Declaration, ...]:
        result: list[Declaration] = []
        i, n = 0, len(tokens)
        while i < n:
            tok = tokens[i]
            kind = tok.type
            if kind in ("whitespace", "error", "comment") or (kind == "literal" and tok.value == ";"):
                i += 1
                continue
            j = i
            if kind == "ident" and _colon_follows(tokens, i + 1):
                while j < n and not (tokens[j].type == "literal" and tokens[j].value == ";"):
                    j += 1
                decl = self.declaration(tokens[i:j], font_face)
                if decl is not None:
                    result.append(decl)
                i = j + 1
                continue
            # Not "name:": a nested rule, a nested at-rule, or garbage up to ';' or a block.
            while (
                j < n and tokens[j].type != "{} block" and not (tokens[j].type == "literal" and tokens[j].value == ";")
            ):
                j += 1
            stmt = _significant(tokens[i:j])
            if kind == "at-keyword":
                self.emit(
                    "WXSS011",
                    f"@{tok.value} inside a rule is not supported in cards; it is ignored",
                    self.src.tok_span(tok),
                )
            elif j < n and tokens[j].type == "{} block":
                self.emit(
                    "WXSS001",
                    "nested rules are not supported in WXSS; move this rule to the top level",
                    self.src.tok_span(stmt[0], stmt[-1]) if stmt else self.src.tok_span(tok),
                )
            elif kind == "ident":
                nxt = stmt[1] if len(stmt) > 1 else tok
                self.emit(
                    "WXSS001",
                    f"expected ':' after the property name '{tok.value}'",
                    self.src.tok_span(nxt),
                    hint=f"{tok.value}: <value>;",
                )
            else:
                self.emit(
                    "WXSS001",
                    f"expected a declaration 'property: value', found '{tok.serialize()}'",
                    self.src.tok_span(tok),
                )
            i = j + 1
        return tuple(result)

    def declaration(self, tokens: Sequence[Token], font_face: bool) -> Declaration | None:
        name_tok = tokens[0]
        raw_name: str = name_tok.value
        name = raw_name if raw_name.startswith("--") else raw_name.lower()
        colon = next(k for k in range(1, len(tokens)) if tokens[k].type == "literal" and tokens[k].value == ":")
        value_toks = list(tokens[colon + 1 :])
        sig = _significant(value_toks)
        important = False
        if (
            len(sig) >= 2
            and sig[-2].type == "literal"
            and sig[-2].value == "!"
            and sig[-1].type == "ident"
            and sig[-1].lower_value == "important"
        ):
            important = True
            end_tok = sig[-1]
            cut = value_toks.index(sig[-2])
            value_toks = value_toks[:cut]
            sig = sig[:-2]
        else:
            end_tok = sig[-1] if sig else tokens[colon]
        span = self.src.tok_span(name_tok, end_tok)
        if any(t.type == "error" for t in value_toks):
            return None  # a bad string or url, already reported
        if not sig:
            self.emit("WXSS001", f"'{raw_name}' has no value", span, hint=f"{raw_name}: <value>;")
            return None
        state = _ValueCheck(self, name, font_face)
        parts = state.convert(value_toks)
        supported = state.ok
        if font_face:
            return Declaration(name, parts, important, span, supported)
        if name.startswith("--"):
            self.emit(
                "WXSS009",
                f"CSS variables are not supported in cards: '{raw_name}' is ignored",
                self.src.tok_span(name_tok),
                hint="write the value where it is used",
            )
            supported = False
        elif name not in SUPPORTED_PROPERTIES:
            self._unsupported_property(raw_name, name, self.src.tok_span(name_tok))
            supported = False
        elif supported:
            supported = self._check_value(name, sig)
        return Declaration(name, parts, important, span, supported)

    def _unsupported_property(self, raw_name: str, name: str, span: Span) -> None:
        hint = _property_hint(name)
        if hint is not None or name in _KNOWN_CSS or name.startswith("-"):
            self.emit("WXSS007", f"'{raw_name}' is not supported in cards; the declaration is ignored", span, hint)
            return
        close = difflib.get_close_matches(name, SUPPORTED_PROPERTIES, n=1, cutoff=0.75)
        self.emit(
            "WXSS007",
            f"unknown property '{raw_name}'; the declaration is ignored",
            span,
            hint=f"did you mean '{close[0]}'?" if close else None,
        )

    def _check_value(self, name: str, sig: Sequence[Token]) -> bool:
        """Values cards cannot render although the property is allowed."""
        first = sig[0]
        keyword = first.lower_value if first.type == "ident" else None
        if keyword in _GLOBAL_KEYWORDS:
            return True
        if name == "display" and keyword is not None and keyword not in _DISPLAY_OK:
            hint = "use display: flex" if keyword in ("grid", "inline-grid", "inline-flex", "-webkit-box") else None
            self.emit("WXSS008", f"display: {keyword} is not supported in cards", self.src.tok_span(first), hint)
            return False
        if name == "position" and keyword is not None and keyword not in _POSITION_OK:
            self.emit(
                "WXSS008",
                f"position: {keyword} is not supported in cards",
                self.src.tok_span(first),
                hint="a card does not scroll; use position: relative or absolute",
            )
            return False
        if name in _BORDER_STYLE_PROPS:
            for tok in sig:
                if tok.type == "ident" and tok.lower_value in _BORDER_STYLE_BAD:
                    self.emit(
                        "WXSS008",
                        f"border style '{tok.lower_value}' is not supported in cards (only solid and none)",
                        self.src.tok_span(tok),
                    )
                    return False
        if name == "filter":
            for tok in sig:
                if tok.type == "function" and tok.lower_name != "blur":
                    self.emit(
                        "WXSS008",
                        f"filter {tok.lower_name}() is not supported in cards (only blur())",
                        self.src.tok_span(tok),
                    )
                    return False
        return True

    # -- media queries --------------------------------------------------------------------

    def media_query_list(self, prelude: Sequence[Token], span: Span) -> MediaQueryList:
        queries: list[MediaQuery] = []
        for part in _split(prelude, ","):
            sig = _significant(part)
            if not sig:
                self.emit("WXSS012", "empty media query; it never matches", span)
                queries.append(MediaQuery(False, "all", (), supported=False))
                continue
            queries.append(self.media_query(sig))
        return MediaQueryList(tuple(queries), self.text_of(_significant(prelude)))

    def media_query(self, sig: Sequence[Token]) -> MediaQuery:
        negated = False
        media_type = "all"
        features: list[MediaFeature] = []
        i, n = 0, len(sig)

        def bad(tok: Token, message: str) -> MediaQuery:
            self.emit("WXSS012", f"{message}; the media query never matches", self.src.tok_span(tok))
            return MediaQuery(negated, media_type, tuple(features), supported=False)

        if sig[0].type == "ident" and sig[0].lower_value in ("not", "only"):
            negated = sig[0].lower_value == "not"
            i = 1
        if i < n and sig[i].type == "ident":
            media_type = sig[i].lower_value
            if media_type not in _MEDIA_TYPES:
                return bad(sig[i], f"unknown media type '{sig[i].value}'")
            i += 1
            need_and = True
        else:
            need_and = False
        while i < n:
            tok = sig[i]
            if need_and:
                if tok.type == "ident" and tok.lower_value == "and":
                    i += 1
                    need_and = False
                    continue
                return bad(tok, f"expected 'and', found '{tok.serialize()}'")
            if tok.type != "() block":
                return bad(tok, f"expected a (feature: value), found '{tok.serialize()}'")
            feature = self.media_feature(tok)
            if feature is None:
                return MediaQuery(negated, media_type, tuple(features), supported=False)
            features.append(feature)
            need_and = True
            i += 1
        if i == 0 or (not need_and and features):
            return bad(sig[-1], "incomplete media query")
        return MediaQuery(negated, media_type, tuple(features))

    def media_feature(self, block: Token) -> MediaFeature | None:
        sig = _significant(block.content)
        span = self.src.tok_span(block)
        if len(sig) != 3 or sig[0].type != "ident" or not (sig[1].type == "literal" and sig[1].value == ":"):
            self.emit(
                "WXSS012",
                f"unsupported media feature {block.serialize()}; the media query never matches",
                span,
                hint="use (min-width: 400px), (orientation: landscape) or (prefers-color-scheme: dark)",
            )
            return None
        name, value = sig[0].lower_value, sig[2]
        if name in _MEDIA_LENGTH_FEATURES:
            if value.type == "dimension" and value.lower_unit in ("px", "em", "rem"):
                return MediaFeature(name, number=value.value, unit=value.lower_unit)
            if value.type == "number" and value.value == 0:
                return MediaFeature(name, number=0.0, unit="px")
            self.emit("WXSS012", f"({name}) needs a px, em or rem length; the media query never matches", span)
            return None
        if name in _MEDIA_KEYWORD_FEATURES:
            allowed = _MEDIA_KEYWORD_FEATURES[name]
            if value.type == "ident" and value.lower_value in allowed:
                return MediaFeature(name, keyword=value.lower_value)
            self.emit(
                "WXSS012",
                f"({name}) must be {' or '.join(allowed)}; the media query never matches",
                span,
            )
            return None
        self.emit(
            "WXSS012",
            f"media feature '{sig[0].value}' is not supported in cards; the media query never matches",
            span,
            hint="cards support width, height (and min-/max-), orientation and prefers-color-scheme",
        )
        return None


def _colon_follows(tokens: Sequence[Token], i: int) -> bool:
    n = len(tokens)
    while i < n and tokens[i].type in ("whitespace", "comment"):
        i += 1
    return i < n and tokens[i].type == "literal" and tokens[i].value == ":"


def _resolve_import(file: str, target: str) -> str | None:
    if not target or target.startswith("/") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or "\\" in target:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(file), target))
    if path == ".." or path.startswith("../") or path == ".":
        return None
    if not path.endswith(".wxss"):
        if posixpath.splitext(path)[1]:
            return None
        path += ".wxss"
    return path


class _ValueCheck:
    """Token list -> typed parts, reporting var() and units cards cannot render."""

    def __init__(self, f: _File, prop: str, font_face: bool) -> None:
        self.f = f
        self.lower = prop not in ("font-family", "font") and not font_face
        self.font_face = font_face
        self.ok = True

    def convert(self, tokens: Sequence[Token]) -> tuple[Part, ...]:
        return tuple(self._parts(tokens))

    def _parts(self, tokens: Sequence[Token]) -> Iterator[Part]:
        for tok in tokens:
            kind = tok.type
            if kind in ("whitespace", "comment", "error"):
                continue
            if kind == "dimension":
                unit = tok.lower_unit
                if unit in LENGTH_UNITS:
                    yield Length(tok.value, unit)
                    continue
                if unit in UNSUPPORTED_UNITS and not self.font_face:
                    self._reject(
                        tok,
                        "WXSS010",
                        f"unit '{tok.unit}' is not supported in cards; the declaration is ignored",
                        "use rpx, px, vw, em, rem or %",
                    )
                yield Dimension(tok.value, unit)
            elif kind == "number":
                yield Number(tok.value)
            elif kind == "percentage":
                yield Length(tok.value, "%")
            elif kind == "ident":
                low = tok.lower_value
                if _is_color_name(low):
                    yield Color(low)
                else:
                    yield Keyword(low if self.lower else tok.value)
            elif kind == "hash":
                yield Color("#" + tok.value.lower())
            elif kind == "literal":
                yield Operator(tok.value) if tok.value in (",", "/", "+", "-", "*") else Raw(tok.value)
            elif kind == "string":
                yield String(tok.value)
            elif kind == "url":
                yield Url(tok.value)
            elif kind == "function":
                name = tok.lower_name
                if name == "var" and not self.font_face:
                    self._reject(
                        tok,
                        "WXSS009",
                        "CSS variables are not supported in cards: var() cannot be resolved; "
                        "the declaration is ignored",
                        "write the value itself",
                    )
                if name == "url":
                    args = _significant(tok.arguments)
                    if len(args) == 1 and args[0].type == "string":
                        yield Url(args[0].value)
                        continue
                yield Function(name, tuple(self._parts(tok.arguments)))
            elif kind == "() block":
                yield Function("", tuple(self._parts(tok.content)))
            else:
                yield Raw(tok.serialize())

    def _reject(self, tok: Token, code: str, message: str, hint: str) -> None:
        if self.ok:  # one diagnostic per declaration
            self.f.emit(code, message, self.f.src.tok_span(tok), hint)
        self.ok = False


# ----------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------


def parse_wxss(
    text: str,
    *,
    file: str,
    sink: DiagnosticSink,
    load: Callable[[str], str | None] | None = None,
) -> Stylesheet:
    """Parse one .wxss file. ``load`` reads a skill-relative path (for @import), None if absent."""
    parser = _Parser(sink, load)
    parser.sheet(text, file, ())
    return Stylesheet(tuple(parser.rules), tuple(parser.imports), tuple(parser.font_faces))


def parse_style_attribute(
    text: str,
    *,
    file: str = "<style>",
    sink: DiagnosticSink | None = None,
    origin: tuple[int, int] = (1, 1),
) -> tuple[Declaration, ...]:
    """Parse an inline ``style="..."`` value. ``origin`` is where the value starts in ``file``."""
    parser = _Parser(sink if sink is not None else DiagnosticSink(), None)
    src = _Source(_normalise(text), origin)
    tokens = tinycss2.parse_component_value_list(src.text, skip_comments=True)
    f = _File(parser, src, file)
    f.report_errors(tokens)
    return f.declaration_list(tokens, font_face=False)


# ----------------------------------------------------------------------------------------
# JSON view (golden snapshots, `skillc build --emit ast`)
# ----------------------------------------------------------------------------------------


def span_text(span: Span) -> str:
    return f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"


def part_json(part: Part) -> dict[str, object]:
    if isinstance(part, Function):
        return {"kind": "function", "name": part.name, "args": [part_json(a) for a in part.args]}
    return {"kind": part.kind, **_fields(part)}


def declaration_json(decl: Declaration) -> dict[str, object]:
    out: dict[str, object] = {
        "name": decl.name,
        "css": value_css(decl.value),
        "value": [part_json(p) for p in decl.value],
        "span": span_text(decl.span),
    }
    if decl.important:
        out["important"] = True
    if not decl.supported:
        out["supported"] = False
    return out


def media_json(mql: MediaQueryList) -> dict[str, object]:
    queries = []
    for q in mql.queries:
        features = [{k: v for k, v in _fields(f).items() if v is not None} for f in q.features]
        entry: dict[str, object] = {"type": q.media_type, "features": features}
        if q.negated:
            entry["not"] = True
        if not q.supported:
            entry["supported"] = False
        queries.append(entry)
    return {"text": mql.text, "queries": queries}


def _fields(obj: object) -> dict[str, object]:
    return {slot: getattr(obj, slot) for slot in obj.__slots__}  # type: ignore[attr-defined]


def stylesheet_json(sheet: Stylesheet) -> dict[str, object]:
    return {
        "rules": [
            {
                "order": r.order,
                "file": r.file,
                "span": span_text(r.span),
                "selectors": [
                    {
                        "text": s.text,
                        "specificity": list(s.specificity),
                        "compounds": [
                            {k: v for k, v in (("tag", c.tag), ("id", c.id), ("classes", list(c.classes))) if v}
                            for c in s.compounds
                        ],
                        "span": span_text(s.span),
                    }
                    for s in r.selectors
                ],
                "media": [media_json(m) for m in r.media],
                "declarations": [declaration_json(d) for d in r.declarations],
            }
            for r in sheet.rules
        ],
        "imports": [
            {"path": i.path, "file": i.file, "span": span_text(i.span), "found": i.found} for i in sheet.imports
        ],
        "font_faces": [
            {"file": f.file, "span": span_text(f.span), "declarations": [declaration_json(d) for d in f.declarations]}
            for f in sheet.font_faces
        ],
    }
