"""Cross-file rules of WeChat's validator: what an API returns, what its card reads, what a card
binds, what app.json declares (V009, V010, V011, V016 and the project limits of V020).

Like scripts.py this is a scan, not a parse: comments are masked, then the few shapes the rules
are about (``structuredContent: {...}``, ``result.structuredContent.x``, ``setData({...})``,
``data: {...}``) are matched and their object literals read key by key. Where a shape is not a
literal (a variable, a spread, a computed key) the rule stays silent rather than guess.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.jsonsrc import JArray, JNode, JObject, JScalar, parse_json
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.modpaths import REFUSALS, CodeRoot
from skillc.frontend.scripts import IDENT, REGISTER, REQUIRE, Required, mask_comments, require_bindings
from skillc.frontend.source import LineIndex

AGENT_INSTRUCTION_LIMIT = 10000
PAGE_METADATA_LIMIT = 8000
MAX_PROJECT_SKILLS = 30
# Modules followed from a handler through require(); a handler's code is rarely deeper than this.
_MAX_MODULES = 32

_STRUCTURED = re.compile(r"\bstructuredContent\s*(?::|=(?!=))\s*")
_READ = re.compile(r"\bstructuredContent\s*\??\.\s*([A-Za-z_$][\w$]*)")
_DESTRUCTURE = re.compile(r"\b(?:const|let|var)\s*\{([^{}]*)\}\s*=\s*[\w$.?]*\bstructuredContent\b(?!\s*\??\.)")
# A function written in place: async ..., function ..., (args) => ..., args => ...
_INLINE = re.compile(r"(?:async\b|function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
_DECLARATION = re.compile(
    r"\b(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*="
)
_SET_DATA = re.compile(r"\.setData\s*\(\s*")
_COMPONENT = re.compile(r"\bComponent\s*\(\s*\{")


class PackageView(Protocol):
    """What these rules read of a SkillPackage (structural: the package module imports nothing
    from here, and tests may pass a bare stand-in)."""

    sources: dict[str, str]
    code_root: CodeRoot


def _resolve(root: CodeRoot, spec: str, from_file: str, sources: Mapping[str, str]) -> str | None:
    hit = root.resolve(spec, from_file, sources)
    return None if hit in REFUSALS else hit


# -- JavaScript facts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """One key of an object literal, at ``start``..``end`` of its file."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class ObjectKeys:
    """The top-level keys of an object literal. ``complete`` is False when a spread or a computed
    key may add keys no scan can name."""

    keys: tuple[Key, ...]
    complete: bool
    end: int  # offset just past the closing brace (or the end of the text)


def _skip_string(text: str, i: int) -> int:
    """``text[i]`` opens a string or template literal; the offset after it closes."""
    quote, n = text[i], len(text)
    i += 1
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        if quote == "`" and text.startswith("${", i):
            i = _skip_balanced(text, i + 1)
            continue
        if c == "\n" and quote != "`":
            return i
        i += 1
    return n


def _skip_balanced(text: str, i: int) -> int:
    """``text[i]`` is an opening bracket; the offset after its partner."""
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            i = _skip_string(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _skip_value(text: str, i: int) -> int:
    """From ``i``, the offset of the ``,`` or closing brace that ends an object entry's value."""
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            i = _skip_string(text, i)
        elif c in "([{":
            i = _skip_balanced(text, i)
        elif c in ",}":
            return i
        else:
            i += 1
    return n


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i].isspace():
        i += 1
    return i


