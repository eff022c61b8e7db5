"""Which skills a server serves, and under which tool names.

``skillc serve`` takes skill folders or a mini-program project folder (its app.json lists
``agent.skills``). Each skill keeps its own runtime; tool names are the API names, prefixed
``<skill>__`` only where two skills declare the same name, so a single skill's tools keep the
names its SKILL.md talks about; a name model APIs would refuse is served under a stable safe
name (skillc.frontend.tool_names), its API name in the tool's ``_meta["skillc/api"]`` and title.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import SkillPackage, load_skill
from skillc.frontend.project import load_project
from skillc.frontend.tool_names import model_safe_name
from skillc.runtime.api.api_runtime import api_risk
from skillc.runtime.config import RuntimeConfig
from skillc.server.skill_icon import skill_icons
from skillc.server.tools import CARD_EVENT_TOOL, HANDOFF_VIEW, ServedApi, handoff_uri, ui_uri, uses_wx_request


@dataclass
class LoadedSkill:
    """One skill that can be served: its package and the display path diagnostics are relative to."""

    package: SkillPackage
    display: str


@dataclass
class Catalogue:
    skills: list[LoadedSkill] = field(default_factory=list)
    apis: dict[str, ServedApi] = field(default_factory=dict)  # by tool name
    components: dict[str, tuple[str, str]] = field(default_factory=dict)  # ui uri -> (skill, componentPath)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def tool_names(self, skill: str) -> dict[str, str]:
        """API name -> tool name for one skill (what a card view needs to turn api/call into tools/call)."""
        return {a.spec.name: a.tool_name for a in self.apis.values() if a.skill == skill}


def _tagged(diags: DiagnosticSink, display: str) -> list[Diagnostic]:
    # A server reports for several skills at once: the file says which one.
    return [d.model_copy(update={"file": f"{display}/{d.file}" if d.file else display}) for d in diags]


def load_paths(paths: list[Path]) -> tuple[list[LoadedSkill], list[Diagnostic]]:
    """Load every skill named by ``paths`` (skill folders, or project folders listing skills)."""
    skills: list[LoadedSkill] = []
    diagnostics: list[Diagnostic] = []
    for path in paths:
        sink = DiagnosticSink()
        project = load_project(path, sink)
        roots = [path]
        if project is not None:
            diagnostics += _tagged(sink, str(project.root))
            roots = [s.path for s in project.skills]
        for root in roots:
            display = str(root)
            sink = DiagnosticSink()
            pkg = load_skill(root, sink)
            errors = [d for d in sink if d.severity == "error"]
            if pkg is None or pkg.manifest is None:
                reason = errors[0].message if errors else "it has no usable mcp.json"
                local = DiagnosticSink()
                local.emit("SRV001", f"{display} is not served: {reason}", hint="run `skillc check` on it")
                diagnostics += _tagged(sink, display) + list(local)
                continue
            skills.append(LoadedSkill(pkg, display))
    return skills, diagnostics


def build_catalogue(skills: list[LoadedSkill], config: RuntimeConfig) -> Catalogue:
    """Name every API as a tool and every served component as a ``ui://`` resource."""
    cat = Catalogue()
    sink = DiagnosticSink()
    served: dict[str, LoadedSkill] = {}
    for skill in skills:
        first = served.setdefault(skill.package.name, skill)
        if first is not skill:
            sink.emit(
                "SRV002",
                f"two skills are named {skill.package.name}: {first.display} is served, {skill.display} is not",
            )
    cat.skills = list(served.values())
    names = Counter(a.name for s in cat.skills for a in (s.package.manifest.apis if s.package.manifest else []))
    for skill in cat.skills:
        pkg = skill.package
        assert pkg.manifest is not None
        open_world = uses_wx_request(pkg)
        icons = skill_icons(pkg.root)
        folders = {f.path for f in pkg.components.values()}
        for spec in pkg.manifest.apis:
            shared = names[spec.name] > 1 or spec.name == CARD_EVENT_TOOL
            tool = model_safe_name(f"{pkg.name}__{spec.name}" if shared else spec.name)
            if shared:
                sink.emit(
                    "SRV003",
                    f"the API {spec.name} of {pkg.name} is served as the tool {tool}: another skill declares "
                    f"{spec.name} too",
                    file=f"{skill.display}/mcp.json",
                )
            uri = None
            path = spec.component_path
            if path is not None and path in folders:
                uri = ui_uri(pkg.name, path)
                cat.components[uri] = (pkg.name, path)
            elif spec.meta is not None and spec.meta.ui is not None and spec.meta.ui.page_path:
                # A handoff API has no component: the card view shows its handoff card instead.
                uri = handoff_uri(pkg.name)
                if cat.components.setdefault(uri, (pkg.name, HANDOFF_VIEW)) != (pkg.name, HANDOFF_VIEW):
                    uri = None  # a component of the same name took the address
            risk, _problem = api_risk(spec, config, pkg)  # the orchestrator reports a bad level (RUN024) on call
            cat.apis[tool] = ServedApi(tool, pkg.name, spec, risk, open_world, uri, icons)
    cat.diagnostics = list(sink)
    return cat
