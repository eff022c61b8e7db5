"""A static scan of a skill's JavaScript: registered APIs, require() paths, async handlers.

This is a scan, not a parse: it masks comments and then matches the few call shapes the
AI-mode runtime defines. The runtime loader verifies the same facts by executing index.js.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.manifest import MAX_APIS
from skillc.frontend.source import LineIndex

_REGISTER = re.compile(r"\bregisterAPI\s*\(\s*(['\"`])([^'\"`\n]*)\1\s*,\s*")
_REQUIRE = re.compile(r"\brequire\s*\(\s*(['\"])([^'\"\n]*)\1\s*\)")
_BINDING = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\s*\(\s*(['\"])([^'\"\n]*)\2\s*\)")
_EXPORT = re.compile(r"\bmodule\.exports\s*=\s*")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def mask_comments(text: str) -> str:
    """Replace comments by spaces (newlines kept) so offsets and lines stay true."""
    out = list(text)
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c in "'\"`":
            quote = c
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            for j in range(i, end):
                out[j] = " "
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] not in "\r\n":
                    out[j] = " "
            i = end
            continue
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Registration:
    name: str
    span: Span
    handler_offset: int


def resolve_require(spec: str, from_file: str, files: Mapping[str, object]) -> str | None:
    """Resolve a require() spec the way the sandboxed loader does; None when it cannot."""
    if spec.startswith("/"):
        base = spec.lstrip("/")
    elif spec.startswith(("./", "../")) or spec in (".", ".."):
        base = posixpath.join(posixpath.dirname(from_file), spec)
    else:
        return None
    norm = posixpath.normpath(base)
    if norm == ".." or norm.startswith("../"):
        return None
    for candidate in (norm, norm + ".js", norm + ".json", norm + "/index.js", norm + "/index.json"):
        if candidate in files:
            return candidate
    return None


def scan_registrations(text: str) -> list[Registration]:
    return _Script(text).registrations()


class _Script:
    """One file, masked and indexed once: every question the checks ask of it is answered from
    tables built in one pass, so a file with n registrations is checked in time linear in n."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.masked = mask_comments(text)
        self._index: LineIndex | None = None
        self._functions: dict[str, re.Match[str]] | None = None
        self._assigns: dict[str, re.Match[str]] | None = None
        self._bindings: dict[str, str] | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def registrations(self) -> list[Registration]:
        return [
            Registration(m.group(2), self.index.span(m.start(2) - 1, m.end(2) + 1), m.end())
            for m in _REGISTER.finditer(self.masked)
        ]

    def binding(self, name: str) -> str | None:
        """The spec of the last ``const name = require('spec')``."""
        if self._bindings is None:
            self._bindings = {b.group(1): b.group(3) for b in _BINDING.finditer(self.masked)}
        return self._bindings.get(name)

    def function(self, name: str) -> re.Match[str] | None:
        """The first ``[async] function [*] name(`` declaration."""
        if self._functions is None:
            self._functions = {}
            for m in _FUNCTION_DECL.finditer(self.masked):
                self._functions.setdefault(m.group(2), m)
        return self._functions.get(name)

    def assignment(self, name: str) -> re.Match[str] | None:
        """The first ``const|let|var name =``."""
        if self._assigns is None:
            self._assigns = {}
            for m in _ASSIGN.finditer(self.masked):
                self._assigns.setdefault(m.group(1), m)
        return self._assigns.get(name)


_FUNCTION_DECL = re.compile(r"\b(async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(")
_ASSIGN = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*")


def check_scripts(
    files: Mapping[str, str],
    declared: Mapping[str, Span | None] | None,
    sink: DiagnosticSink,
) -> set[str]:
    """Check index.js and every .js in the skill; return the set of registered API names.

    ``declared`` is None when mcp.json is unusable: registrations are then not compared.
    """
    scripts: dict[str, _Script] = {}
    for path in sorted(p for p in files if p.endswith(".js")):
        scripts[path] = _Script(files[path])
        _check_requires(path, scripts[path], files, sink)
    index = scripts.get("index.js")
    if index is None:
        return set()
    registrations = index.registrations()
    if len(registrations) > MAX_APIS:
        sink.emit(
            "JS006",
            f"index.js registers {len(registrations)} APIs; mcp.json can declare at most {MAX_APIS}, "
            f"so only the first {MAX_APIS} registrations are checked",
            file="index.js",
            span=registrations[MAX_APIS].span,
        )
    names = {reg.name for reg in registrations}
    registered: dict[str, Registration] = {}
    for reg in registrations[:MAX_APIS]:
        if reg.name in registered:
            first = registered[reg.name].span
            sink.emit(
                "JS005",
                f'API "{reg.name}" is registered again (first at line {first.line}, column {first.column})',
                file="index.js",
                span=reg.span,
            )
        registered[reg.name] = reg
        if declared is not None and reg.name not in declared:
            sink.emit(
                "JS002",
                f'index.js registers API "{reg.name}", which mcp.json does not declare',
                file="index.js",
                span=reg.span,
                hint='declare it in mcp.json "apis" or remove the registration',
            )
        _check_handler_async(reg, index, files, scripts, sink)
    for name, span in (declared or {}).items():
        if name not in names:
            sink.emit(
                "JS001",
                f'API "{name}" is declared in mcp.json but index.js never registers it',
                file="mcp.json",
                span=span,
                hint=f"call skill.registerAPI('{name}', handler) in index.js",
            )
    return names


