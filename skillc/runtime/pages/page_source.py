"""Where a page's files are: the mini-program project around the skill (``app.json``'s folder),
``<route>.js / .wxml / .wxss / .json``, plus the project files its JavaScript requires."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from skillc.frontend.package import SkillPackage
from skillc.frontend.source import decode_utf8

# require('./x') with a literal path; anything else is resolved (or refused) by the loader at run time.
_REQUIRE = re.compile(r"""\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)""")
MAX_CODE_FILES = 200  # a page's reachable modules; beyond it require() fails with the loader's error
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class PageSource:
    """One route's files, by project-relative path (``pages/order/detail.wxml``)."""

    route: str  # without slashes at the ends: pages/order/detail
    root: Path  # the project folder holding app.json
    files: dict[str, str] = field(default_factory=dict)
    app_id: str | None = None

    def text(self, ext: str) -> str | None:
        return self.files.get(f"{self.route}.{ext}")

    def path(self, ext: str) -> str:
        return f"{self.route}.{ext}"

    @property
    def code(self) -> dict[str, str]:
        """The .js and .json files the page VM defines as modules."""
        return {p: t for p, t in self.files.items() if p.endswith((".js", ".json"))}


def normal_route(url: str) -> str:
    """``/pages/a/b?x=1`` -> ``pages/a/b``."""
    return url.split("?", 1)[0].strip("/")


def find_page(pkg: SkillPackage, route: str) -> PageSource | str:
    """The page's files, or why there are none (the PAGE001 message)."""
    route = normal_route(route)
    project = pkg.project
    if project is None:
        return f"{pkg.name} sits in no mini-program project (no app.json above it), so /{route} has no page files"
    root = project.root
    files: dict[str, str] = {}
    for ext in ("js", "wxml", "wxss", "json"):
        text = _read(root, f"{route}.{ext}")
        if text is not None:
            files[f"{route}.{ext}"] = text
    if f"{route}.wxml" not in files:
        return f"the project {root.name} has no {route}.wxml to render /{route}"
    _add_required(root, f"{route}.js", files)
    return PageSource(route=route, root=root, files=files, app_id=project.app_id())


def _read(root: Path, rel: str) -> str | None:
    path = root / rel
    try:
        real = path.resolve()
        if not real.is_relative_to(root.resolve()) or not real.is_file() or real.stat().st_size > MAX_FILE_BYTES:
            return None
        text, _ = decode_utf8(real.read_bytes())
    except OSError:
        return None
    return text


def _add_required(root: Path, main: str, files: dict[str, str]) -> None:
    """The project files the page's JavaScript requires by literal path, transitively."""
    queue = [main] if main in files else []
    while queue and len(files) < MAX_CODE_FILES:
        current = queue.pop()
        for m in _REQUIRE.finditer(files[current]):
            spec = m.group(1)
            base = posixpath.dirname(current) if spec.startswith(".") else ""
            joined = posixpath.normpath(posixpath.join(base, spec.lstrip("/")))
            if joined.startswith(".."):
                continue  # outside the project: the loader refuses it when it runs
            for candidate in (joined, f"{joined}.js", f"{joined}.json", f"{joined}/index.js"):
                if candidate in files:
                    break
                text = _read(root, candidate) if candidate.endswith((".js", ".json")) else None
                if text is not None:
                    files[candidate] = text
                    if candidate.endswith(".js"):
                        queue.append(candidate)
                    break