def object_keys(text: str, brace: int) -> ObjectKeys:
    """The top-level keys of the object literal whose ``{`` is at ``text[brace]``.

    ``text`` should be comment-masked. Nested objects are skipped whole: only their parent's
    keys are keys of this object (the official V009 reads nested keys too, which is its false
    positive).
    """
    keys: list[Key] = []
    complete = True
    i, n = brace + 1, len(text)
    while i < n:
        i = _skip_ws(text, i)
        if i >= n:
            break
        c = text[i]
        if c == "}":
            return ObjectKeys(tuple(keys), complete, i + 1)
        if c == ",":
            i += 1
            continue
        if text.startswith("...", i):
            complete = False
            i = _skip_value(text, i + 3)
            continue
        if c == "[":  # a computed key
            complete = False
            i = _skip_ws(text, _skip_balanced(text, i))
            i = _skip_value(text, i + 1) if i < n and text[i] == ":" else i
            continue
        start = i
        if c in "'\"":
            i = _skip_string(text, i)
            name = text[start + 1 : i - 1]
        else:
            m = IDENT.match(text, i) or re.compile(r"\d+").match(text, i)
            if m is None:  # not an object literal we can read
                return ObjectKeys(tuple(keys), False, _skip_balanced(text, brace))
            i = m.end()
            name = m.group()
            if name in ("get", "set", "async") and IDENT.match(text, _skip_ws(text, i)):
                start = _skip_ws(text, i)
                m = IDENT.match(text, start)
                assert m is not None
                i, name = m.end(), m.group()
        keys.append(Key(name, start, i))
        i = _skip_ws(text, i)
        if i < n and text[i] == "(":  # a method: name() {...}
            i = _skip_balanced(text, i)
            i = _skip_ws(text, i)
            if i < n and text[i] == "{":
                i = _skip_balanced(text, i)
            continue
        if i < n and text[i] == ":":
            i = _skip_value(text, i + 1)
    return ObjectKeys(tuple(keys), False, n)


@dataclass
class Script:
    """One JavaScript file, masked and indexed once."""

    path: str
    text: str
    masked: str = ""
    index: LineIndex = field(init=False)

    def __post_init__(self) -> None:
        self.masked = mask_comments(self.text)
        self.index = LineIndex(self.text)

    def span(self, start: int, end: int) -> Span:
        return self.index.span(start, end)

    @cached_property
    def registrations(self) -> list[re.Match[str]]:
        return list(REGISTER.finditer(self.masked))

    @cached_property
    def registered_at(self) -> dict[str, int]:
        """The position in :attr:`registrations` of each API name's first registration, so that
        finding one API's handler costs the same with 5 or 50 000 registrations."""
        table: dict[str, int] = {}
        for n, reg in enumerate(self.registrations):
            table.setdefault(reg.group(2), n)
        return table

    @cached_property
    def declarations(self) -> dict[str, int]:
        """Where each ``function name(`` or ``const|let|var name =`` first appears."""
        table: dict[str, int] = {}
        for m in _DECLARATION.finditer(self.masked):
            table.setdefault(m.group(1) or m.group(2), m.start())
        return table

    @cached_property
    def bindings(self) -> dict[str, Required]:
        """What each name a require() binds names: ``const name = require('spec')``, a destructured
        ``const { name } = require('spec')`` or ``require('spec').name`` (the last binding wins)."""
        return require_bindings(self.masked)


@dataclass(frozen=True)
class Segment:
    """A stretch of one file that belongs to an API's code: the whole file, or (for a handler
    written inline in index.js) the text from its registerAPI to the next one."""

    script: Script
    start: int
    end: int
    # One export of a module: its code is the stretch, but the module's requires (at its top,
    # shared by its exports) are followed from the whole file.
    module_requires: bool = False


def _script(sources: Mapping[str, str], path: str, cache: dict[str, Script]) -> Script | None:
    if path not in cache:
        text = sources.get(path)
        if text is None:
            return None
        cache[path] = Script(path, text)
    return cache[path]


