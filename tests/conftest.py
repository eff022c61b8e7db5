"""Shared fixtures: paths, and the rule for optional tools (skip locally, fail under CI=true)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COFFEE = EXAMPLES / "coffee-skill"
FIXTURES = ROOT / "tests" / "fixtures"
PEERS = ROOT / "tests" / "peers"
IN_CI = os.environ.get("CI", "").lower() == "true"


def require(available: bool, reason: str) -> None:
    """Skip with a one-line reason when a tool is missing; under CI=true, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"CI=true but a required tool is missing: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def node_bin() -> str:
    node = shutil.which("node")
    require(node is not None, "node is not installed")
    assert node is not None
    return node


@pytest.fixture(scope="session")
def peers_dir(node_bin: str) -> Path:
    """tests/peers/node_modules, installed by `make test` from tests/peers/package-lock.json."""
    require((PEERS / "node_modules").is_dir(), "npm peer packages not installed (make peers)")
    return PEERS / "node_modules"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("SKILLC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    require(path is not None, "chromium is not installed (apt-get install chromium)")
    assert path is not None
    return path
