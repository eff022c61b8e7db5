"""docs/compatibility.md: every row has one of the four statuses, every code it names exists, and
every row names at least one test (`tests/file.py::test_name`) that exists."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from skillc.diagnostics import CATALOGUE

from .conftest import ROOT

DOC = ROOT / "docs" / "compatibility.md"
STATUSES = ("supported", "host boundary", "planned", "unsupported by design")
HEADER = ["feature", "status", "diagnostic", "notes"]
CODE = re.compile(r"`([A-Z]+[0-9]{3})`")
# `tests/dir/file.py::name` or `tests/file.py::Class::method`; a parametrised test is named without [id].
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+(?:::\w+)?)`")


def _cells(line: str) -> list[str]:
    # A `|` inside backticks (none today) would need escaping as \| in the Markdown anyway.
    return [c.strip() for c in line.strip().strip("|").split("|")]


def matrix_rows(text: str) -> list[tuple[str, list[str]]]:
    """(section, cells) of every row of every feature table."""
    rows: list[tuple[str, list[str]]] = []
    section, in_table = "", False
    for line in text.splitlines():
        if line.startswith("## "):
            section, in_table = line[3:], False
        elif line.startswith("|"):
            cells = _cells(line)
            if cells == HEADER:
                in_table = True
            elif in_table and not set(line) <= set("|-: "):
                rows.append((section, cells))
        else:
            in_table = False
    return rows


@cache
def _defined(path: Path) -> frozenset[str]:
    """The tests a file defines: top-level functions and classes, and ``Class::method``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}::{sub.name}"
                for sub in node.body
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return frozenset(names)


def reference_problems(where: str, notes: str, root: Path) -> list[str]:
    """What is wrong with the test references of one row's notes."""
    refs = TEST_REF.findall(notes)
    if not refs:
        return [f"{where}: the notes name no test (`tests/file.py::test_name`)"]
    found: list[str] = []
    for file, name in refs:
        path = root / file
        if not path.is_file():
            found.append(f"{where}: {file} does not exist")
        elif name not in _defined(path):
            found.append(f"{where}: {file} defines no {name}")
    return found