def api_code(
    sources: Mapping[str, str], name: str, root: CodeRoot, cache: dict[str, Script] | None = None
) -> list[Segment]:
    """The code an API runs: its handler (inline, a local function or a required module) and every
    module that code requires, transitively. Empty when index.js does not register ``name``."""
    cache = {} if cache is None else cache
    index = _script(sources, "index.js", cache)
    if index is None:
        return []
    regs = index.registrations
    n = index.registered_at.get(name)
    if n is None:
        return []
    reg = regs[n]
    end = regs[n + 1].start() if n + 1 < len(regs) else len(index.masked)
    at = reg.end()
    req = REQUIRE.match(index.masked, at)
    target: str | None = None
    member: str | None = None
    if req:
        target = _resolve(root, req.group(2), "index.js", sources)
        member = _member_read(index.masked, req.end())
    else:
        ident = IDENT.match(index.masked, at)
        if ident and not _INLINE.match(index.masked, at):
            bound = index.bindings.get(ident.group())
            if bound is not None:
                target = _resolve(root, bound.spec, "index.js", sources)
                member = bound.member or _member_read(index.masked, ident.end())
            else:  # a function of index.js itself
                return _with_requires([_local_function(index, ident.group())], sources, root, cache)
    if target is None or not target.endswith(".js"):
        return _with_requires([Segment(index, reg.start(), end)], sources, root, cache)
    script = _script(sources, target, cache)
    if script is None:
        return []
    # One export of a module that exports several handlers: only that export's code is the API's.
    whole = Segment(script, 0, len(script.masked))
    segment = _exported(script, member) if member is not None else whole
    return _with_requires([segment or whole], sources, root, cache)


_MEMBER_READ = re.compile(r"\s*\.\s*([A-Za-z_$][\w$]*)")


def _member_read(text: str, at: int) -> str | None:
    m = _MEMBER_READ.match(text, at)
    return m.group(1) if m else None


def _exported(script: Script, member: str) -> Segment | None:
    """The stretch of ``script`` that defines its export ``member``: ``exports.member = ...`` up to
    the next top-level statement, else the local function or binding of that name. None when the
    module defines neither (its whole text is then the API's code)."""
    found = re.search(rf"^(?:module\s*\.\s*)?exports\s*\.\s*{re.escape(member)}\s*=(?!=)", script.masked, re.M)
    if found is not None:
        seg = _stretch(script, found.start())
    elif member in script.declarations:
        seg = _local_function(script, member)
    else:
        return None
    return Segment(script, seg.start, seg.end, module_requires=True)


# Where a top-level statement starts: the end of the local function before it.
_TOP_LEVEL = re.compile(
    r"^(?:async\s+function\b|function\b|const\s|let\s|var\s|\S*registerAPI\b|\S+\.use\b|(?:module\s*\.\s*)?exports\b)",
    re.M,
)


def _local_function(script: Script, name: str) -> Segment:
    """The stretch of a file that declares the local function ``name``: from its declaration to
    the next top-level statement (the whole file when no declaration is found)."""
    at = script.declarations.get(name)
    if at is None:
        return Segment(script, 0, len(script.masked))
    return _stretch(script, at)


def _stretch(script: Script, at: int) -> Segment:
    """From ``at`` to the next top-level statement after its first line."""
    line_end = script.masked.find("\n", at)
    following = _TOP_LEVEL.search(script.masked, line_end + 1) if line_end >= 0 else None
    return Segment(script, at, following.start() if following else len(script.masked))


def _with_requires(
    segments: list[Segment], sources: Mapping[str, str], root: CodeRoot, cache: dict[str, Script]
) -> list[Segment]:
    seen = {s.script.path for s in segments if s.start == 0}
    queue = list(segments)
    while queue and len(segments) < _MAX_MODULES:
        seg = queue.pop(0)
        start, end = (0, len(seg.script.masked)) if seg.module_requires else (seg.start, seg.end)
        for m in REQUIRE.finditer(seg.script.masked, start, end):
            target = _resolve(root, m.group(2), seg.script.path, sources)
            if target is None or not target.endswith(".js") or target in seen:
                continue
            seen.add(target)
            script = _script(sources, target, cache)
            if script is not None:
                new = Segment(script, 0, len(script.masked))
                segments.append(new)
                queue.append(new)
    return segments


@dataclass(frozen=True)
class Returned:
    """What an API's code returns as structuredContent: the keys of each literal, with where."""

    literals: tuple[tuple[Script, ObjectKeys], ...]
    opaque: bool  # some structuredContent is not an object literal (a variable, a call)