def _check_requires(path: str, script: _Script, files: Mapping[str, str], sink: DiagnosticSink) -> None:
    for m in _REQUIRE.finditer(script.masked):
        spec = m.group(2)
        if resolve_require(spec, path, files) is not None:
            continue
        if not spec.startswith((".", "/")):
            message = f"require('{spec}'): only relative paths inside the skill can be required"
        elif posixpath.normpath(posixpath.join(posixpath.dirname(path), spec)).startswith(".."):
            message = f"require('{spec}') escapes the skill folder"
        else:
            message = f"require('{spec}') does not resolve to a file in the skill"
        sink.emit("JS003", message, file=path, span=script.index.span(m.start(2) - 1, m.end(2) + 1))


def _check_handler_async(
    reg: Registration, index: _Script, files: Mapping[str, str], scripts: dict[str, _Script], sink: DiagnosticSink
) -> None:
    masked, at = index.masked, reg.handler_offset
    # Inline handler: registerAPI('x', async (args) => ...) or function (args) {...}
    verdict = _function_kind(masked, at)
    if verdict is not None:
        if verdict == "sync":
            sink.emit(
                "JS004",
                f'handler of API "{reg.name}" is not async',
                file="index.js",
                span=index.index.span(at, at + _first_word_len(masked, at)),
                hint="declare it `async function (args) {...}`",
            )
        return
    target: str | None = None
    req = _REQUIRE.match(masked, at)
    if req:
        target = resolve_require(req.group(2), "index.js", files)
    else:
        ident = _IDENT.match(masked, at)
        if ident:
            spec = index.binding(ident.group())
            if spec is not None:
                target = resolve_require(spec, "index.js", files)
            if target is None:
                _check_local_function(reg, ident.group(), index, "index.js", sink)
                return
    if target is None or not target.endswith(".js"):
        return
    _check_module_export(reg, target, scripts[target], sink)


def _check_module_export(reg: Registration, path: str, script: _Script, sink: DiagnosticSink) -> None:
    masked = script.masked
    # The last assignment to module.exports is the one that counts.
    m = None
    for found in _EXPORT.finditer(masked):
        m = found
    if m is None:
        return
    at = m.end()
    verdict = _function_kind(masked, at)
    if verdict == "sync":
        sink.emit(
            "JS004",
            f'handler of API "{reg.name}" exported by {path} is not async',
            file=path,
            span=script.index.span(at, at + _first_word_len(masked, at)),
            hint="export `async function (args) {...}`",
        )
    elif verdict is None:
        ident = _IDENT.match(masked, at)
        if ident:
            _check_local_function(reg, ident.group(), script, path, sink)


def _check_local_function(reg: Registration, name: str, script: _Script, path: str, sink: DiagnosticSink) -> None:
    decl = script.function(name)
    if decl:
        if not decl.group(1):
            sink.emit(
                "JS004",
                f'handler of API "{reg.name}" (function {name}) is not async',
                file=path,
                span=script.index.span(decl.start(), decl.end() - 1),
                hint=f"declare it `async function {name}(args) {{...}}`",
            )
        return
    assign = script.assignment(name)
    if assign and _function_kind(script.masked, assign.end()) == "sync":
        at = assign.end()
        sink.emit(
            "JS004",
            f'handler of API "{reg.name}" ({name}) is not async',
            file=path,
            span=script.index.span(at, at + _first_word_len(script.masked, at)),
        )


_ASYNC_FN = re.compile(r"async\b")
_SYNC_FN = re.compile(r"(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")


def _function_kind(text: str, at: int) -> str | None:
    """'async' or 'sync' when ``text`` has a function expression at ``at``, else None."""
    if _ASYNC_FN.match(text, at):
        return "async"
    if _SYNC_FN.match(text, at):
        return "sync"
    return None


_WORD = re.compile(r"[^\s(]+")


def _first_word_len(text: str, at: int) -> int:
    m = _WORD.match(text, at)
    return len(m.group()) if m else 1
