"""The WXSS parser: text -> :class:`Stylesheet`; rule lists, at-rules and ``@import``.

tinycss2 only tokenizes; this module walks the component values, reports syntax errors
tinycss2 left in the tree, and hands selectors, declarations and media queries to the
readers ``_File`` combines. ``@import`` targets are loaded through the caller's ``load`` and
parsed into the same flat, ordered rule list.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tinycss2

from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.modpaths import CodeRoot
from skillc.frontend.wxss.declarations import _DeclarationReader
from skillc.frontend.wxss.media import _MediaReader
from skillc.frontend.wxss.nodes import Declaration, FontFace, Import, MediaQueryList, Rule, Stylesheet
from skillc.frontend.wxss.reader import DeclarationMemo
from skillc.frontend.wxss.selectors import _SelectorReader
from skillc.frontend.wxss.tokens import _CLOSERS, MAX_NESTING, Token, _significant, _Source, last_token
from skillc.frontend.wxss.values import Keyword, String
from skillc.gcpause import collector_paused

__all__ = ["SheetCache", "parse_style_attribute", "parse_wxss"]

_ERROR_OR_BLOCK = frozenset({"error", *_CLOSERS})
_ERROR_MESSAGES = {
    "bad-string": ("WXSS003", "string is not closed before the end of the line"),
    "eof-in-string": ("WXSS003", "string is not closed before the end of the file"),
    "bad-url": ("WXSS003", "malformed url(): quote the address or escape spaces, quotes and parentheses"),
    "eof-in-url": ("WXSS003", "url( is not closed before the end of the file"),
    "}": ("WXSS004", "unmatched '}' (no '{' is open here)"),
    ")": ("WXSS004", "unmatched ')' (no '(' is open here)"),
    "]": ("WXSS004", "unmatched ']' (no '[' is open here)"),
}


@dataclass(frozen=True, slots=True)
class _Parsed:
    """What parsing one sheet that imports nothing gave, apart from where it is imported: its
    rules with only their own @media (the importer's are prefixed again), its @font-face rules
    and its diagnostics."""

    rules: tuple[tuple[Rule, tuple[MediaQueryList, ...]], ...]
    font_faces: tuple[FontFace, ...]
    diagnostics: tuple[Diagnostic, ...]


class SheetCache:
    """Sheets parsed once per check or build: a sheet @imported by many (Vant's 70 components
    import ../common/index.wxss) is read once and its rules replayed, renumbered, for each.
    Keyed by text, so a changed text is parsed again; only sheets that import nothing are kept
    (what an @import yields depends on the importing chain: cycles, the root). Such a sheet's
    result depends on its text alone, apart from the file it names: a copy of it under another
    path (WeUI ships weui.wxss twice) is replayed with its rules and diagnostics moved to that path.

    ``declarations`` is the declaration memo the sheets of the build share (see
    ``_DeclarationReader.declaration``): each declaration's result keyed by its source text, with
    positions kept relative to it."""

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str], _Parsed] = {}
        self._by_text: dict[str, tuple[str, _Parsed]] = {}  # text -> the first file parsed with it
        self.parses = 0  # sheets actually parsed (not replayed): what tests count
        self.declarations: DeclarationMemo = {}

    def get(self, file: str, text: str) -> _Parsed | None:
        parsed = self._parsed.get((file, text))
        if parsed is not None:
            return parsed
        found = self._by_text.get(text)
        if found is None:
            return None
        parsed = _moved(found[1], found[0], file)
        self._parsed[(file, text)] = parsed
        return parsed

    def put(self, file: str, text: str, parsed: _Parsed) -> None:
        self._parsed[(file, text)] = parsed
        self._by_text.setdefault(text, (file, parsed))


def _moved(parsed: _Parsed, old: str, file: str) -> _Parsed:
    """A sheet's result as parsing its text under the path ``file`` gives it: only the file its
    rules, @font-face rules and diagnostics name differs (its imports' would not, but a sheet
    that imports is never cached)."""
    return _Parsed(
        tuple(
            (Rule(r.selectors, r.declarations, r.media, r.order, r.span, file if r.file == old else r.file), own)
            for r, own in parsed.rules
        ),
        tuple(FontFace(f.declarations, f.span, file if f.file == old else f.file) for f in parsed.font_faces),
        tuple(d.model_copy(update={"file": file}) if d.file == old else d for d in parsed.diagnostics),
    )


class _Parser:
    def __init__(
        self,
        sink: DiagnosticSink,
        load: Callable[[str], str | None] | None,
        root: CodeRoot | None = None,
        cache: SheetCache | None = None,
    ) -> None:
        self.sink = sink
        self.load = load
        self.root = root
        self.cache = cache
        # A parse without a cache still shares the declarations its own files repeat.
        self.declarations: DeclarationMemo = cache.declarations if cache is not None else {}
        self.import_rules = 0  # @import rules read so far (a sheet with none may be cached)
        self.rules: list[Rule] = []
        self.imports: list[Import] = []
        self.font_faces: list[FontFace] = []
        self.stack: list[str] = []  # files being parsed, for @import cycles
        self.reported: set[str] = set()  # files whose diagnostics were already given once

    # -- entry points ---------------------------------------------------------------------

    def sheet(self, text: str, file: str, media: tuple[MediaQueryList, ...]) -> None:
        quiet = file in self.reported  # a file imported twice: its rules count twice, its diagnostics once
        self.reported.add(file)
        cached = self.cache.get(file, text) if self.cache is not None else None
        if cached is not None:
            self.replay(cached, media, quiet)
            return
        saved = self.sink
        self.sink = DiagnosticSink()  # this file's diagnostics (and its imports'), kept for the cache
        first_rule, first_font, imports = len(self.rules), len(self.font_faces), self.import_rules
        self.stack.append(file)
        try:
            src = _Source(_normalise(text), (1, 1))
            tokens = tinycss2.parse_component_value_list(src.text, skip_comments=True)
            f = _File(self, src, file)
            f.report_tree(tokens)
            f.report_unclosed(tokens)
            f.rule_list(tokens, media, top=True)
        finally:
            self.stack.pop()
            local, self.sink = self.sink, saved
        if not quiet:
            saved.extend(local)
        if self.cache is not None:
            self.cache.parses += 1
            if self.import_rules == imports:
                own = len(media)
                rules = tuple((r, r.media[own:]) for r in self.rules[first_rule:])
                self.cache.put(file, text, _Parsed(rules, tuple(self.font_faces[first_font:]), tuple(local)))

    def replay(self, parsed: _Parsed, media: tuple[MediaQueryList, ...], quiet: bool) -> None:
        """Add a cached sheet's rules (numbered from here, under the importer's @media), its
        @font-face rules and, unless already given, its diagnostics."""
        for rule, own in parsed.rules:
            self.rules.append(
                Rule(rule.selectors, rule.declarations, (*media, *own), self.order(), rule.span, rule.file)
            )
        self.font_faces.extend(parsed.font_faces)
        if not quiet:
            self.sink.extend(parsed.diagnostics)

    def order(self) -> int:
        return len(self.rules)


def _normalise(text: str) -> str:
    text = text.replace("\0", "\ufffd")
    if "\r" in text:  # a two-character replace scans slowly even when there is nothing to replace
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\f", "\n")  # after the CRs: "\r\f" is two newlines, as tinycss2 reads it
    # tinycss2 reads an integer with int(), which refuses more than 4300 digits. Such a run is
    # rewritten, at the same length, as the out-of-range number it is (1e999...), which the value
    # reader reports (WXSS017); offsets and spans stay true.
    if not _may_hold_long_digits(text):
        return text
    return _LONG_DIGITS.sub(lambda m: "1e" + "9" * (len(m.group()) - 2), text)


_LONG_DIGITS = re.compile(r"[0-9]{1000,}")
_HALF = 500  # half the run _LONG_DIGITS looks for


def _may_hold_long_digits(text: str) -> bool:
    """False when ``text`` has no run of 1000 digits: such a run covers a whole aligned slice of
    500 characters, so only the slices are tested (the search itself costs 7 % of a parse)."""
    return any(text[k : k + _HALF].isdigit() for k in range(0, len(text) - _HALF + 1, _HALF))


class _File(_SelectorReader, _DeclarationReader, _MediaReader):
    """One file's reader: rules, at-rules and @import here; selectors, declarations, media in the mixins."""

    p: _Parser

    # -- whole-file checks ----------------------------------------------------------------

    def report_tree(self, tokens: Sequence[Token]) -> None:
        """One walk over the whole tree: blocks nested deeper than MAX_NESTING are emptied before
        anything reads them (WXSS016, at the first such block), and the bad strings, bad urls and
        stray closers tinycss2 left as error tokens are reported, in the order of the text."""
        errors: list[Token] = []
        deep = self._walk(tokens, 1, errors)
        if deep is not None:
            self.pruned = True
            start = self.src.tok_start(deep)
            self.emit(
                "WXSS016",
                f"blocks ({{ }}, ( ), [ ], functions, @media) nest more than {MAX_NESTING} levels deep; "
                "deeper blocks are dropped",
                self.src.span(start, start + 1),
            )
        for tok in errors:
            code, message = _ERROR_MESSAGES.get(tok.kind, ("WXSS001", f"syntax error ({tok.kind})"))
            start = end = self.src.tok_start(tok)
            if tok.kind in ("bad-string", "eof-in-string"):  # the rest of the line is inside the string
                end = self.src.text.find("\n", start)
                end = len(self.src.text) if end < 0 else end
            self.emit(code, message, self.src.span(start, max(end, start + 1)))

    def _walk(self, tokens: Sequence[Token], level: int, errors: list[Token]) -> Token | None:
        """Collect the error tokens of ``tokens`` and the blocks in it, depth first (the text's
        order), emptying blocks below ``level`` MAX_NESTING; return the first block emptied."""
        first: Token | None = None
        for tok in [t for t in tokens if t.type in _ERROR_OR_BLOCK]:  # a comprehension filters faster than a loop
            kind = tok.type
            if kind == "error":
                errors.append(tok)
                continue
            inner = tok.arguments if kind == "function" else tok.content
            if level > MAX_NESTING:
                if first is None:  # depth first in the text's order: the first met is the earliest
                    first = tok
                inner.clear()
            else:
                deep = self._walk(inner, level + 1, errors)
                if first is None:
                    first = deep
        return first

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
            # The '}' closing the block is right before the next token, unless a comment is
            # between them (it ends in '/'): a block that never closes has no next token.
            close = -1
            if j + 1 < n:
                close = self.src.tok_start(tokens[j + 1]) - 1
                if self.src.text[close] != "}":
                    close = -1
            self.qualified_rule(prelude, tokens[j], media, close)
            i = j + 1

    def qualified_rule(
        self, prelude: Sequence[Token], block: Token, media: tuple[MediaQueryList, ...], close: int = -1
    ) -> None:
        sig = _significant(prelude)
        if not sig:
            span = self.src.span(self.src.tok_start(block), self.src.tok_start(block) + 1)
            self.emit("WXSS005", "a rule has no selector before '{'", span)
        else:
            found = None
            if not self.pruned and last_token(prelude) is sig[-1]:  # read up to the '{'
                found = self.src.bounded(sig[0], sig[-1], self.src.tok_start(block))
            span = found if found is not None else self.src.tok_span(sig[0], sig[-1])
        selectors = self.selector_list(prelude)
        declarations = self.declaration_list(block.content, font_face=False, close=close)
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
            self.emit("WXSS030", _font_face_note(decls), span, _FONT_FACE_HINT)
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
            self.emit("WXSS021", f"@{keyword.value} is only allowed at the top level of a file; it is ignored", span)
        else:
            self.emit("WXSS021", f"@{keyword.value} is not supported in cards; the rule is ignored", span)

    def import_rule(self, keyword: Token, prelude: Sequence[Token], media: tuple[MediaQueryList, ...]) -> None:
        self.p.import_rules += 1
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
        if path is not None and path.startswith("../") and not self._may_leave(path):
            root = self.p.root
            where = root.label if root is not None and root.is_project else "the skill folder"
            self.emit(
                "WXSS015",
                f'@import "{target}" escapes {where}',
                span,
                hint=f"move the shared sheet under {root.label} (for example into _shared/)"
                if root is not None and root.is_project
                else "inside a mini-program project a skill may import sheets under its subpackage root "
                "(such as ../_shared/): skillc finds the project from app.json above the skill folder",
            )
            return
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

    def _may_leave(self, path: str) -> bool:
        """Whether an import out of the skill folder (``../x.wxss``) stays under the boundary
        require() has (V001): the subpackage root of a skill in a project. Without a root given,
        a sheet the caller's ``load`` holds is inside it: the package reads shared sheets only
        from under that root."""
        root = self.p.root
        if root is None:
            return self.p.load is not None and self.p.load(path) is not None
        return root.parts(path) is not None


