"""`skillc build`: compile every component of a skill and render its preview data.

A driver above the phases (like check.py). For each component it writes the template IR and
the compiled stylesheet as versioned JSON and, for each preview data file and viewport, the
output of every backend; then a build manifest with the content hash of every input and
output. A component whose inputs, data files and options hash as in the manifest, and whose
outputs are still on disk unchanged, is not recompiled: its recorded diagnostics are replayed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillc import __version__
from skillc.backends.base import RenderOptions
from skillc.backends.registry import find_backend
from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity, render_blockers, sort_diagnostics
from skillc.frontend.package import SkillPackage, load_skill
from skillc.frontend.wxss import SheetCache
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.viewport import Viewport

MANIFEST = "build-manifest.json"
MANIFEST_VERSION = 1
Progress = Callable[[str], None]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_viewport(spec: str) -> Viewport:
    """``375``, ``414:dark``, ``390x844:light``."""
    width_part, _, scheme = spec.partition(":")
    width, _, height = width_part.partition("x")
    scheme = scheme or "light"
    # isascii: isdigit() accepts "²", which int() refuses.
    if scheme not in ("light", "dark") or not _decimal(width) or (height and not _decimal(height)):
        raise ValueError(f"viewport {spec!r}: expected WIDTH[xHEIGHT][:light|dark], e.g. 414:dark")
    return Viewport(width=int(width), height=int(height) if height else 667, color_scheme=scheme)  # type: ignore[arg-type]


def _decimal(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 6


def viewport_label(vp: Viewport) -> str:
    return f"{vp.width}-{vp.color_scheme}"


@dataclass
class BuildOptions:
    out_dir: Path
    backends: tuple[str, ...] = ("json", "cardspec", "html")
    viewports: tuple[Viewport, ...] = (Viewport(width=375), Viewport(width=414, color_scheme="dark"))
    # Extra data files per component name (besides components/<name>/preview.json).
    data: dict[str, list[Path]] = field(default_factory=dict)


@dataclass
class ComponentBuild:
    name: str
    status: str  # "compiled" | "cached" | "failed"
    outputs: list[str] = field(default_factory=list)


@dataclass
class BuildReport:
    display: str
    out: Path
    diagnostics: list[Diagnostic]
    sources: dict[str, str]
    components: list[ComponentBuild]

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)


def build_skill(
    path: Path, options: BuildOptions, *, display: str | None = None, progress: Progress | None = None
) -> BuildReport | None:
    """Build one skill into ``options.out_dir/<skill name>``. None when ``path`` is not a skill."""
    shown = display if display is not None else str(path)
    sink = DiagnosticSink()
    pkg = load_skill(path, sink)
    if pkg is None:
        return None
    out = options.out_dir / pkg.name
    previous = _read_manifest(out / MANIFEST)
    written_before = _recorded_outputs(out / MANIFEST)
    manifest: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "skillc": __version__,
        "skill": pkg.name,
        "backends": list(options.backends),
        "viewports": [viewport_label(v) for v in options.viewports],
        "components": {},
    }
    backends = {}
    for name in options.backends:
        backend = find_backend(name, sink)
        if backend is not None:
            backends[name] = backend
    builds: list[ComponentBuild] = []
    sheets = SheetCache()  # a sheet several components @import is parsed once per build
    for name in sorted(pkg.components):
        entry, build = _build_component(pkg, name, options, backends, out, previous.get(name), progress, sheets)
        manifest["components"][name] = entry
        sink.extend(Diagnostic.model_validate(d) for d in entry["diagnostics"])
        builds.append(build)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "utf-8")
    now = {rel for entry in manifest["components"].values() for rel in entry.get("outputs", {})}
    _remove_stale(out, written_before - now)
    return BuildReport(shown, out, sort_diagnostics(sink), pkg.sources, builds)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION or data.get("skillc") != __version__:
        return {}
    components = data.get("components")
    return components if isinstance(components, dict) else {}


def _recorded_outputs(path: Path) -> set[str]:
    """Every output the last manifest records, whatever skillc version wrote it: the files a
    build may delete (it never touches a file it did not write)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    components = data.get("components") if isinstance(data, dict) else None
    if not isinstance(components, dict):
        return set()
    found: set[str] = set()
    for entry in components.values():
        outputs = entry.get("outputs") if isinstance(entry, dict) else None
        if isinstance(outputs, dict):
            found.update(rel for rel in outputs if isinstance(rel, str))
    return found


