"""An @imported sheet is parsed once per check or build (skillc/frontend/wxss/parser.py SheetCache):
the other importers get its rules replayed, renumbered and under their own @media, exactly as a
fresh parse gives them; a changed text is parsed again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import skillc.frontend.wxss.parser as wxss_parser
from skillc.check import check_skill
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import SheetCache, parse_wxss

from .conftest import COFFEE

COMMON = """.van-ellipsis { overflow: hidden; color: red }
@media (min-width: 100px) { .wide { margin: 1px 2px } }
@font-face { font-family: "Brand"; src: url("https://example.com/a.woff") }
.bad { colr: red; width: 10qq }
"""
SOURCES = {
    "common/index.wxss": COMMON,
    "a/index.wxss": "@import '../common/index.wxss';\n.a { color: blue }\n",
    "b/index.wxss": ".b { color: green }\n@import '../common/index.wxss';\n",
    "c/index.wxss": (
        "@media (max-width: 300px) { .c { top: 0 } }\n@import '../common/index.wxss' (orientation: portrait);\n"
    ),
}


def parse_all(cache: SheetCache | None) -> list[tuple[object, list[str]]]:
    out: list[tuple[object, list[str]]] = []
    for file in ("a/index.wxss", "b/index.wxss", "c/index.wxss"):
        sink = DiagnosticSink()
        sheet = parse_wxss(SOURCES[file], file=file, sink=sink, load=SOURCES.get, cache=cache)
        out.append((sheet, [f"{d.file} {d.span} {d.code} {d.message}" for d in sink]))
    return out


def test_an_imported_sheet_is_parsed_once_and_gives_what_a_fresh_parse_gives() -> None:
    fresh = parse_all(None)
    cache = SheetCache()
    shared = parse_all(cache)
    assert shared == fresh  # same rules, order numbers, @media, font faces and diagnostics
    # Three importers and common/index.wxss: four parses, not six.
    assert cache.parses == 4
    assert any("common/index.wxss" in d for _, diags in shared for d in diags)  # its defects reported


def test_a_changed_imported_sheet_is_parsed_again() -> None:
    cache = SheetCache()
    parse_all(cache)
    before = cache.parses
    sink = DiagnosticSink()
    changed = {**SOURCES, "common/index.wxss": ".other { color: red }\n"}
    sheet = parse_wxss(changed["a/index.wxss"], file="a/index.wxss", sink=sink, load=changed.get, cache=cache)
    assert cache.parses == before + 2  # a/index.wxss and the new text of common/index.wxss
    assert [r.selectors[0].text for r in sheet.rules] == [".other", ".a"]


def test_a_sheet_that_imports_is_parsed_each_time() -> None:
    # What an @import yields depends on the chain that reaches it (cycles, the skill's bounds):
    # a sheet holding one is never replayed.
    cache = SheetCache()
    for _ in range(2):
        parse_wxss(SOURCES["a/index.wxss"], file="a/index.wxss", sink=DiagnosticSink(), load=SOURCES.get, cache=cache)
    assert cache.parses == 3  # a twice, common once


@pytest.fixture
def shared_import_skill(tmp_path: Path) -> Path:
    skill = Path(shutil.copytree(COFFEE, tmp_path / "coffee-skill"))
    (skill / "components" / "common.wxss").write_text(".shared { color: red }\n", encoding="utf-8")
    for sheet in (skill / "components").glob("*/index.wxss"):
        sheet.write_text("@import '../common.wxss';\n" + sheet.read_text(encoding="utf-8"), encoding="utf-8")
    return skill


def test_check_parses_a_sheet_all_components_import_once(
    shared_import_skill: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real = wxss_parser._Parser.sheet

    def counting(self: wxss_parser._Parser, text: str, file: str, media: tuple[object, ...]) -> None:
        if self.cache is None or self.cache.get(file, text) is None:
            parsed.append(file)
        real(self, text, file, media)  # type: ignore[arg-type]

    monkeypatch.setattr(wxss_parser._Parser, "sheet", counting)
    report = check_skill(shared_import_skill)
    components = sorted((shared_import_skill / "components").glob("*/index.wxss"))
    assert len(components) >= 3
    assert parsed.count("components/common.wxss") == 1
    assert len(parsed) == len(components) + 1
    assert report.counts.errors == 0
