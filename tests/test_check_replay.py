"""`skillc check` replays the outcome of an earlier check of unchanged inputs (skillc/check_cache.py):
the same bytes on stdout and stderr and the same exit status, without running the compiler. Any
change to what the check read (a file's content even at the same size and time, a file created
where the check only looked for one, the compiler's own modules) runs the check again.

The spy counts calls to the real ``check_path``; nothing is replaced."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import skillc.check
from skillc import check_cache
from skillc.cli import main

from .conftest import COFFEE

PAST = time.time() - 3600


def _age(root: Path) -> None:
    """Files and folders an hour old: older than the settling window, as a skill at rest is."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (PAST, PAST))
        os.utime(folder, (PAST, PAST))


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    root = Path(shutil.copytree(COFFEE, tmp_path / "coffee-skill"))
    _age(root)
    return root


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The paths the real check ran on, in order."""
    seen: list[Path] = []
    real = skillc.check.check_path

    def counting(path: Path, display: str | None = None) -> list[skillc.check.CheckReport]:
        seen.append(path)
        return real(path, display)

    monkeypatch.setattr(skillc.check, "check_path", counting)
    yield seen


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", *args])


def entries(home: Path) -> list[Path]:
    return sorted((home / "skillc" / "check").glob("*.json"))


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_second_check_of_unchanged_files_replays_the_first(
    skill: Path, cache_home: Path, checks: list[Path], fmt: str
) -> None:
    (skill / "mcp.json").write_text('{"apis": [,]}', encoding="utf-8")  # errors: exit 1, a listing
    _age(skill)
    first = run("--format", fmt, str(skill))
    assert first.exit_code == 1 and len(checks) == 1
    second = run("--format", fmt, str(skill))
    assert len(checks) == 1  # replayed
    assert (second.exit_code, second.stdout, second.stderr) == (first.exit_code, first.stdout, first.stderr)
    assert "mcp.json" in second.stdout + second.stderr


def test_each_format_and_quiet_is_its_own_entry(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    run(str(skill))
    run("--quiet", str(skill))
    run("--format", "json", str(skill))
    assert len(checks) == 3 and len(entries(cache_home)) == 3


def test_a_changed_file_of_the_same_size_and_time_is_checked_again(
    skill: Path, cache_home: Path, checks: list[Path]
) -> None:
    assert run(str(skill)).exit_code == 0
    target = skill / "components" / "drink-list" / "index.wxml"
    text = target.read_text(encoding="utf-8")
    assert "<view" in text
    target.write_text(text.replace("<view", "<viex", 1), encoding="utf-8")  # same size
    os.utime(target, (PAST, PAST))  # and the same time
    again = run(str(skill))
    assert len(checks) == 2
    assert "viex" in again.stdout


def test_a_file_created_where_the_check_looked_is_seen(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    (skill / "components" / "drink-list" / "index.wxss").unlink()
    _age(skill)
    first = run(str(skill))
    assert "MCP011" in first.stdout and first.exit_code == 1
    (skill / "components" / "drink-list" / "index.wxss").write_text(".a { color: red; }\n", encoding="utf-8")
    _age(skill)  # even with every time turned back, the folder's names changed
    second = run(str(skill))
    assert len(checks) == 2
    assert "MCP011" not in second.stdout and second.exit_code == 0


def test_a_new_file_deep_in_the_tree_is_seen(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    run(str(skill))
    (skill / "apis" / "extra").mkdir()
    (skill / "apis" / "extra" / "x.js").write_text("module.exports = {};\n", encoding="utf-8")
    _age(skill)
    run(str(skill))
    assert len(checks) == 2


def test_a_changed_compiler_module_runs_the_check_again(
    skill: Path, cache_home: Path, checks: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module loaded in the process stands for skillc or one of its libraries being upgraded.
    source = tmp_path / "rule_module.py"
    source.write_text("RULE = 1\n", encoding="utf-8")
    module = types.ModuleType("skillc_test_rule_module")
    module.__file__ = str(source)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    run(str(skill))
    run(str(skill))
    assert len(checks) == 1
    source.write_text("RULE = 22\n", encoding="utf-8")
    run(str(skill))
    assert len(checks) == 2


def test_a_file_that_changed_during_the_check_is_not_remembered(
    skill: Path, cache_home: Path, checks: list[Path]
) -> None:
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text(encoding="utf-8"), encoding="utf-8")  # now
    run(str(skill))
    run(str(skill))
    assert len(checks) == 2 and entries(cache_home) == []


def test_a_corrupted_entry_is_a_miss_and_is_rewritten(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    first = run(str(skill))
    [entry] = entries(cache_home)
    entry.write_text("{not json", encoding="utf-8")
    second = run(str(skill))
    assert len(checks) == 2 and second.stdout == first.stdout
    assert json.loads(entry.read_text(encoding="utf-8"))["format"] == check_cache.FORMAT


def test_an_entry_others_may_write_is_never_replayed(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    run(str(skill))
    [entry] = entries(cache_home)
    body = json.loads(entry.read_text(encoding="utf-8"))
    body["writes"] = [["checked 1 skill: 0 errors, 0 warnings (planted)", False, True, False]]
    entry.write_text(json.dumps(body), encoding="utf-8")
    os.chmod(entry, 0o666)
    planted = run(str(skill))
    assert len(checks) == 2 and "planted" not in planted.stdout
    # The counterpart: the same entry, private, is believed.
    entry.write_text(json.dumps(body), encoding="utf-8")
    os.chmod(entry, 0o600)
    assert "planted" in run(str(skill)).stdout and len(checks) == 2


def test_the_entries_are_bounded(skill: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_cache, "_MAX_ENTRIES", 2)
    for args in (["--quiet"], ["--format", "json"], ["--format", "github"]):
        run(*args, str(skill))
    assert len(entries(cache_home)) == 2


def test_the_wxa_format_writes_its_files_every_time(skill: Path, cache_home: Path, checks: list[Path]) -> None:
    # It writes WeChat's files beside the skill: a replay would leave a deleted report deleted.
    report = skill / "cli-agent-run" / "validate-report.json"
    run("--format", "wxa", str(skill))
    assert report.is_file()
    report.unlink()
    _age(skill)
    run("--format", "wxa", str(skill))
    assert len(checks) == 2 and report.is_file() and entries(cache_home) == []


def test_a_skill_appearing_in_a_folder_the_check_only_probed_is_seen(
    tmp_path: Path, cache_home: Path, checks: list[Path]
) -> None:
    # `check skills/` asks each child folder whether it holds SKILL.md or mcp.json without
    # listing it; the check's own walk of the tree sees the files arrive.
    skills = tmp_path / "skills"
    (skills / "later").mkdir(parents=True)
    _age(skills)
    first = run(str(skills))
    assert first.exit_code == 2
    shutil.copytree(COFFEE, skills / "later", dirs_exist_ok=True)
    _age(skills)
    second = run(str(skills))
    assert len(checks) == 2
    assert second.exit_code == 0 and "checked 1 skill" in second.stdout
