"""`skillc check`: run the frontend over a skill folder or a whole mini-program project.

This is a driver above the phases (like the cli package), so it may import any of them; the phases
never import it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from skillc.diagnostics import Counts, Diagnostic, DiagnosticSink, count, sort_diagnostics
from skillc.frontend.package import SkillPackage, cloud_folder, load_skill
from skillc.frontend.project import load_project
from skillc.user_cache import DigestSet, cache_dir


@dataclass
class CheckReport:
    """What one unit (a skill, or a project's app.json) produced."""

    display: str  # the path as the user should see it, prefix of every file location
    name: str
    diagnostics: list[Diagnostic]
    sources: dict[str, str] = field(default_factory=dict)
    package: SkillPackage | None = None
    is_skill: bool = True

    @property
    def counts(self) -> Counts:
        return count(self.diagnostics)


def check_skill(path: Path, display: str | None = None) -> CheckReport:
    sink = DiagnosticSink()
    pkg = load_skill(path, sink)
    if pkg is not None:
        _check_templates(pkg, sink)
        _check_styles(pkg, sink)
        _check_scripts(pkg, sink)
        _check_consistency(pkg, sink)
    return CheckReport(
        display=display if display is not None else str(path),
        name=pkg.name if pkg else path.name,
        diagnostics=sort_diagnostics(sink),
        sources=pkg.sources if pkg else {},
        package=pkg,
    )


def _check_consistency(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """The validator's cross-file rules (V009-V011, V017, V018) and the inferred risk levels."""
    from skillc.frontend.consistency import Script, check_bindings, check_structured_content
    from skillc.frontend.handoff import check_handoffs, check_related_pages
    from skillc.frontend.risk import check_risks
    from skillc.wxa.destructive import check_decisions

    if pkg.manifest is None:
        return
    apis = pkg.manifest.apis
    scripts: dict[str, Script] = {}  # each file masked once for every rule
    check_structured_content(pkg, apis, sink, scripts)
    check_bindings(pkg, [f.dir for f in pkg.components.values()], sink)
    check_handoffs(pkg, apis, pkg.manifest_json, pkg.project, sink, scripts)
    check_related_pages(pkg.manifest_json, pkg.project, sink)
    check_risks(apis, pkg.sources, pkg.code_root, pkg.manifest_json, sink, scripts)
    check_decisions(pkg, sink)  # V019: the destructive manifest's decisions


def _check_scripts(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """Compile every skill .js with QuickJS (nothing runs) and find the wx APIs skillc lacks."""
    from skillc.frontend.card_scope import check_card_scope
    from skillc.frontend.component_options import check_component_options
    from skillc.runtime.host.unavailable import unavailable_uses

    # WeChat's upload compiles every JavaScript file of the package, reached or not, so a file
    # that does not compile fails the upload wherever it is; cloudfunctions/ is Node code that
    # WeChat's cloud builds on its own (SKL012 says so). What the wx APIs in use are only matters
    # for skill code: what index.js and the components' index.js reach (the loader's closure).
    code = pkg.api_files | pkg.card_files
    scope = check_card_scope(pkg)  # V021
    # The official rule is the error where it and JS008 name one use (wx.cloud in a card).
    v021 = {(d.file, d.span.line, d.span.column) for d in scope if d.span is not None}
    clean = _clean_scripts()
    for path in sorted(pkg.sources):
        if not path.endswith(".js") or cloud_folder(path) is not None:
            continue
        text = pkg.sources[path]
        errors = _syntax_errors(path, text, clean)
        if path not in code:
            errors = [d.model_copy(update={"hint": _UNREACHED_HINT}) for d in errors]
        sink.extend(errors)
        if path in code:
            uses = unavailable_uses(path, text, card=path not in pkg.api_files)
            sink.extend(d for d in uses if d.span is None or (d.file, d.span.line, d.span.column) not in v021)
    sink.extend(scope)
    clean.save()
    check_component_options(pkg.sources, [f.dir for f in pkg.components.values()], sink)


def _syntax_errors(path: str, text: str, clean: DigestSet) -> list[Diagnostic]:
    """JS007 for ``text``; a text QuickJS compiled clean before (by content) is not compiled again.
    Only clean verdicts are kept: a file with an error is compiled each time, so its diagnostic is
    always the engine's own."""
    digest = _text_digest(text)
    if digest in clean:
        return []
    from skillc.runtime.sandbox.syntax import syntax_errors  # QuickJS: loaded only for a changed file

    errors = syntax_errors(path, text)
    if not errors:
        clean.add(digest)
    return errors


def _text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# What decides a verdict: a change to any of these files starts the cache afresh.
_VERDICT_SOURCES = ("runtime/sandbox/syntax.py", "runtime/sandbox/modules.py", "runtime/sandbox/native.py")


def _checker_fingerprint() -> str:
    """skillc's version and the size and time of the checker's sources and the QuickJS binding,
    read without importing them (a changed engine or rule invalidates every verdict)."""
    import importlib.util

    import skillc

    files = [Path(skillc.__file__).parent / rel for rel in _VERDICT_SOURCES]
    for name in ("quickjs", "_quickjs"):  # the binding's Python half and its native engine
        spec = importlib.util.find_spec(name)
        files += [Path(spec.origin)] if spec is not None and spec.origin else []
    parts = [f"skillc {skillc.__version__}"]
    for file in files:
        try:
            st = file.stat()
            parts.append(f"{file.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{file.name}:-")
    return " ".join(parts)


def _clean_scripts() -> DigestSet:
    """The digests of the .js texts that compiled clean, from the user cache (empty without one)."""
    folder = cache_dir()
    return DigestSet(folder / "js-clean.json" if folder is not None else None, _checker_fingerprint())


_UNREACHED_HINT = (
    "nothing requires this file, but WeChat's upload compiles every JavaScript file of the package "
    "and fails on it: fix it, or move it out of the skill folder"
)


def _check_templates(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """Parse and lower every component's index.wxml (WXML, expressions, card rules)."""
    from skillc.ir.lower import lower_component

    # A .wxml file imported by several components is lowered once per component: report each
    # of its defects once.
    for name in sorted(pkg.components):
        local = DiagnosticSink()
        lower_component(pkg, name, local)
        sink.extend(local, unique=True)


def _check_styles(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """Parse every component's index.wxss (WXSS syntax, card style rules, @import)."""
    from skillc.frontend.wxss import SheetCache, parse_wxss
    from skillc.ir.styles import compile_stylesheet

    # A file @imported by several components is parsed once (the cache replays its rules for
    # each); its findings are reported once.
    sheets = SheetCache()
    for folder in pkg.components.values():
        rel = folder.file("index.wxss")
        text = pkg.sources.get(rel)
        if text is None:
            continue  # a missing file is MCP011, reported by the loader
        local = DiagnosticSink()
        sheet = parse_wxss(text, file=rel, sink=local, load=pkg.sources.get, root=pkg.code_root, cache=sheets)
        compile_stylesheet(sheet, sink=local)
        sink.extend(local, unique=True)


def looks_like_a_skill(path: Path) -> bool:
    """A folder holding SKILL.md or mcp.json: what a folder of skills is searched for."""
    return (path / "SKILL.md").is_file() or (path / "mcp.json").is_file()


def skill_folders_in(path: Path) -> list[Path]:
    """The skill folders directly inside ``path`` (each holds SKILL.md or mcp.json), by name: a
    folder of skills without the app.json that would list them."""
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return [p for p in children if looks_like_a_skill(p)]


class NotASkill(Exception):
    """PATH is neither a skill nor a project: a usage error (exit 2), reported as one diagnostic."""

    def __init__(self, diagnostic: Diagnostic, display: str) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.display = display


def check_path(path: Path, display: str | None = None) -> list[CheckReport]:
    """Check a skill folder, or every skill of a mini-program project folder."""
    shown = display if display is not None else str(path)
    sink = DiagnosticSink()
    project = load_project(path, sink)
    if project is None:
        report = check_skill(path, shown)
        if report.package is not None:
            return [report]
        children = skill_folders_in(path)
        if not children:
            raise NotASkill(report.diagnostics[0], shown)
        return [check_skill(child, f"{shown.rstrip('/')}/{child.name}") for child in children]
    app_root, text = project.root, project.app_json
    if text is not None:
        from skillc.frontend.consistency import check_app_json

        check_app_json(app_root, text, sink)  # V016, V020
    app_display = shown if app_root == path else f"{shown.rstrip('/')}/{app_root.relative_to(path).as_posix()}"
    reports = [
        CheckReport(
            display=app_display,
            name="app.json",
            diagnostics=sort_diagnostics(sink),
            sources={"app.json": text} if text is not None else {},
            is_skill=False,
        )
    ]
    for skill in project.skills:
        rel = skill.path.relative_to(app_root).as_posix()
        reports.append(check_skill(skill.path, f"{app_display.rstrip('/')}/{rel}"))
    return reports
