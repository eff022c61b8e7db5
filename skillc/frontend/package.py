"""Discover and load a skill folder into a :class:`SkillPackage`.

Every text file of the skill is read once, here, and kept by its path relative to the
skill root; later phases and diagnostics rendering read from that map, never from disk,
so what was checked is what gets compiled.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.front_matter import FrontMatter, parse_front_matter
from skillc.frontend.jsonsrc import JArray, JNode, JObject, parse_json, type_name
from skillc.frontend.manifest import MAX_APIS, Manifest, check_manifest, checked_items
from skillc.frontend.modpaths import EXTENSIONS, REFUSALS, CodeRoot
from skillc.frontend.project import Project, find_project
from skillc.frontend.scripts import check_scripts, required_specs
from skillc.frontend.skill_names import skill_path
from skillc.frontend.source import decode_utf8

SKILL_MD_LIMIT = 16000
TEXT_SUFFIXES = (".md", ".js", ".json", ".wxml", ".wxss", ".wxs")
MAX_FILE_BYTES = 8 * 1024 * 1024
# Folders that tooling leaves inside a project and that never belong to a skill.
SKIPPED_DIRS = {".git", "node_modules", ".skillc", "__pycache__"}


@dataclass
class ComponentFolder:
    """components/<name>/: the four files of a card, by base name."""

    name: str
    path: str  # "components/<name>/index", the form mcp.json uses
    files: dict[str, str] = field(default_factory=dict)
    config: JNode | None = None

    @property
    def dir(self) -> str:
        return f"components/{self.name}"

    def file(self, base: str) -> str:
        return f"{self.dir}/{base}"


@dataclass
class SkillPackage:
    root: Path
    name: str
    sources: dict[str, str] = field(default_factory=dict)
    manifest: Manifest | None = None
    manifest_json: JNode | None = None
    components: dict[str, ComponentFolder] = field(default_factory=dict)
    registered_apis: set[str] = field(default_factory=set)
    project: Project | None = None  # the mini-program project the skill sits in, if any
    code_root: CodeRoot = field(default_factory=CodeRoot)  # how far require() may reach
    # The skill code: the .js and .json files index.js reaches (the API VM) and those the
    # components' index.js files reach (the card VMs). Other files are not skill code.
    api_files: frozenset[str] = frozenset()
    card_files: frozenset[str] = frozenset()

    @property
    def skill_md(self) -> str | None:
        return self.sources.get("SKILL.md")


def load_skill(root: Path, sink: DiagnosticSink) -> SkillPackage | None:
    """Load the skill at ``root``. None when ``root`` is not a skill folder at all."""
    if not root.is_dir():
        sink.emit("SKL001", "the path is not a folder" if root.exists() else "the path does not exist")
        return None
    names = {p.name for p in root.iterdir()}
    case_twins = [n for n in names if n.lower() == "skill.md" and n != "SKILL.md"]
    if not ({"SKILL.md", "mcp.json", "index.js"} & names) and not case_twins:
        sink.emit(
            "SKL001",
            "not a skill folder: it has no SKILL.md, mcp.json or index.js",
            hint="point skillc at a skill folder, a folder of skill folders, or a mini-program project whose app.json "
            "lists agent.skills",
        )
        return None

    pkg = SkillPackage(root=root, name=root.resolve().name)
    pkg.project = find_project(root)
    found = pkg.project.code_root(root) if pkg.project is not None else None
    code_dir = root
    if found is not None:
        code_dir, pkg.code_root = found
    _read_tree(pkg, sink)

    if "SKILL.md" not in pkg.sources and not (root / "SKILL.md").exists():
        if case_twins:
            sink.emit(
                "SKL003",
                f'found "{case_twins[0]}" but the runtime only reads "SKILL.md"',
                file=case_twins[0],
                hint=f"rename it: git mv {case_twins[0]} SKILL.md",
            )
        else:
            sink.emit("SKL002", "SKILL.md is missing", hint="describe when and how the agent should use the skill")
    _check_skill_md(pkg, sink)

    if "mcp.json" in pkg.sources:
        tree = parse_json(pkg.sources["mcp.json"], "mcp.json", sink)
        pkg.manifest_json = tree
        if tree is not None:
            pkg.manifest = check_manifest(tree, root, sink)
    elif not (root / "mcp.json").exists():
        sink.emit("SKL006", "mcp.json is missing", hint='create it with {"apis": [], "components": []}')
    if "index.js" not in pkg.sources and not (root / "index.js").exists():
        sink.emit("SKL007", "index.js is missing", hint="index.js creates the skill and registers its APIs")

    _load_components(pkg, sink)
    reach = SharedReader(pkg.sources, pkg.code_root, code_dir, sink)
    pkg.api_files = reach.closure(["index.js"])
    pkg.card_files = reach.closure([f.file("index.js") for f in pkg.components.values()])
    reach.sheets([f.file("index.wxss") for f in pkg.components.values()])
    _report_not_code(pkg, sink)
    pkg.registered_apis = check_scripts(
        pkg.sources, _declared_apis(pkg), sink, code=pkg.api_files | pkg.card_files, root=pkg.code_root
    )
    return pkg


_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(['"])([^'"\n]+)\1""")
_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)

