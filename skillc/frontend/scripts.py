"""A static scan of a skill's JavaScript: registered APIs, require() paths, async handlers.

This is a scan, not a parse: it masks comments and then matches the few call shapes the
AI-mode runtime defines. The runtime loader verifies the same facts by executing index.js.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.manifest import MAX_APIS
from skillc.frontend.modpaths import REFUSALS, CodeRoot
from skillc.frontend.source import LineIndex

# The call shapes the static scans match (consistency.py reads the same ones).
REGISTER = re.compile(r"\bregisterAPI\s*\(\s*(['\"`])([^'\"`\n]*)\1\s*,\s*")
REQUIRE = re.compile(r"\brequire\s*\(\s*(['\"])([^'\"\n]*)\1\s*\)")
# const x = require('spec'), const x = require('spec').member, const { a, b: c } = require('spec')
_BINDING = re.compile(
    r"\b(?:const|let|var)\s+(?:([A-Za-z_$][\w$]*)|\{([^{}]*)\})\s*=\s*require\s*\(\s*(['\"])([^'\"\n]*)\3\s*\)"
    r"(?:\s*\.\s*([A-Za-z_$][\w$]*))?"
)
_DESTRUCTURED = re.compile(r"^\s*([A-Za-z_$][\w$]*)\s*(?::\s*([A-Za-z_$][\w$]*))?\s*(?:=[^,]*)?$")
# registerAPI( whose first argument is not a literal name: a loop or a table registers the APIs
DYNAMIC_REGISTER = re.compile(r"\bregisterAPI\s*\(\s*(?=[^\s'\"`)])")
_ANY_REQUIRE = re.compile(r"\brequire\s*\(")
_LEAD = re.compile(r"\s*(['\"`])([^'\"`\n$]*)(?:\1\s*\+|\$\{)")
_EXPORT = re.compile(r"\bmodule\.exports\s*=\s*")
IDENT = re.compile(r"[A-Za-z_$][\w$]*")


# What ends plain code: a quote or a comment; inside a quote, a body runs to its closing quote (a
# backslash escapes the next character, a newline too).
_CODE_STOP = re.compile(r"['\"`]|//|/\*")
_QUOTED = {q: re.compile(rf"(?:[^{q}\\]|\\[\s\S]?)*") for q in "'\"`"}
_NOT_EOL = re.compile(r"[^\r\n]")


def mask_comments(text: str) -> str:
    """Replace comments by spaces (newlines kept) so offsets and lines stay true."""
    # Jumps from one quote or comment to the next with regexes: the files are scanned several
    # times per check, and a loop over characters cost most of it.
    out: list[str] = []
    i = done = 0
    n = len(text)
    while i < n:
        m = _CODE_STOP.search(text, i)
        if m is None:
            break
        start = m.start()
        token = m.group()
        if token in ("//", "/*"):
            if token == "//":
                end = text.find("\n", start)
                end = n if end < 0 else end
                blank = " " * (end - start)
            else:
                end = text.find("*/", start + 2)
                end = n if end < 0 else end + 2
                blank = _NOT_EOL.sub(" ", text[start:end])
            out += (text[done:start], blank)
            i = done = end
            continue
        body = _QUOTED[token].match(text, start + 1)
        assert body is not None  # the pattern matches the empty string
        i = body.end() + 1  # past the closing quote (or past the end: the string is unclosed)
    out.append(text[done:])
    return "".join(out)


@dataclass(frozen=True)
class Required:
    """What a local name is bound to by a require(): the module ``spec`` names, or one ``member``
    of its exports (``const { member } = require(spec)``, ``require(spec).member``)."""

    spec: str
    member: str | None = None


def require_bindings(masked: str) -> dict[str, Required]:
    """Every local name a ``const|let|var`` binds to a require() in a comment-masked text (the last
    binding of a name wins, as the last assignment does)."""
    out: dict[str, Required] = {}
    for m in _BINDING.finditer(masked):
        spec = m.group(4)
        if m.group(1):
            out[m.group(1)] = Required(spec, m.group(5))
            continue
        if m.group(5):
            continue  # const { a } = require(spec).member: a member of a member, not followed
        for part in m.group(2).split(","):
            found = _DESTRUCTURED.match(part)
            if found:  # { a }, { a: b }, { a = fallback }; a rest element (...r) is not matched
                out[found.group(2) or found.group(1)] = Required(spec, found.group(1))
    return out


@dataclass(frozen=True)
class Registration:
    name: str
    span: Span
    handler_offset: int


def required_specs(text: str) -> tuple[list[str], list[str]]:
    """The literal require() specs of a file, and for each computed one (``require('./apis/' +
    name)``) its literal lead ('' when it has none)."""
    masked = mask_comments(text)
    specs: list[str] = []
    dynamic: list[str] = []
    for m in _ANY_REQUIRE.finditer(masked):
        if masked[m.start() - 1 : m.start()] in (".", "$") or masked[m.start() - 1 : m.start()].isalnum():
            continue  # obj.require(...), myrequire(...)
        literal = REQUIRE.match(masked, m.start())
        if literal:
            specs.append(literal.group(2))
            continue
        lead = _LEAD.match(masked, m.end())
        dynamic.append(lead.group(2) if lead else "")
    return specs, dynamic


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
        self._bindings: dict[str, Required] | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def registrations(self) -> list[Registration]:
        return [
            Registration(m.group(2), self.index.span(m.start(2) - 1, m.end(2) + 1), m.end())
            for m in REGISTER.finditer(self.masked)
        ]

    def binding(self, name: str) -> Required | None:
        """What the last require() binding of ``name`` names."""
        if self._bindings is None:
            self._bindings = require_bindings(self.masked)
        return self._bindings.get(name)

    def dynamic_registrations(self) -> list[int]:
        """Offsets of the registerAPI calls whose name is computed (a loop variable, a key)."""
        return [m.start() for m in DYNAMIC_REGISTER.finditer(self.masked)]

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
    *,
    code: Collection[str] | None = None,
    root: CodeRoot | None = None,
) -> set[str]:
    """Check index.js and every .js of the skill code; return the set of registered API names.

    ``declared`` is None when mcp.json is unusable: registrations are then not compared.
    ``code`` names the skill code (default: every .js); ``root`` is how far require() may reach.
    """
    root = root or CodeRoot()
    scripts: dict[str, _Script] = {}
    for path in sorted(p for p in (files if code is None else code) if p.endswith(".js") and p in files):
        scripts[path] = _Script(files[path])
        _check_requires(path, scripts[path], files, root, sink)
        _check_get_app(path, scripts[path], sink)
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
        _check_handler_async(reg, index, files, scripts, root, sink)
    unregistered = [name for name in (declared or {}) if name not in names]
    computed = index.dynamic_registrations()
    if computed:
        # A loop or a table registers APIs under names no scan can read: a declared API missing
        # from the literal registrations may well be registered there (the loader checks it when
        # index.js runs, RUN002), so it is not reported as unregistered.
        if unregistered:
            listed = ", ".join(f'"{n}"' for n in unregistered)
            others = [index.index.loc(at)[0] for at in computed[1:]]
            also = f" (also at line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
            sink.emit(
                "JS012",
                f"registerAPI is called with a computed name{also}, so whether index.js registers {listed} "
                "(declared in mcp.json) could not be verified statically",
                file="index.js",
                span=index.index.span(computed[0], computed[0] + len("registerAPI")),
                hint="`skillc call` or `skillc serve` verifies the registrations when index.js runs",
            )
        return names
    for name in unregistered:
        span = (declared or {}).get(name)
        sink.emit(
            "JS001",
            f'API "{name}" is declared in mcp.json but index.js never registers it',
            file="mcp.json",
            span=span,
            hint=f"call skill.registerAPI('{name}', handler) in index.js",
        )
    return names


def _check_requires(path: str, script: _Script, files: Mapping[str, str], root: CodeRoot, sink: DiagnosticSink) -> None:
    for m in REQUIRE.finditer(script.masked):
        spec = m.group(2)
        hit = root.resolve(spec, path, files)
        if hit not in REFUSALS:
            continue
        hint = None
        if hit == "bare":
            message = f"require('{spec}'): only relative paths inside the skill can be required"
            if spec.startswith("@/"):
                hint = "WeChat refuses '@/' aliases in skills: require the file by its relative path"
        elif hit == "escapes":
            where = "the skill folder" if not root.is_project else root.label
            message = f"require('{spec}') escapes {where}"
            if not root.is_project:
                hint = (
                    "inside a mini-program project a skill may require files under its subpackage root "
                    "(such as ../_shared/): skillc finds the project from app.json above the skill folder"
                )
            else:
                hint = f"move the shared code under {root.label} (for example into _shared/)"
        else:
            message = f"require('{spec}') does not resolve to a file in the skill"
        sink.emit("JS003", message, file=path, span=script.index.span(m.start(2) - 1, m.end(2) + 1), hint=hint)


_GET_APP = re.compile(r"(?<![\w$.])getApp\s*\(")


def _check_get_app(path: str, script: _Script, sink: DiagnosticSink) -> None:
    for m in _GET_APP.finditer(script.masked):
        sink.emit(
            "JS009",
            "getApp() is not available to a skill: skills run in an independent subpackage, without the app",
            file=path,
            span=script.index.span(m.start(), m.start() + len("getApp")),
            hint="pass what the skill needs through its arguments or wx storage",
        )


def _check_handler_async(
    reg: Registration,
    index: _Script,
    files: Mapping[str, str],
    scripts: dict[str, _Script],
    root: CodeRoot,
    sink: DiagnosticSink,
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
    member: str | None = None
    req = REQUIRE.match(masked, at)
    if req:
        target = _found(root.resolve(req.group(2), "index.js", files))
        member = _member_after(masked, req.end())
        if member is None and _is_call_or_member(masked, req.end()):
            return  # require('./x')(...): whatever the call returns is not provably sync
    else:
        ident = IDENT.match(masked, at)
        if ident:
            bound = index.binding(ident.group())
            member = _member_after(masked, ident.end())
            if bound is not None:
                target = _found(root.resolve(bound.spec, "index.js", files))
                if bound.member is not None:
                    member = bound.member if member is None else None
            if _is_call(masked, ident.end()) or (member is not None and bound is None):
                # makeHandler('x'), wrap(fn), handlers.x: the handler is what a call or a property
                # read gives, which a scan cannot judge; only a provably sync function is reported
                return
            if target is None:
                if bound is None:
                    _check_local_function(reg, ident.group(), index, "index.js", sink)
                return
    if target is None or not target.endswith(".js") or target not in scripts:
        return
    if member is not None:
        _check_module_member(reg, member, target, scripts[target], sink)
    else:
        _check_module_export(reg, target, scripts[target], sink)


_CALL_AFTER = re.compile(r"\s*\(")
_MEMBER_AFTER = re.compile(r"\s*\.\s*([A-Za-z_$][\w$]*)\s*(?![\w$(.\[])")


def _is_call(text: str, at: int) -> bool:
    return _CALL_AFTER.match(text, at) is not None


def _is_call_or_member(text: str, at: int) -> bool:
    return re.compile(r"\s*[(.\[]").match(text, at) is not None


def _member_after(text: str, at: int) -> str | None:
    """``x`` of a plain ``.x`` read after ``at`` (not ``.x(``, ``.x.y`` or ``.x[``)."""
    m = _MEMBER_AFTER.match(text, at)
    return m.group(1) if m else None


def _check_module_member(reg: Registration, member: str, path: str, script: _Script, sink: DiagnosticSink) -> None:
    """The handler is one export of a module: ``exports.member = ...`` or a function of that
    name the module exports (``module.exports = { member }``)."""
    masked = script.masked
    assigned = None
    for m in re.finditer(rf"\b(?:module\s*\.\s*)?exports\s*\.\s*{re.escape(member)}\s*=(?!=)\s*", masked):
        assigned = m  # the last assignment counts
    if assigned is not None:
        at = assigned.end()
        if _function_kind(masked, at) == "sync":
            sink.emit(
                "JS004",
                f'handler of API "{reg.name}" exported by {path} as {member} is not async',
                file=path,
                span=script.index.span(at, at + _first_word_len(masked, at)),
                hint=f"export `async function {member}(args) {{...}}`",
            )
        elif (
            _function_kind(masked, at) is None
            and (ident := IDENT.match(masked, at))
            and not _is_call(masked, ident.end())
        ):
            _check_local_function(reg, ident.group(), script, path, sink)
        return
    _check_local_function(reg, member, script, path, sink)


def _found(hit: str) -> str | None:
    return None if hit in REFUSALS else hit


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
        ident = IDENT.match(masked, at)
        if ident and not _is_call_or_member(masked, ident.end()):  # wrap(fn): what a call gives is unknown
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
