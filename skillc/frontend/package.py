"""Discover and load a skill folder into a :class:`SkillPackage`.

Every text file of the skill is read once, here, and kept by its path relative to the
skill root; later phases and diagnostics rendering read from that map, never from disk,
so what was checked is what gets compiled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.jsonsrc import JArray, JNode, JObject, parse_json, type_name
from skillc.frontend.manifest import MAX_APIS, Manifest, check_manifest, checked_items
from skillc.frontend.scripts import check_scripts
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
            hint="point skillc at a skill folder, or at a mini-program project whose app.json lists agent.skills",
        )
        return None

    pkg = SkillPackage(root=root, name=root.resolve().name)
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
    pkg.registered_apis = check_scripts(pkg.sources, _declared_apis(pkg), sink)
    return pkg


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
            try:
                size = path.stat().st_size
                if size > MAX_FILE_BYTES:
                    sink.emit(
                        "SKL009", f"{rel} is {size} bytes; files over {MAX_FILE_BYTES} bytes are not read", file=rel
                    )
                    continue
                data = path.read_bytes()
            except OSError as err:
                sink.emit("SKL009", f"cannot read {rel}: {err.strerror or err}", file=rel)
                continue
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
                continue
            pkg.sources[rel] = text


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