def returned_structured(segments: list[Segment]) -> Returned:
    literals: list[tuple[Script, ObjectKeys]] = []
    opaque = False
    for seg in segments:
        text = seg.script.masked
        for m in _STRUCTURED.finditer(text, seg.start, seg.end):
            at = m.end()
            if at < len(text) and text[at] == "{":
                literals.append((seg.script, object_keys(text, at)))
            else:
                opaque = True
    return Returned(tuple(literals), opaque or any(not keys.complete for _, keys in literals))


def _schema_properties(spec: ApiSpec) -> set[str] | None:
    schema = spec.output_schema
    props = schema.get("properties") if isinstance(schema, dict) else None
    return set(props) if isinstance(props, dict) else None


# -- V009 / V010 --------------------------------------------------------------------------------


def check_structured_content(
    pkg: PackageView, apis: list[ApiSpec], sink: DiagnosticSink, cache: dict[str, Script] | None = None
) -> None:
    """V009: top-level structuredContent keys an API returns are in its outputSchema.properties.
    V010: a card's reads of ``structuredContent.X`` name something its API returns or declares."""
    cache = {} if cache is None else cache
    returned: dict[str, Returned] = {}
    for spec in apis:
        ret = returned[spec.name] = returned_structured(api_code(pkg.sources, spec.name, pkg.code_root, cache))
        props = _schema_properties(spec)
        if props is None:
            continue
        for script, keys in ret.literals:
            for key in keys.keys:
                if key.name in props:
                    continue
                listed = ", ".join(sorted(props)) or "none"
                sink.emit(
                    "CON001",
                    f'{spec.name} returns structuredContent key "{key.name}", which its outputSchema.properties '
                    f"does not declare (declared: {listed})",
                    file=script.path,
                    span=script.span(key.start, key.end),
                    hint=f'declare "{key.name}" in outputSchema.properties of {spec.name}, or stop returning it',
                )
    by_component: dict[str, list[ApiSpec]] = {}
    for spec in apis:
        if spec.component_path:
            by_component.setdefault(spec.component_path, []).append(spec)
    for path, bound in sorted(by_component.items()):
        known: set[str] = set()
        unknowable = False
        for spec in bound:
            props = _schema_properties(spec)
            ret = returned[spec.name]
            known |= props or set()
            known |= {k.name for _, keys in ret.literals for k in keys.keys}
            if props is None and (ret.opaque or not ret.literals):
                unknowable = True
        if unknowable:
            continue
        file = posixpath.join(posixpath.dirname(path), "index.js")
        card = _script(pkg.sources, file, cache)
        if card is None:
            continue
        names = " / ".join(s.name for s in bound)
        for field_name, start, end in _structured_reads(card):
            if field_name in known:
                continue
            sink.emit(
                "CON002",
                f"the card reads result.structuredContent.{field_name}, which {names} neither returns nor declares "
                f"in outputSchema (known: {', '.join(sorted(known)) or 'none'})",
                file=file,
                span=card.span(start, end),
                hint=f'return "{field_name}" in structuredContent of {names}, or declare it in its outputSchema',
            )


def _structured_reads(script: Script) -> Iterator[tuple[str, int, int]]:
    for m in _READ.finditer(script.masked):
        yield m.group(1), m.start(1), m.end(1)
    for m in _DESTRUCTURE.finditer(script.masked):
        base = m.start(1)
        for part in re.finditer(r"(?:^|,)\s*([A-Za-z_$][\w$]*)", m.group(1)):
            yield part.group(1), base + part.start(1), base + part.end(1)


# -- V011 ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DataFacts:
    """Keys a component's JS defines: data, properties and setData, each with where."""

    defined: dict[str, tuple[int, int]]
    set_keys: list[Key]
    complete: bool


def _root(name: str) -> str:
    return re.split(r"[.\[]", name, maxsplit=1)[0]


