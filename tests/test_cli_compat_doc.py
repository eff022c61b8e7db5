"""docs/compatibility.md: every row has one of the four statuses, and every code it names exists."""

from __future__ import annotations

import re

from skillc.diagnostics import CATALOGUE

from .conftest import ROOT

DOC = ROOT / "docs" / "compatibility.md"
STATUSES = ("supported", "host boundary", "planned", "unsupported by design")
HEADER = ["feature", "status", "diagnostic", "notes"]
CODE = re.compile(r"`([A-Z]+[0-9]{3})`")


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


def problems(text: str) -> list[str]:
    found: list[str] = []
    rows = matrix_rows(text)
    if not rows:
        found.append("no feature table")
    for section, cells in rows:
        where = f"{section}: {cells[0] if cells else '?'}"
        if len(cells) != len(HEADER):
            found.append(f"{where}: {len(cells)} cells, expected {len(HEADER)}")
            continue
        _feature, status, diagnostic, _notes = cells
        if status not in STATUSES:
            found.append(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
        codes = CODE.findall(diagnostic)
        if diagnostic != "—" and CODE.sub("", diagnostic).strip():
            found.append(f"{where}: the diagnostic column holds something besides codes: {diagnostic!r}")
        if status == "unsupported by design" and not codes:
            found.append(f"{where}: an unsupported feature must name the diagnostic a skill gets")
    for code in sorted(set(CODE.findall(text))):
        if code not in CATALOGUE:
            found.append(f"{code} is named in docs/compatibility.md but is not in the catalogue")
    return found


def test_compatibility_matrix_is_consistent() -> None:
    assert problems(DOC.read_text("utf-8")) == []


def test_the_checker_catches_each_defect() -> None:
    table = "## S\n\n| feature | status | diagnostic | notes |\n|---|---|---|---|\n"
    assert problems(table + "| a | supported | `JSON001` | |\n") == []
    assert problems(table + "| a | maybe | — | |\n") == [
        "S: a: status 'maybe' is not one of supported, host boundary, planned, unsupported by design"
    ]
    assert problems(table + "| a | planned | `NOPE999` | |\n") == [
        "NOPE999 is named in docs/compatibility.md but is not in the catalogue"
    ]
    assert problems(table + "| a | unsupported by design | — | |\n") == [
        "S: a: an unsupported feature must name the diagnostic a skill gets"
    ]
    assert problems(table + "| a | supported | JSON001 | |\n") == [
        "S: a: the diagnostic column holds something besides codes: 'JSON001'"
    ]
    assert problems(table + "| a | supported |\n") == ["S: a: 2 cells, expected 4"]
    assert problems("# nothing\n") == ["no feature table"]