def problems(text: str, root: Path = ROOT) -> list[str]:
    found: list[str] = []
    rows = matrix_rows(text)
    if not rows:
        found.append("no feature table")
    for section, cells in rows:
        where = f"{section}: {cells[0] if cells else '?'}"
        if len(cells) != len(HEADER):
            found.append(f"{where}: {len(cells)} cells, expected {len(HEADER)}")
            continue
        _feature, status, diagnostic, notes = cells
        if status not in STATUSES:
            found.append(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
        codes = CODE.findall(diagnostic)
        if diagnostic != "—" and CODE.sub("", diagnostic).strip():
            found.append(f"{where}: the diagnostic column holds something besides codes: {diagnostic!r}")
        if status == "unsupported by design" and not codes:
            found.append(f"{where}: an unsupported feature must name the diagnostic a skill gets")
        found += reference_problems(where, notes, root)
    for code in sorted(set(CODE.findall(text))):
        if code not in CATALOGUE:
            found.append(f"{code} is named in docs/compatibility.md but is not in the catalogue")
    return found


def test_compatibility_matrix_is_consistent() -> None:
    assert problems(DOC.read_text("utf-8")) == []


RULES_HEADER = ["rule", "checks", "codes", "severity", "tests"]
OFFICIAL_RULES = tuple(f"V{n:03d}" for n in range(1, 22))


def rule_problems(text: str, root: Path = ROOT) -> list[str]:
    """What is wrong with the table of official rules: each of V001-V021 once, codes from the
    catalogue, a severity column that is the set of the codes' severities, tests that exist."""
    found: list[str] = []
    rows: list[list[str]] = []
    in_table = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if cells == RULES_HEADER:
            in_table = True
        elif in_table and not set(line) <= set("|-: "):
            rows.append(cells)
    rules = [cells[0] for cells in rows]
    if sorted(rules) != list(OFFICIAL_RULES):
        found.append(f"the official rules table lists {rules}, expected each of V001-V021 once")
    for cells in rows:
        if len(cells) != len(RULES_HEADER):
            found.append(f"{cells[0]}: {len(cells)} cells, expected {len(RULES_HEADER)}")
            continue
        rule, _checks, codes_cell, severity, tests = cells
        codes = CODE.findall(codes_cell)
        missing = [c for c in codes if c not in CATALOGUE]
        if missing:
            found.append(f"{rule}: {', '.join(missing)} not in the catalogue")
            continue
        if not codes:
            if (codes_cell, severity, tests) != ("—", "—", "—"):
                found.append(f"{rule}: a rule without codes has — for codes, severity and tests")
            continue
        want = {CATALOGUE[c].severity.value for c in codes}
        got = {s.strip() for s in severity.split(",")}
        if got != want:
            found.append(f"{rule}: severity {severity!r}, the catalogue says {', '.join(sorted(want))}")
        found += reference_problems(rule, tests, root)
    return found


def test_the_official_rules_table_is_complete_and_true() -> None:
    assert rule_problems(DOC.read_text("utf-8")) == []


def test_the_rules_checker_catches_each_defect() -> None:
    head = "| rule | checks | codes | severity | tests |\n|---|---|---|---|---|\n"
    rest = "".join(f"| {r} | x | — | — | — |\n" for r in OFFICIAL_RULES[1:])
    ok = f"| V001 | x | `JS003` | error | {PROVED} |\n"
    assert rule_problems(head + ok + rest) == []
    assert rule_problems(head + rest) == [
        f"the official rules table lists {list(OFFICIAL_RULES[1:])}, expected each of V001-V021 once"
    ]
    assert rule_problems(head + ok.replace("error", "warning") + rest) == [
        "V001: severity 'warning', the catalogue says error"
    ]
    assert rule_problems(head + ok.replace("JS003", "JS999") + rest) == ["V001: JS999 not in the catalogue"]
    assert rule_problems(head + "| V001 | x | `JS003` | error | none |\n" + rest) == [
        "V001: the notes name no test (`tests/file.py::test_name`)"
    ]
    assert rule_problems(head + "| V001 | x | — | error | — |\n" + rest) == [
        "V001: a rule without codes has — for codes, severity and tests"
    ]


PROVED = "`tests/test_cli_compat_doc.py::test_the_checker_catches_each_defect`"


def test_the_checker_catches_each_defect() -> None:
    table = "## S\n\n| feature | status | diagnostic | notes |\n|---|---|---|---|\n"
    assert problems(table + f"| a | supported | `JSON001` | {PROVED} |\n") == []
    assert problems(table + f"| a | maybe | — | {PROVED} |\n") == [
        "S: a: status 'maybe' is not one of supported, host boundary, planned, unsupported by design"
    ]
    assert problems(table + f"| a | planned | `NOPE999` | {PROVED} |\n") == [
        "NOPE999 is named in docs/compatibility.md but is not in the catalogue"
    ]
    assert problems(table + f"| a | unsupported by design | — | {PROVED} |\n") == [
        "S: a: an unsupported feature must name the diagnostic a skill gets"
    ]
    assert problems(table + f"| a | supported | JSON001 | {PROVED} |\n") == [
        "S: a: the diagnostic column holds something besides codes: 'JSON001'"
    ]
    assert problems(table + "| a | supported |\n") == ["S: a: 2 cells, expected 4"]
    assert problems("# nothing\n") == ["no feature table"]


def test_the_checker_wants_a_test_that_exists_in_every_row(tmp_path: Path) -> None:
    table = "## S\n\n| feature | status | diagnostic | notes |\n|---|---|---|---|\n"
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "sub" / "test_x.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', [1])\ndef test_one(n):\n    pass\n\n\n"
        "class TestGroup:\n    def test_two(self):\n        pass\n"
    )
    ok = "`tests/sub/test_x.py::test_one`, `tests/sub/test_x.py::TestGroup::test_two`"
    assert problems(table + f"| a | supported | — | why: {ok} |\n", tmp_path) == []
    assert problems(table + "| a | supported | — | why, but no test |\n", tmp_path) == [
        "S: a: the notes name no test (`tests/file.py::test_name`)"
    ]
    assert problems(table + "| a | supported | — | `tests/sub/test_x.py` |\n", tmp_path) == [
        "S: a: the notes name no test (`tests/file.py::test_name`)"
    ]
    assert problems(table + "| a | supported | — | `tests/sub/test_x.py::test_onee` |\n", tmp_path) == [
        "S: a: tests/sub/test_x.py defines no test_onee"
    ]
    assert problems(table + "| a | supported | — | `tests/sub/test_x.py::TestGroup::test_three` |\n", tmp_path) == [
        "S: a: tests/sub/test_x.py defines no TestGroup::test_three"
    ]
    assert problems(table + "| a | supported | — | `tests/test_gone.py::test_one` |\n", tmp_path) == [
        "S: a: tests/test_gone.py does not exist"
    ]