def _data_facts(script: Script) -> _DataFacts:
    text = script.masked
    defined: dict[str, tuple[int, int]] = {}
    complete = True
    component = _COMPONENT.search(text)
    if component is None:  # no Component({...}) literal: what the card defines is unknown
        return _DataFacts({}, [], False)
    options = object_keys(text, component.end() - 1)
    # behaviors mix in data no scan of this file sees
    complete = options.complete and not any(k.name == "behaviors" for k in options.keys)
    for key in options.keys:
        if key.name not in ("data", "properties"):
            continue
        at = _skip_ws(text, key.end)
        at = _skip_ws(text, at + 1) if at < len(text) and text[at] == ":" else at
        if at < len(text) and text[at] == "{":
            keys = object_keys(text, at)
            complete = complete and keys.complete
            for k in keys.keys:
                defined.setdefault(k.name, (k.start, k.end))
        else:
            complete = False
    set_keys: list[Key] = []
    for m in _SET_DATA.finditer(text):
        if m.end() < len(text) and text[m.end()] == "{":
            keys = object_keys(text, m.end())
            complete = complete and keys.complete
            set_keys += [Key(_root(k.name), k.start, k.end) for k in keys.keys]
        else:
            complete = False
    return _DataFacts(defined, set_keys, complete)


@dataclass(frozen=True)
class Binding:
    root: str
    file: str
    span: Span


def wxml_bindings(sources: Mapping[str, str], file: str) -> tuple[list[Binding], set[str]]:
    """The root names the ``{{ }}`` of one WXML file read, and the names its scopes declare
    (wx:for-item / wx:for-index, item and index, wxs modules). Template definitions are skipped:
    their data is the caller's ``data=``, not the component's."""
    from skillc.frontend.expr import dependencies, parse_expression
    from skillc.frontend.expr.deps import called_names
    from skillc.frontend.wxml import nodes as wx
    from skillc.frontend.wxml.parser import parse_wxml

    quiet = DiagnosticSink()  # syntax errors are reported by the template check
    doc = parse_wxml(sources[file], file=file, sink=quiet)
    found: list[Binding] = []
    scoped = {"item", "index"}

    def read(part: wx.Part, object_form: bool = False) -> None:
        if isinstance(part, str):
            return
        expr = parse_expression(
            part.source,
            file=file,
            line=part.loc.line,
            column=part.source_column,
            sink=quiet,
            object_form=object_form,
        )
        if expr is None:
            return
        called = called_names(expr)  # a called name is never read (EXPR006 reports the call)
        for path in sorted(dependencies(expr), key=str):
            if path and isinstance(path[0], str) and not (len(path) == 1 and path[0] in called):
                found.append(Binding(path[0], file, part.loc.span()))

    def visit(nodes: list[wx.Node]) -> None:
        for node in nodes:
            if isinstance(node, wx.Wxs):
                module = node.attribute("module")
                if module is not None and module.raw:
                    scoped.add(module.raw)
            elif isinstance(node, wx.Text):
                for part in node.parts:
                    read(part)
            elif isinstance(node, wx.Element):
                if node.tag == "template" and node.attribute("name") is not None:
                    continue
                for attr in node.attributes:
                    if attr.name in ("wx:for-item", "wx:for-index") and attr.raw:
                        scoped.add(attr.raw.strip())
                    if attr.name == "wx:key" or attr.value is None:
                        continue
                    for part in attr.value:
                        read(part, object_form=node.tag == "template" and attr.name == "data")
                visit(node.children)

    visit(doc.children)
    return found, scoped


