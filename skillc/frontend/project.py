"""Mini-program projects: find the skills an app.json lists under ``agent.skills``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.jsonsrc import JArray, JObject, parse_json, type_name
from skillc.frontend.modpaths import CodeRoot
from skillc.frontend.source import decode_utf8


@dataclass(frozen=True)
class ProjectSkill:
    name: str
    path: Path


def _string_key(config: Path, key: str) -> str | None:
    """A top-level string of a JSON file, None when unreadable or not a string (the project's
    own checks report a broken project.config.json)."""
    try:
        text, _ = decode_utf8(config.read_bytes())
    except OSError:
        return None
    tree = parse_json(text, config.name, DiagnosticSink()) if text else None
    node = tree.get(key) if isinstance(tree, JObject) else None
    value = node.to_python() if node is not None else None
    return value if isinstance(value, str) and value else None


def miniprogram_root(path: Path) -> Path | None:
    """The folder holding app.json: ``path`` itself, or project.config.json's miniprogramRoot."""
    if (path / "app.json").is_file():
        return path
    config = path / "project.config.json"
    if config.is_file():
        sink = DiagnosticSink()
        text, _ = decode_utf8(config.read_bytes())
        tree = parse_json(text or "", "project.config.json", sink) if text else None
        root = tree.get("miniprogramRoot") if isinstance(tree, JObject) else None
        value = root.to_python() if root is not None else None
        if isinstance(value, str) and (path / value / "app.json").is_file():
            return path / value
    return None


def read_app_json(app_root: Path, sink: DiagnosticSink) -> str | None:
    text, bad = decode_utf8((app_root / "app.json").read_bytes())
    if text is None:
        sink.emit("SKL005", "app.json is not valid UTF-8", file="app.json", span=Span.point(*bad) if bad else None)
    return text


def find_project_skills(app_root: Path, text: str, sink: DiagnosticSink) -> list[ProjectSkill]:
    """Read app.json's agent.skills; report problems against app.json."""
    file = "app.json"
    tree = parse_json(text, file, sink)
    if tree is None:
        return []
    agent = tree.get("agent") if isinstance(tree, JObject) else None
    skills = agent.get("skills") if isinstance(agent, JObject) else None
    if not isinstance(skills, JArray) or not skills.items:
        where = (skills or agent or tree).span
        sink.emit(
            "PRJ001",
            'app.json lists no skills: expected a non-empty "agent.skills" array'
            + (f", got {type_name(skills)}" if skills is not None and not isinstance(skills, JArray) else ""),
            file=file,
            span=Span.point(where.line, where.column),
        )
        return []
    found: list[ProjectSkill] = []
    for i, item in enumerate(skills.items):
        path_node = item.get("path") if isinstance(item, JObject) else None
        value = path_node.to_python() if path_node is not None else None
        if not isinstance(value, str) or not value.strip():
            sink.emit(
                "PRJ002",
                f'agent.skills[{i}] needs a "path" string naming the skill\'s subpackage',
                file=file,
                span=(path_node or item).span,
            )
            continue
        target = (app_root / value.strip("/")).resolve()
        if not target.is_relative_to(app_root.resolve()) or not target.is_dir():
            sink.emit(
                "PRJ002",
                f'agent.skills[{i}].path "{value}" is not a folder inside the project',
                file=file,
                span=path_node.span if path_node else item.span,
            )
            continue
        name_node = item.get("name") if isinstance(item, JObject) else None
        name = name_node.to_python() if name_node is not None else None
        found.append(
            ProjectSkill(name=name if isinstance(name, str) else target.name, path=app_root / value.strip("/"))
        )
    return found


@dataclass(frozen=True)
class Project:
    root: Path  # the folder holding app.json
    app_json: str | None  # its text, None when it could not be read as UTF-8
    skills: list[ProjectSkill]
    # Every page route, without the leading slash: app.json pages, then each subpackage's
    # root + "/" + page.
    pages: tuple[str, ...] = ()
    subpackage_roots: tuple[str, ...] = ()  # as app.json writes them, without slashes at the ends

    def app_id(self) -> str | None:
        """The mini program's app id: ``appid`` of the project.config.json in the app.json folder,
        or of the one above it whose ``miniprogramRoot`` names that folder (as WeChat DevTools
        reads it). None when there is none or it has no string ``appid``."""
        real = self.root.resolve()
        for folder in (real, *real.parents):
            config = folder / "project.config.json"
            if not config.is_file():
                continue
            app_root = miniprogram_root(folder)
            if app_root is None or app_root.resolve() != real:
                return None  # the nearest project.config.json belongs to another folder
            return _string_key(config, "appid")
        return None

    def code_root(self, skill_dir: Path) -> tuple[Path, CodeRoot] | None:
        """The subpackage root ``skill_dir`` sits in (the deepest one) and the boundary it sets for
        require(); None when the skill is in no subpackage."""
        real = skill_dir.resolve()
        best: tuple[Path, CodeRoot] | None = None
        for root in self.subpackage_roots:
            folder = (self.root / root).resolve()
            if real.is_relative_to(folder):
                prefix = real.relative_to(folder).parts
                if best is None or len(prefix) < len(best[1].prefix):
                    best = (folder, CodeRoot(prefix, f"the subpackage root {root}/"))
        return best


def load_project(path: Path, sink: DiagnosticSink) -> Project | None:
    """The mini-program project at ``path`` and the skills its app.json lists; None when ``path``
    is not a project (then it may be a skill folder). Problems are reported against app.json."""
    app_root = miniprogram_root(path) if path.is_dir() else None
    if app_root is None:
        return None
    text = read_app_json(app_root, sink)
    skills = find_project_skills(app_root, text, sink) if text is not None else []
    pages, roots = _routes(text)
    return Project(app_root, text, skills, pages, roots)


def find_project(skill_dir: Path) -> Project | None:
    """The mini-program project a skill folder sits in, found upward as git finds ``.git``: the
    nearest folder above ``skill_dir`` with an app.json (or a project.config.json whose
    ``miniprogramRoot`` holds one) that the skill folder is inside of. Problems of that app.json
    are not reported here (a check of the project reports them once)."""
    real = skill_dir.resolve()
    for folder in real.parents:
        app_root = miniprogram_root(folder)
        if app_root is None:
            continue
        if not real.is_relative_to(app_root.resolve()):
            return None  # beside the mini-program (say, under cloudfunctions/): not its code
        return load_project(folder, DiagnosticSink())  # the nearest project decides, as .git does
    return None


def _routes(text: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every page route, every subpackage root) of an app.json text; bad entries are skipped
    (find_project_skills and the project rules report them)."""
    tree = parse_json(text, "app.json", DiagnosticSink()) if text else None
    if not isinstance(tree, JObject):
        return (), ()
    pages: list[str] = []
    roots: list[str] = []

    def strings(node: object) -> list[str]:
        items = node.items if isinstance(node, JArray) else []
        return [str(v) for v in (i.to_python() for i in items) if isinstance(v, str) and v.strip("/")]

    pages += [p.strip("/") for p in strings(tree.get("pages"))]
    for key in ("subPackages", "subpackages"):
        subs = tree.get(key)
        for sub in subs.items if isinstance(subs, JArray) else []:
            root_node = sub.get("root") if isinstance(sub, JObject) else None
            root = root_node.to_python() if root_node is not None else None
            if not isinstance(root, str) or not root.strip("/"):
                continue
            root = root.strip("/")
            roots.append(root)
            assert isinstance(sub, JObject)
            pages += [f"{root}/{p.strip('/')}" for p in strings(sub.get("pages"))]
    return tuple(pages), tuple(roots)