# Folders of a skill whose code runs elsewhere (WeChat's cloud, a test runner): a dynamic
# require() in skill code is not taken to reach them.
NOT_SKILL_CODE = ("cloudfunctions/", "test/", "tests/", "__tests__/")


class SharedReader:
    """Follows require() from entry files; reads the shared files they reach outside the skill
    folder (under its code root) into ``sources``, with the same symlink, size and UTF-8 rules
    as the skill's own files."""

    def __init__(self, sources: dict[str, str], root: CodeRoot, code_dir: Path, sink: DiagnosticSink) -> None:
        self.sources = sources
        self.root = root
        self.code_dir = code_dir
        self.sink = sink

    def closure(self, entries: list[str]) -> frozenset[str]:
        seen: set[str] = set()
        todo = [e for e in entries if e in self.sources]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            if not path.endswith(".js"):
                continue
            specs, dynamic = required_specs(self.sources[path])
            for spec in specs:
                target = self._resolve(spec, path)
                if target is not None and target not in seen:
                    todo.append(target)
            for lead in dynamic:
                todo += [p for p in self._under(lead, path) if p not in seen]
        return frozenset(seen)

    def sheets(self, entries: list[str]) -> None:
        """Read the shared sheets the components' WXSS @imports reach outside the skill folder (the
        same boundary as require(), V001), so the check and the renderer find them in sources."""
        seen: set[str] = set()
        todo = [e for e in entries if e in self.sources]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            for target in _IMPORT.findall(_CSS_COMMENT.sub(" ", self.sources[path])):
                key = posixpath.normpath(posixpath.join(posixpath.dirname(path), target[1]))
                key = key if posixpath.splitext(key)[1] else key + ".wxss"
                if key not in self.sources and self.root.outside(key):
                    parts = self.root.parts(key)
                    if parts is None or not self._read(key, self.code_dir.joinpath(*parts)):
                        continue
                if key in self.sources:
                    todo.append(key)

    def _under(self, lead: str, from_file: str) -> list[str]:
        """The files a dynamic require('<lead>' + x) may load: those under lead's folder, or,
        with no literal lead, every .js and .json of the skill that is not NOT_SKILL_CODE."""
        if lead:
            parts = self.root.target(posixpath.dirname(lead + "x"), from_file)
            if not isinstance(parts, str):
                folder = self.root.key(parts)
                return [p for p in self.sources if p.endswith((".js", ".json")) and p.startswith(folder + "/")]
        return [
            p
            for p in self.sources
            if p.endswith((".js", ".json")) and not p.startswith(NOT_SKILL_CODE) and not self.root.outside(p)
        ]

    def _resolve(self, spec: str, from_file: str) -> str | None:
        hit = self.root.resolve(spec, from_file, self.sources)
        if hit not in REFUSALS:
            return hit
        if hit != "missing" or not self.root.is_project:
            return None
        parts = self.root.target(spec, from_file)
        if isinstance(parts, str):
            return None
        base = "/".join(parts)
        for ext in EXTENSIONS:
            key = self.root.key((base + ext).split("/"))
            if self.root.outside(key) and self._read(key, self.code_dir.joinpath(*(base + ext).split("/"))):
                return key
        return None

    def _read(self, key: str, path: Path) -> bool:
        """Read the shared file ``path`` as ``key``; False when it is not a readable file of the root."""
        if not path.is_file():
            return False
        if not path.resolve().is_relative_to(self.code_dir.resolve()):
            self.sink.emit(
                "SKL008",
                f'symbolic link "{key}" points outside {self.root.label} ({path.resolve()}); it is ignored',
                file=key,
            )
            return False
        text = read_text_file(path, key, self.sink)
        if text is None:
            return False
        self.sources[key] = text
        return True


