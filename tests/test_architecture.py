"""DESIGN.md's dependency rule, checked on the source: phases import only downwards.

frontend <- ir <- backends; runtime never imports backends or server; nothing imports server,
wxa (WeChat's cli artefacts, beside the server) or the drivers (cli, check, build); the base
modules every phase may use (diagnostics; gcpause, the cycle collector's pause; threadnames, the
OS names of threads) import no phase. Inside the runtime the parts
stack the same way: sandbox < host < api < cards < flows, with contracts and config under all.
In the server, ui_control knows the skill server only through the callables it is handed (and
the leaf modules every tool shares: the registry, the snapshot text quoting), and its contract
(models.py) imports none of its handlers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skillc"

# Modules under every phase: each may be imported by all, and imports no phase itself.
BASE = {"diagnostics", "gcpause", "threadnames"}
# package -> the skillc packages it may import (besides itself, `skillc` and the BASE modules)
ALLOWED = {
    "frontend": set(),
    "ir": {"frontend"},
    "backends": {"ir"},
    "runtime": {"frontend", "ir"},
    "server": {"frontend", "ir", "backends", "runtime"},
    # WeChat's cli agent artefacts: beside the server, above every phase, used by the CLI only.
    "wxa": {"frontend", "ir", "backends", "runtime"},
}
DRIVERS = {"cli", "check", "build", "__main__"}
# The runtime's parts, lowest first: each may import only those before it.
RUNTIME_PARTS = ("sandbox", "state", "host", "api", "cards", "pages", "flows")
RUNTIME_SHARED = {"contracts", "config"}
UI_CONTROL = PACKAGE / "server" / "ui_control"
# Server modules that import nothing of the server: any part may use them.
SERVER_LEAVES = {"skillc.server.caller", "skillc.server.registry", "skillc.server.snapshot_text"}


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
        if own in BASE and target not in ("", own):
            pytest.fail(f"{own} imports {module}")
        if target in ("", own) or target in BASE:
            continue
        assert target not in DRIVERS, f"{rel} imports the driver {module}"
        if own in ALLOWED:
            assert target in ALLOWED[own], f"{rel} imports {module}: {own} may use only {sorted(ALLOWED[own])}"


def _runtime_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["skillc", "runtime"] else None


def test_runtime_parts_are_packages() -> None:
    runtime = PACKAGE / "runtime"
    found = {p.name for p in runtime.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == set(RUNTIME_PARTS)
    loose = {p.stem for p in runtime.glob("*.py")} - {"__init__"}
    assert loose == RUNTIME_SHARED, f"runtime/ holds modules outside its parts: {sorted(loose - RUNTIME_SHARED)}"


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "runtime").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE / "runtime"))
)
def test_runtime_parts_point_down(path: Path) -> None:
    rel = path.relative_to(PACKAGE / "runtime")
    own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    for module in _imports(path):
        target = _runtime_part(module)
        if target is None or target == own:
            continue
        if own in RUNTIME_SHARED:
            assert target in RUNTIME_SHARED, f"runtime/{rel} imports {module}: contracts and config are under all parts"
            continue
        if own == "__init__" or target in RUNTIME_SHARED:
            continue
        assert RUNTIME_PARTS.index(target) < RUNTIME_PARTS.index(own), (
            f"runtime/{rel} imports {module}: {own} may use only {list(RUNTIME_PARTS[: RUNTIME_PARTS.index(own)])}"
        )


@pytest.mark.parametrize("path", sorted(UI_CONTROL.glob("*.py")), ids=lambda p: p.name)
def test_ui_control_knows_the_server_only_through_callables(path: Path) -> None:
    for module in _imports(path):
        if not module.startswith("skillc.server"):
            continue
        if path.name == "models.py":
            pytest.fail(f"ui_control/models.py (the contract) imports {module}")
        own = module == "skillc.server.ui_control" or module.startswith("skillc.server.ui_control.")
        assert own or module in SERVER_LEAVES, f"ui_control/{path.name} imports {module}"


@pytest.mark.parametrize("module", sorted(SERVER_LEAVES))
def test_server_leaves_import_nothing_of_the_server(module: str) -> None:
    path = PACKAGE.parent / (module.replace(".", "/") + ".py")
    assert [m for m in _imports(path) if m.startswith("skillc.server")] == []