def _resolve_import(file: str, target: str) -> str | None:
    """The skill-relative path of an @import (``../`` leads kept for a sheet outside the skill
    folder), or None for what is never a sheet of the package (absolute, a URL, not .wxss)."""
    if not target or target.startswith("/") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or "\\" in target:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(file), target))
    if path in (".", ".."):
        return None
    if not path.endswith(".wxss"):
        if posixpath.splitext(path)[1]:
            return None
        path += ".wxss"
    return path


_FONT_FACE_HINT = 'follow the family with a fallback, as in font-family: "Brand", sans-serif'


def _font_face_note(decls: Sequence[Declaration]) -> str:
    """WXSS030: WeChat's cards load an @font-face font (notes/ai-mode-spec.md section 5); skillc's
    Render IR has no font resources, so every backend draws the fallback."""
    named = "(no font-family)"
    for decl in decls:
        if decl.name != "font-family":
            continue
        if len(decl.value) == 1 and isinstance(decl.value[0], String):
            named = f'"{decl.value[0].value}"'
        elif decl.value and all(isinstance(v, Keyword) for v in decl.value):  # unquoted: Brand Sans
            named = '"' + " ".join(v.name for v in decl.value if isinstance(v, Keyword)) + '"'
    return (
        f"@font-face {named}: WeChat's cards load this font, skillc's renderers do not; "
        "text in it is drawn in the next family of its font-family list"
    )


def parse_wxss(
    text: str,
    *,
    file: str,
    sink: DiagnosticSink,
    load: Callable[[str], str | None] | None = None,
    root: CodeRoot | None = None,
    cache: SheetCache | None = None,
) -> Stylesheet:
    """Parse one .wxss file. ``load`` reads a skill-relative path (for @import), None if absent.
    ``root`` is how far an @import may reach out of the skill folder: as far as require() (the
    subpackage root of a skill in a project, else nowhere); None trusts ``load`` to hold only
    sheets inside it (as a loaded package does). ``cache``, shared by the sheets of one check or
    build, parses a sheet they all import once."""
    parser = _Parser(sink, load, root, cache)
    # tinycss2 allocates a dozen acyclic objects per declaration and they all live until the
    # sheet is read: the collector's passes over them found nothing and took a third of the time.
    with collector_paused:
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
    f.report_tree(tokens)
    return f.declaration_list(tokens, font_face=False)