def check_bindings(pkg: PackageView, component_dirs: list[str], sink: DiagnosticSink) -> None:
    """V011, both ways, as warnings: a binding root nothing defines; a setData key nothing binds."""
    for folder in component_dirs:
        js_file, wxml_file = f"{folder}/index.js", f"{folder}/index.wxml"
        if js_file not in pkg.sources or wxml_file not in pkg.sources:
            continue
        script = Script(js_file, pkg.sources[js_file])
        facts = _data_facts(script)
        bindings: list[Binding] = []
        scoped: set[str] = set()
        for file in sorted(f for f in pkg.sources if f.startswith(folder + "/") and f.endswith(".wxml")):
            found, names = wxml_bindings(pkg.sources, file)
            bindings += found
            scoped |= names
        defined = set(facts.defined) | {k.name for k in facts.set_keys}
        if facts.complete:
            reported: set[tuple[str, str]] = set()
            for b in bindings:
                if b.root in defined or b.root in scoped or (b.file, b.root) in reported:
                    continue
                reported.add((b.file, b.root))
                sink.emit(
                    "CON003",
                    f'"{b.root}" is bound in {b.file} but never set in data, properties or setData of {js_file}',
                    file=b.file,
                    span=b.span,
                    hint=f"give it a default in data: {{ {b.root}: ... }}, or set it with this.setData",
                )
        bound = {b.root for b in bindings}
        seen: set[str] = set()
        for key in facts.set_keys:
            if key.name in bound or key.name in seen:
                continue
            seen.add(key.name)
            sink.emit(
                "CON004",
                f'setData key "{key.name}" is never bound in {wxml_file}',
                file=js_file,
                span=script.span(key.start, key.end),
                hint="remove it from setData, or bind it in the template",
            )


# -- app.json: V016 and the project limits ------------------------------------------------------


def check_app_json(root: Path, text: str, sink: DiagnosticSink) -> None:
    """V016 (each agent.skills[] has a description), V020 (at most 30 skills; the agent
    instruction file at most 10000 bytes)."""
    tree = parse_json(text, "app.json", DiagnosticSink())  # syntax errors: reported by the project loader
    agent = tree.get("agent") if isinstance(tree, JObject) else None
    if not isinstance(agent, JObject):
        return
    skills = agent.get("skills")
    if isinstance(skills, JArray):
        if len(skills.items) > MAX_PROJECT_SKILLS:
            sink.emit(
                "PRJ005",
                f"app.json lists {len(skills.items)} agent.skills; at most {MAX_PROJECT_SKILLS} are allowed",
                file="app.json",
                span=skills.items[MAX_PROJECT_SKILLS].span,
            )
        for i, item in enumerate(skills.items):
            if not isinstance(item, JObject):
                continue
            desc = item.get("description")
            value = desc.to_python() if desc is not None else None
            if isinstance(value, str) and value.strip():
                continue
            name = item.get("name")
            label = f' ("{name.to_python()}")' if name is not None and isinstance(name.to_python(), str) else ""
            got = "is missing" if desc is None else "is empty" if isinstance(value, str) else "is not a string"
            sink.emit(
                "PRJ003",
                f"agent.skills[{i}]{label} description {got}",
                file="app.json",
                span=(desc or item).span if desc is not None else Span.point(item.span.line, item.span.column),
                hint="say in one sentence what the skill does; the agent picks skills by it",
            )
    for key, code, limit, what in (
        ("instruction", "PRJ004", AGENT_INSTRUCTION_LIMIT, "the agent instruction file"),
        ("pageMetadata", "PRJ006", PAGE_METADATA_LIMIT, "the page metadata file"),
    ):
        _check_agent_file(root, agent.get(key), key, code, limit, what, sink)


def _check_agent_file(
    root: Path, node: JNode | None, key: str, code: str, limit: int, what: str, sink: DiagnosticSink
) -> None:
    if not isinstance(node, JScalar) or not isinstance(node.to_python(), str):
        return
    rel = str(node.to_python()).strip("/")
    path = root / rel
    if not path.is_file():
        sink.emit(code, f'agent.{key} names "{rel}", which does not exist', file="app.json", span=node.span)
        return
    size = path.stat().st_size
    if size > limit:
        sink.emit(
            code,
            f"{what} {rel} is {size} bytes (limit {limit})",
            file="app.json",
            span=node.span,
            hint="shorten it; per-skill detail belongs in each SKILL.md",
        )
