"""`skillc check` on styles: the broken-styles fixture (one precise diagnostic per component) and the example."""

from __future__ import annotations

from click.testing import CliRunner

from skillc.check import check_path
from skillc.cli import main
from skillc.diagnostics import CATALOGUE

from .conftest import COFFEE, FIXTURES, ROOT

BROKEN = FIXTURES / "broken-styles"

# component -> the one code `skillc check` must report for it.
EXPECTED = {
    "attribute-selector": "WXSS018",  # [data-active] has no '=': WeChat's V006 lets it through
    "bad-string": "WXSS003",
    "child-combinator": "WXSS006",
    "css-variable": "WXSS009",
    "display-grid": "WXSS008",
    "gap": "WXSS007",
    "hover-pseudo": "WXSS006",
    "import-cycle": "WXSS014",
    "import-escape": "WXSS015",
    "keyframes": "WXSS011",
    "media-hover": "WXSS012",
    "missing-colon": "WXSS001",
    "missing-import": "WXSS013",
    "overflow": "WXSS007",
    "page-selector": "STY001",
    "position-fixed": "WXSS008",
    "stray-brace": "WXSS004",
    "text-decoration": "WXSS007",
    "unclosed-block": "WXSS002",
    "vh-unit": "WXSS010",
    "z-index": "WXSS007",
}


def test_fixture_components_match_the_table() -> None:
    assert {p.name for p in (BROKEN / "components").iterdir()} == set(EXPECTED)


def test_one_precise_diagnostic_per_component() -> None:
    [report] = check_path(BROKEN, "broken-styles")
    found = {d.file.split("/")[1]: d.code for d in report.diagnostics if d.file}
    assert len(report.diagnostics) == len(EXPECTED) == 21
    assert found == EXPECTED
    assert all(d.span is not None for d in report.diagnostics)
    assert all(d.code in CATALOGUE for d in report.diagnostics)


def test_broken_styles_check_output(snapshot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "tests/fixtures/broken-styles"])
    assert result.exit_code == 1
    assert result.output.endswith("checked 1 skill: 17 errors, 4 warnings (failed)\n")
    assert result.output == snapshot


def test_coffee_example_is_clean() -> None:
    [report] = check_path(COFFEE)
    assert report.diagnostics == []
