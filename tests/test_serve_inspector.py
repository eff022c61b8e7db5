"""The MCP Inspector's CLI (an independent TypeScript client) against `skillc serve`, over stdio and HTTP.

The Inspector is pinned in tests/peers/package.json (`@modelcontextprotocol/inspector-cli`
0.21.1). Its CLI mode is ``mcp-inspector-cli --cli COMMAND ARGS... --method M [--uri U |
--prompt-name P | --tool-name T --tool-arg K=V]`` (stdio: it starts the command; options it does
not know stay the command's) or ``mcp-inspector-cli --cli URL --transport http --method M``, and
prints the result as JSON on stdout. (``--cli --method M ... -- COMMAND`` looks right but the
wrapper drops the ``--``, so a variadic option such as ``--tool-arg`` eats the command.)

0.21.1 finds its own package.json with a path relative to the *working directory*
(``fs.existsSync("../package.json")``) but imports it relative to the module (upstream
modelcontextprotocol/inspector#1334, #1503), so it only starts from a directory whose parent holds
a package.json; it runs from its own build/ folder here, and the server command uses absolute paths.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillc.server.runner import ServeHandle
from tests.conftest import COFFEE, require
from tests.test_server import coffee_server

__all__ = ["coffee_server"]  # the module-scoped coffee server of test_server.py

SKILL_MD_URI = "skill://coffee-skill/SKILL.md"


@pytest.fixture(scope="module")
def inspector(peers_dir: Path) -> Path:
    bin_path = peers_dir / ".bin" / "mcp-inspector-cli"
    require(bin_path.exists(), "the MCP Inspector CLI is not installed (make peers)")
    return bin_path


@pytest.fixture(scope="module")
def stdio_command(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    state = tmp_path_factory.mktemp("inspector-stdio-state")
    return [sys.executable, "-m", "skillc", "serve", "--stdio", str(COFFEE.resolve()), "--state-dir", str(state)]


@pytest.fixture(params=["stdio", "http"])
def ask(request: pytest.FixtureRequest, inspector: Path, stdio_command: list[str], coffee_server: ServeHandle) -> Any:
    """``ask(method, *options)``: the Inspector's JSON answer, over the transport of the test."""

    def run(method: str, *options: str) -> dict[str, Any]:
        if request.param == "stdio":
            command = [str(inspector), "--cli", *stdio_command, "--method", method, *options]
        else:
            command = [str(inspector), "--cli", coffee_server.url, "--transport", "http", "--method", method, *options]
        done = subprocess.run(
            command,
            cwd=inspector.resolve().parent,  # build/: see the module docstring
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{command}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    return run


def test_tools_list(ask: Any) -> None:
    names = [t["name"] for t in ask("tools/list")["tools"]]
    assert {"searchDrinks", "confirmOrder", "payOrder"} <= set(names)


def test_tools_call(ask: Any) -> None:
    result = ask("tools/call", "--tool-name", "searchDrinks", "--tool-arg", "keyword=latte")
    assert result.get("isError") is not True
    assert "Latte" in json.dumps(result["structuredContent"])


def test_prompts_list_and_get(ask: Any) -> None:
    skill_md = (COFFEE / "SKILL.md").read_text(encoding="utf-8")
    [prompt] = [p for p in ask("prompts/list")["prompts"] if p["name"] == "coffee-skill"]
    first_heading = next(line for line in skill_md.splitlines() if line.startswith("#")).lstrip("#").strip()
    assert prompt["title"] == first_heading
    paragraphs = [p.strip() for p in skill_md.split("\n\n") if p.strip() and not p.lstrip().startswith("#")]
    assert prompt["description"] == paragraphs[0]

    got = ask("prompts/get", "--prompt-name", "coffee-skill")
    [message] = got["messages"]
    assert message["role"] == "user"
    assert message["content"] == {"type": "text", "text": skill_md}


def test_skill_md_resource(ask: Any) -> None:
    listed = {r["uri"]: r for r in ask("resources/list")["resources"]}
    assert SKILL_MD_URI in listed and listed[SKILL_MD_URI]["mimeType"] == "text/markdown"
    assert "ui://coffee-skill/drink-list" in listed

    [contents] = ask("resources/read", "--uri", SKILL_MD_URI)["contents"]
    assert contents["uri"] == SKILL_MD_URI
    assert contents["mimeType"] == "text/markdown"
    # SKILL.md as agent hosts read it: the file, after the front matter they need (MCP Skills).
    assert contents["text"].endswith("---\n" + (COFFEE / "SKILL.md").read_text(encoding="utf-8"))
    assert contents["text"].startswith('---\nname: "coffee-skill"\ndescription: ')
