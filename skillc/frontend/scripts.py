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
    masked = mask_comments(text)
    index = LineIndex(text)
    return [
        Registration(m.group(2), index.span(m.start(2) - 1, m.end(2) + 1), m.end()) for m in _REGISTER.finditer(masked)
    ]


def check_scripts(
    files: Mapping[str, str],
    declared: Mapping[str, Span | None] | None,
    sink: DiagnosticSink,
) -> set[str]:
    """Check index.js and every .js in the skill; return the set of registered API names.

    ``declared`` is None when mcp.json is unusable: registrations are then not compared.
    """
    for path in sorted(p for p in files if p.endswith(".js")):
        _check_requires(path, files[path], files, sink)
    index = files.get("index.js")
    if index is None:
        return set()
    registrations = scan_registrations(index)
    registered: dict[str, Registration] = {}
    for reg in registrations:
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
        _check_handler_async(reg, index, files, sink)
    for name, span in (declared or {}).items():
        if name not in registered:
            sink.emit(
                "JS001",
                f'API "{name}" is declared in mcp.json but index.js never registers it',
                file="mcp.json",
                span=span,
                hint=f"call skill.registerAPI('{name}', handler) in index.js",
            )
    return set(registered)


def _check_requires(path: str, text: str, files: Mapping[str, str], sink: DiagnosticSink) -> None:
    masked = mask_comments(text)
    index: LineIndex | None = None
    for m in _REQUIRE.finditer(masked):
        spec = m.group(2)
        if resolve_require(spec, path, files) is not None:
            continue
        index = index or LineIndex(text)
        if not spec.startswith((".", "/")):
            message = f"require('{spec}'): only relative paths inside the skill can be required"
        elif posixpath.normpath(posixpath.join(posixpath.dirname(path), spec)).startswith(".."):
            message = f"require('{spec}') escapes the skill folder"
        else:
            message = f"require('{spec}') does not resolve to a file in the skill"
        sink.emit("JS003", message, file=path, span=index.span(m.start(2) - 1, m.end(2) + 1))


def _check_handler_async(reg: Registration, index_text: str, files: Mapping[str, str], sink: DiagnosticSink) -> None:
    masked = mask_comments(index_text)
    rest = masked[reg.handler_offset :]
    # Inline handler: registerAPI('x', async (args) => ...) or function (args) {...}
    verdict = _function_kind(rest)
    if verdict is not None:
        if verdict == "sync":
            sink.emit(
                "JS004",
                f'handler of API "{reg.name}" is not async',
                file="index.js",
                span=LineIndex(index_text).span(reg.handler_offset, reg.handler_offset + _first_word_len(rest)),
                hint="declare it `async function (args) {...}`",
            )
        return
    target: str | None = None
    req = _REQUIRE.match(rest)
    if req:
        target = resolve_require(req.group(2), "index.js", files)
    else:
        ident = _IDENT.match(rest)
        if ident:
            for b in _BINDING.finditer(masked):
                if b.group(1) == ident.group():
                    target = resolve_require(b.group(3), "index.js", files)
            if target is None:
                _check_local_function(reg, ident.group(), index_text, "index.js", sink)
                return
    if target is None or not target.endswith(".js"):
        return
    _check_module_export(reg, target, files[target], sink)


def _check_module_export(reg: Registration, path: str, text: str, sink: DiagnosticSink) -> None:
    masked = mask_comments(text)
    # The last assignment to module.exports is the one that counts.
    m = None
    for found in _EXPORT.finditer(masked):
        m = found
    if m is None:
        return
    rest = masked[m.end() :]
    verdict = _function_kind(rest)
    if verdict == "sync":
        sink.emit(
            "JS004",
            f'handler of API "{reg.name}" exported by {path} is not async',
            file=path,
            span=LineIndex(text).span(m.end(), m.end() + _first_word_len(rest)),
            hint="export `async function (args) {...}`",
        )
    elif verdict is None:
        ident = _IDENT.match(rest)
        if ident:
            _check_local_function(reg, ident.group(), text, path, sink)


def _check_local_function(reg: Registration, name: str, text: str, path: str, sink: DiagnosticSink) -> None:
    masked = mask_comments(text)
    decl = re.search(rf"\b(async\s+)?function\s*\*?\s*{re.escape(name)}\s*\(", masked)
    if decl:
        if not decl.group(1):
            sink.emit(
                "JS004",
                f'handler of API "{reg.name}" (function {name}) is not async',
                file=path,
                span=LineIndex(text).span(decl.start(), decl.end() - 1),
                hint=f"declare it `async function {name}(args) {{...}}`",
            )
        return
    assign = re.search(rf"\b(?:const|let|var)\s+{re.escape(name)}\s*=\s*", masked)
    if assign and _function_kind(masked[assign.end() :]) == "sync":
        sink.emit(
            "JS004",
            f'handler of API "{reg.name}" ({name}) is not async',
            file=path,
            span=LineIndex(text).span(assign.end(), assign.end() + _first_word_len(masked[assign.end() :])),
        )


_ASYNC_FN = re.compile(r"async\b")
_SYNC_FN = re.compile(r"(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")


def _function_kind(rest: str) -> str | None:
    """'async' or 'sync' when ``rest`` starts with a function expression, else None."""
    if _ASYNC_FN.match(rest):
        return "async"
    if _SYNC_FN.match(rest):
        return "sync"
    return None


def _first_word_len(rest: str) -> int:
    m = re.match(r"[^\s(]+", rest)
    return len(m.group()) if m else 1