def cloud_folder(path: str) -> str | None:
    """The ``cloudfunctions/`` folder (with what leads to it) a skill-relative path is in, if any."""
    parts = path.split("/")
    if "cloudfunctions" not in parts[:-1]:
        return None
    return "/".join(parts[: parts.index("cloudfunctions") + 1]) + "/"


def _report_not_code(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """One line for the JavaScript that is not skill code (tests, tools, drafts), and one per
    cloudfunctions/ folder."""
    code = pkg.api_files | pkg.card_files
    left = sorted(p for p in pkg.sources if p.endswith(".js") and p not in code)
    if not left or "index.js" not in pkg.sources:
        return
    clouds: dict[str, int] = {}
    for path in left:
        folder = cloud_folder(path)
        if folder is not None:
            clouds[folder] = clouds.get(folder, 0) + 1
    for folder, n in clouds.items():
        # Cloud functions are uploaded and built by WeChat's cloud (Node, npm packages), not with
        # the mini-program package: nothing of theirs is compiled here.
        sink.emit(
            "SKL012",
            f"{folder} holds cloud functions ({n} JavaScript file{'s' if n != 1 else ''}), Node code deployed to "
            "WeChat's cloud on its own: not compiled or checked as skill code",
            file=folder.rstrip("/"),
        )
    left = [p for p in left if cloud_folder(p) is None]
    if not left:
        return
    groups: dict[str, list[str]] = {}
    for path in left:
        groups.setdefault(path.split("/", 1)[0] + "/" if "/" in path else path, []).append(path)
    # a folder by its count (cloudfunctions/ (9)), a lone file by its name (apis/hello.js)
    listed = ", ".join(f"{head} ({len(paths)})" if len(paths) > 1 else paths[0] for head, paths in groups.items())
    sink.emit(
        "SKL011",
        f"{len(left)} JavaScript file{'s' if len(left) != 1 else ''} not reachable from index.js or a "
        f"component's index.js {'are' if len(left) != 1 else 'is'} not skill code: only compiled, as WeChat's "
        f"upload compiles every file: {listed}",
    )


def _read_tree(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    root = pkg.root
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in [*dirnames, *sorted(filenames)]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(real_root):
                    sink.emit(
                        "SKL008",
                        f'symbolic link "{rel}" points outside the skill ({os.readlink(path)}); it is ignored',
                        file=rel,
                    )
                    if name in dirnames:
                        dirnames.remove(name)
                    continue
            if name in dirnames or not name.endswith(TEXT_SUFFIXES):
                continue
            text = read_text_file(path, rel, sink)
            if text is None:
                continue
            pkg.sources[rel] = text


def read_text_file(path: Path, rel: str, sink: DiagnosticSink) -> str | None:
    """The UTF-8 text of a file of the skill, or None with a diagnostic (too big, unreadable, not UTF-8)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            sink.emit("SKL009", f"{rel} is {size} bytes; files over {MAX_FILE_BYTES} bytes are not read", file=rel)
            return None
        data = path.read_bytes()
    except OSError as err:
        sink.emit("SKL009", f"cannot read {rel}: {err.strerror or err}", file=rel)
        return None
    text, bad = decode_utf8(data)
    if text is None:
        assert bad is not None
        sink.emit(
            "SKL005",
            f"{rel} is not valid UTF-8 (first bad byte at line {bad[0]}, column {bad[1]})",
            file=rel,
            span=Span.point(*bad),
            hint="save the file as UTF-8",
        )
    return text


def _check_skill_md(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    text = pkg.skill_md
    if text is None:
        return
    size = len(text.encode("utf-8"))
    if size > SKILL_MD_LIMIT:
        sink.emit(
            "SKL004",
            f"SKILL.md is {size} bytes of UTF-8 (limit {SKILL_MD_LIMIT})",
            file="SKILL.md",
            hint="move detail into API descriptions or shorten the instructions",
        )
    elif not text.strip():
        sink.emit("SKL010", "SKILL.md is empty", file="SKILL.md")
    front = parse_front_matter(text, sink)
    _check_front_matter_for_hosts(pkg, front, sink)


def _check_front_matter_for_hosts(pkg: SkillPackage, front: FrontMatter, sink: DiagnosticSink) -> None:
    """Agent hosts (MCP Skills) compare the front matter with the skill's listing: a ``name`` other
    than the skill's, or a ``description`` that is not text, keeps the skill out of skills/list."""
    expected = skill_path(pkg.name)
    fields = front.fields
    if "name" in fields and fields["name"] != expected:
        sink.emit(
            "SKL014",
            f"SKILL.md's front matter names the skill {fields['name']!r}, but it is served as {expected!r}: "
            "skillc serve does not list it in skills/list (MCP Skills)",
            file="SKILL.md",
            span=Span.point(_field_line(pkg.skill_md or "", "name"), 1),
            hint=f"write 'name: {expected}' or leave name out (skillc serve then adds it)",
        )
    if "description" in fields and not isinstance(fields["description"], str):
        sink.emit(
            "SKL014",
            "SKILL.md's front matter description is not text: skillc serve does not list the skill in skills/list",
            file="SKILL.md",
            span=Span.point(_field_line(pkg.skill_md or "", "description"), 1),
            hint="quote the description or write it as a folded block (description: >)",
        )


def _field_line(text: str, key: str) -> int:
    """The line of ``key:`` in the front matter (which starts on line 2), else line 2."""
    for number, line in enumerate(text.splitlines()[1:], start=2):
        if line.rstrip() in ("---", "..."):
            break
        if line.startswith(f"{key}:"):
            return number
    return 2


def _load_components(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    comp_root = pkg.root / "components"
    if not comp_root.is_dir() or comp_root.is_symlink():
        return
    for entry in sorted(comp_root.iterdir()):
        if not entry.is_dir() or entry.is_symlink():
            continue
        folder = ComponentFolder(name=entry.name, path=f"components/{entry.name}/index")
        prefix = folder.dir + "/"
        folder.files = {rel[len(prefix) :]: text for rel, text in pkg.sources.items() if rel.startswith(prefix)}
        if "index.json" in folder.files:
            folder.config = _check_component_json(folder, sink)
        pkg.components[entry.name] = folder

    referenced: set[str] = set()
    if pkg.manifest is not None:
        referenced |= {c.path for c in pkg.manifest.components}
        referenced |= {a.component_path for a in pkg.manifest.apis if a.component_path}
    for folder in pkg.components.values():
        if folder.path not in referenced:
            sink.emit(
                "MCP017",
                f'component "{folder.name}" is referenced by no API and no components[] entry',
                file=folder.dir,
                hint=f'bind it with "_meta": {{"ui": {{"componentPath": "{folder.path}"}}}} or delete the folder',
            )


def _check_component_json(folder: ComponentFolder, sink: DiagnosticSink) -> JNode | None:
    rel = folder.file("index.json")
    tree = parse_json(folder.files["index.json"], rel, sink)
    if tree is None:
        return None
    if not isinstance(tree, JObject):
        sink.emit("CMP001", f"index.json must be an object, got {type_name(tree)}", file=rel, span=tree.span)
        return tree
    flag = tree.get("component")
    if flag is None:
        sink.emit(
            "CMP001",
            'index.json lacks "component": true',
            file=rel,
            span=Span.point(tree.span.line, tree.span.column),
        )
    elif flag.to_python() is not True:
        sink.emit("CMP001", f'"component" must be true, got {flag.to_python()!r}', file=rel, span=flag.span)
    return tree


def _declared_apis(pkg: SkillPackage) -> dict[str, Span | None] | None:
    """Declared API names with the span of each name in mcp.json (for JS001).

    Names come from the raw JSON, so an entry with another defect (say, no description)
    still counts as declared and does not cascade into a second, misleading diagnostic.
    None when there is no usable manifest to compare the registrations with.
    """
    if pkg.manifest is None or not isinstance(pkg.manifest_json, JObject):
        return None
    apis = pkg.manifest_json.get("apis")
    if not isinstance(apis, JArray):
        return None
    result: dict[str, Span | None] = {}
    for item in checked_items(apis, "apis", MAX_APIS):
        name = item.get("name") if isinstance(item, JObject) else None
        if name is not None and isinstance(name.to_python(), str):
            result.setdefault(str(name.to_python()), name.span)
    return result
