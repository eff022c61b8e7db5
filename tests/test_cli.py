"""The CLI as a user meets it: help, version, check on skills and projects, exit codes, JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc import __version__
from skillc.cli import main

from .conftest import COFFEE, FIXTURES, ROOT


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_version() -> None:
    assert run("--version") == (0, f"skillc, version {__version__}\n")


def test_every_command_explains_itself_with_an_example() -> None:
    code, out = run("--help")
    assert code == 0
    commands = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.startswith("  ")]
    assert "check" in commands
    for command in commands:
        code, text = run(command, "--help")
        assert code == 0, command
        assert "Example" in text, f"`skillc {command} --help` has no example"


def test_check_coffee_is_clean() -> None:
    code, out = run("check", str(COFFEE))
    assert code == 0
    assert out.strip().endswith("checked 1 skill: 0 errors, 0 warnings (ok)")


def test_check_json_parses() -> None:
    code, out = run("check", "--format", "json", str(COFFEE))
    assert code == 0
    doc = json.loads(out)
    assert doc["errors"] == 0 and doc["units"][0]["name"] == "coffee-skill"


def test_check_exit_codes() -> None:
    assert run("check", str(FIXTURES / "broken-skills" / "component-unreferenced"))[0] == 0  # warnings only
    assert run("check", str(FIXTURES / "broken-skills" / "mcp-json-bom"))[0] == 1
    assert run("check", str(FIXTURES / "does-not-exist"))[0] == 2
    assert run("check", "--format", "yaml", str(COFFEE))[0] == 2


def test_check_json_of_errors() -> None:
    code, out = run("check", "--format", "json", str(FIXTURES / "broken-skills" / "mcp-json-duplicate-key"))
    assert code == 1
    [unit] = json.loads(out)["units"]
    [diag] = unit["diagnostics"]
    assert diag["code"] == "JSON003" and diag["span"]["line"] == 6


def _project(tmp_path: Path, skills: str) -> Path:
    (tmp_path / "skills").mkdir()
    shutil.copytree(COFFEE, tmp_path / "skills" / "coffee-skill")
    (tmp_path / "app.json").write_text(
        '{\n  "pages": ["pages/index/index"],\n  "agent": {\n    "skills": ' + skills + "\n  }\n}\n", encoding="utf-8"
    )
    return tmp_path


def test_check_project_folder(tmp_path: Path) -> None:
    project = _project(tmp_path, '[{"name": "coffee", "description": "order coffee", "path": "skills/coffee-skill"}]')
    code, out = run("check", "--format", "json", str(project))
    assert code == 0
    units = json.loads(out)["units"]
    assert [u["kind"] for u in units] == ["project", "skill"]
    assert units[1]["path"].endswith("skills/coffee-skill")


def test_check_project_with_bad_skill_entries(tmp_path: Path) -> None:
    project = _project(tmp_path, '[{"name": "x"}, {"name": "y", "path": "skills/nope"}]')
    code, out = run("check", str(project))
    assert code == 1
    assert 'app.json:4:16: error[PRJ002]: agent.skills[0] needs a "path"' in out
    assert 'error[PRJ002]: agent.skills[1].path "skills/nope" is not a folder inside the project' in out


def test_check_project_without_skills(tmp_path: Path) -> None:
    (tmp_path / "app.json").write_text('{"pages": []}', encoding="utf-8")
    code, out = run("check", str(tmp_path))
    assert code == 1
    assert "error[PRJ001]" in out


def test_codes_command() -> None:
    assert run("codes", "mcp010")[1].startswith("MCP010 (warning): ")
    assert run("codes", "XYZ123")[0] == 2
    code, out = run("codes", "--markdown")
    assert code == 0 and out == (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [["-m", "skillc", "--version"]])
def test_python_dash_m(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"skillc, version {__version__}"