def _remove_stale(out: Path, stale: set[str]) -> None:
    """Delete outputs of an earlier build that this one did not write (another viewport, backend,
    data file or a removed component), then the folders that left empty. A manifest entry that
    is absolute or climbs out of ``out`` is never followed."""
    root = out.resolve()
    folders: set[Path] = set()
    for rel in stale:
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            continue
        target = out / rel
        try:
            if target.is_symlink() or not target.resolve().is_relative_to(root):
                continue
            target.unlink(missing_ok=True)
        except OSError:
            continue
        folders.update(p for p in target.parents if p != out and p.is_relative_to(out))
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # rmdir refuses a folder the user put a file in
            folder.rmdir()


def _data_files(pkg: SkillPackage, name: str, options: BuildOptions) -> list[tuple[str, bytes]]:
    """(label, bytes) of each data file to render the component with."""
    files: list[tuple[str, bytes]] = []
    preview = f"components/{name}/preview.json"
    if preview in pkg.sources:
        files.append(("preview", pkg.sources[preview].encode("utf-8")))
    for extra in options.data.get(name, []):
        files.append((extra.stem, extra.read_bytes()))
    return files


def _key(pkg: SkillPackage, inputs: Sequence[str], data: list[tuple[str, bytes]], options: BuildOptions) -> str:
    h = hashlib.sha256()
    h.update(f"skillc {__version__}\n".encode())
    h.update(json.dumps([list(options.backends), [viewport_label(v) for v in options.viewports]]).encode())
    for rel in sorted(inputs):
        text = pkg.sources.get(rel)
        h.update(f"\n{rel}\n{_sha(text.encode('utf-8')) if text is not None else 'missing'}".encode())
    for label, blob in data:
        h.update(f"\ndata {label}\n{_sha(blob)}".encode())
    return h.hexdigest()


def _outputs_intact(out: Path, outputs: dict[str, str]) -> bool:
    for rel, digest in outputs.items():
        try:
            if _sha((out / rel).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


def _build_component(
    pkg: SkillPackage,
    name: str,
    options: BuildOptions,
    backends: dict[str, Any],
    out: Path,
    previous: dict[str, Any] | None,
    progress: Progress | None,
    sheets: SheetCache | None = None,
) -> tuple[dict[str, Any], ComponentBuild]:
    data = _data_files(pkg, name, options)
    if previous is not None:
        inputs = previous.get("inputs", [])
        if (
            previous.get("key") == _key(pkg, inputs, data, options)
            and previous.get("status") != "failed"
            and _outputs_intact(out, previous.get("outputs", {}))
        ):
            if progress:
                progress(f"  {name}: up to date")
            return previous, ComponentBuild(name, "cached", sorted(previous.get("outputs", {})))

    sink = DiagnosticSink()
    component = compile_component(pkg, name, sink, sheets)
    outputs: dict[str, str] = {}
    status = "failed"
    inputs = component.inputs if component is not None else [f"components/{name}/index.wxml"]
    if component is not None and not render_blockers(sink):
        status = "compiled"
        folder = Path("components") / name
        _write(out, folder / "template.json", component.template.dumps() + "\n", outputs)
        if component.stylesheet is not None:
            sheet = json.dumps(component.stylesheet.model_dump(mode="json"), ensure_ascii=False, indent=2)
            _write(out, folder / "stylesheet.json", sheet + "\n", outputs)
        for label, blob in data:
            try:
                values = json.loads(blob)
            except ValueError as err:
                sink.emit("RND004", f"data file {label!r} is not JSON: {err}", file=f"components/{name}")
                continue
            if not isinstance(values, dict):
                sink.emit("RND004", f"data file {label!r} must hold a JSON object", file=f"components/{name}")
                continue
            for vp in options.viewports:
                doc = CardRenderer(component, vp, sink=sink).render(values)
                for backend in backends.values():
                    text = backend.render(doc, options=RenderOptions(title=f"{pkg.name} / {name}"))
                    rel = folder / "render" / f"{label}.{viewport_label(vp)}{backend.extension}"
                    _write(out, rel, text if text.endswith("\n") else text + "\n", outputs)
    if progress:
        progress(f"  {name}: {status} ({len(outputs)} file{'s' if len(outputs) != 1 else ''})")
    entry = {
        "key": _key(pkg, inputs, data, options),
        "inputs": sorted(inputs),
        "status": status,
        "outputs": outputs,
        "diagnostics": [d.model_dump(mode="json", exclude_none=True) for d in sort_diagnostics(sink)],
    }
    return entry, ComponentBuild(name, status, sorted(outputs))


def _write(out: Path, rel: Path, text: str, outputs: dict[str, str]) -> None:
    target = out / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    blob = text.encode("utf-8")
    # Unchanged files keep their mtime, so tools watching the output see only real changes.
    if not target.exists() or target.read_bytes() != blob:
        target.write_bytes(blob)
    outputs[rel.as_posix()] = _sha(blob)
