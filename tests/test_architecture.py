"""DESIGN.md's dependency rule, checked on the source: phases import only downwards.

frontend <- ir <- backends; runtime never imports backends or server; nothing imports server
or the drivers (cli, check, build); diagnostics imports no phase.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skillc"

# package -> the skillc packages it may import (besides itself, `skillc` and `skillc.diagnostics`)
ALLOWED = {
    "frontend": set(),
    "ir": {"frontend"},
    "backends": {"ir"},
    "runtime": {"frontend", "ir"},
    "server": {"frontend", "ir", "backends", "runtime"},
}
DRIVERS = {"cli", "check", "build", "__main__"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {m for m in found if m == "skillc" or m.startswith("skillc.")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    if own in DRIVERS:
        return  # drivers sit above every phase and may use each other
    for module in _imports(path):
        target = _layer(module)
        if target in ("", "diagnostics", own):
            continue
        assert target not in DRIVERS, f"{rel} imports the driver {module}"
        if own == "diagnostics":
            pytest.fail(f"diagnostics imports {module}")
        if own in ALLOWED:
            assert target in ALLOWED[own], f"{rel} imports {module}: {own} may use only {sorted(ALLOWED[own])}"
