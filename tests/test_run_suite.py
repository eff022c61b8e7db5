"""`make test`'s runner: both halves run whatever the first gives, the skips are grouped by reason,
and the closing lines add up (tests/run_suite.py, tests/skip_summary.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.run_suite import Half, halves_for, parse_closing, run, summary

SKIPPING = """
import os
import pytest

@pytest.mark.parametrize("i", range(3))
def test_needs_node(i):
    pytest.skip("node is not installed")

@pytest.mark.skipif(True, reason="no PostgreSQL: set X")
def test_needs_postgres():
    pass

def test_passes():
    pass

def test_fails_in_the_first_half():
    assert os.environ.get("HALF") != "first"
"""


@pytest.mark.parametrize(
    ("line", "body", "counts"),
    [
        ("31 passed in 5.11s", "31 passed in 5.11s", {"passed": 31}),
        (
            "===== 2850 passed, 12 skipped, 3 warnings in 711.20s (0:11:51) =====",
            "2850 passed, 12 skipped, 3 warnings in 711.20s (0:11:51)",
            {"passed": 2850, "skipped": 12, "warnings": 0},
        ),
        (
            "==== 1 failed, 2 errors, 1 skipped in 0.07s ====",
            "1 failed, 2 errors, 1 skipped in 0.07s",
            {"failed": 1, "error": 2, "skipped": 1},
        ),
        ("no tests ran in 0.01s", "no tests ran in 0.01s", {}),
    ],
)
def test_closing_lines_of_both_verbosities_parse(line: str, body: str, counts: dict[str, int]) -> None:
    parsed = parse_closing(line)
    assert parsed is not None
    assert parsed[0] == body
    assert {k: v for k, v in parsed[1].items() if v} == {k: v for k, v in counts.items() if v}


@pytest.mark.parametrize("line", ["........ [100%]", "tests/test_x.py::test_a PASSED in 2s later", "passed in 3s"])
def test_other_lines_are_not_closing_lines(line: str) -> None:
    assert parse_closing(line) is None


def test_the_postgresql_half_follows_the_sqlite_half_with_the_same_arguments() -> None:
    sqlite, postgres = halves_for(["-x", "tests/test_a.py"], {})
    assert sqlite.args == ["-x", "tests/test_a.py"]
    assert postgres.args[-3:] == ["--state-store=postgresql", "-x", "tests/test_a.py"]
    _, narrowed = halves_for([], {"PG_TESTS": "tests/test_b.py tests/test_c.py"})
    assert narrowed.args[-3:] == ["--state-store=postgresql", "tests/test_b.py", "tests/test_c.py"]


def test_a_half_that_failed_with_nothing_counted_counts_as_one_failure() -> None:
    crashed = Half("SQLite", [], exit_code=-9)
    empty = Half("PostgreSQL", [], exit_code=5, closing="no tests ran in 0.01s")
    lines = summary([crashed, empty])
    assert lines[-1] == "tests: 0 passed, 2 failed, 0 skipped"
    assert "SQLite:     no closing line (exit -9, 0 s)" in lines


def test_both_halves_run_when_the_first_fails_and_skips_are_grouped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    test = tmp_path / "test_halves.py"
    test.write_text(SKIPPING, encoding="utf-8")
    plugin = ["-p", "tests.skip_summary", "-p", "no:cacheprovider", f"--rootdir={tmp_path}", str(test)]
    # Each half sees HALF in its environment; the first one's failing test fails only there.
    first, second = Half("first", plugin), Half("second", ["-q", *plugin])
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HALF", "first")
    import tests.run_suite as runner

    real_run_half = runner.run_half

    def run_half_with_env(half: Half) -> None:
        monkeypatch.setenv("HALF", half.name)
        real_run_half(half)

    monkeypatch.setattr(runner, "run_half", run_half_with_env)
    assert run([first, second]) == 1
    assert first.exit_code == 1 and second.exit_code == 0
    assert first.counts == Counter({"failed": 1, "passed": 1, "skipped": 4})
    assert second.counts == Counter({"passed": 2, "skipped": 4})
    assert first.skips == Counter({"node is not installed": 3, "no PostgreSQL: set X": 1})
    out = capsys.readouterr().out
    tail = out[out.index("both state stores") :].splitlines()
    assert tail[-6:] == [
        "skipped, by reason (8 in all):",
        "     3  [first] node is not installed",
        "     3  [second] node is not installed",
        "     1  [first] no PostgreSQL: set X",
        "     1  [second] no PostgreSQL: set X",
        "tests: 3 passed, 1 failed, 8 skipped",
    ]
    # Each half printed its own grouped reasons, not one SKIPPED line per test.
    assert out.count("4 skipped, by reason") == 2
    assert "SKIPPED [" not in out


def test_the_skip_report_file_holds_the_counts(tmp_path: Path) -> None:
    test = tmp_path / "test_halves.py"
    test.write_text(SKIPPING, encoding="utf-8")
    report = tmp_path / "skips.json"
    command = [sys.executable, "-m", "pytest", "-p", "tests.skip_summary", "-p", "no:cacheprovider",
               f"--rootdir={tmp_path}", f"--skip-report={report}", str(test)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    assert json.loads(report.read_text(encoding="utf-8")) == {"node is not installed": 3, "no PostgreSQL: set X": 1}
    assert "     3  node is not installed\n     1  no PostgreSQL: set X\n" in done.stdout
