"""The broken-skill fixture set: one defect per folder, one precise diagnostic each (golden)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.check import NotASkill, check_path
from skillc.cli import main
from skillc.diagnostics import CATALOGUE, render_text

from ..conftest import FIXTURES

BROKEN = FIXTURES / "broken-skills"

# folder -> the codes `skillc check` must report, in output order.
EXPECTED: dict[str, list[str]] = {
    "api-description-missing": ["MCP006"],
    "api-input-schema-invalid": ["MCP008"],
    "api-input-schema-missing": ["MCP007"],
    "api-input-schema-not-object": ["MCP007"],
    "api-name-duplicate": ["MCP005"],
    # apis/hello.js is required by nothing: one info line says it is not skill code.
    "api-name-missing": ["SKL011", "MCP004"],
    "api-name-not-string": ["SKL011", "MCP003"],
    "api-not-registered": ["JS001"],
    "api-output-schema-invalid": ["MCP009"],
    "api-registered-undeclared": ["JS002"],
    "apis-missing": ["MCP002"],
    "apis-not-array": ["MCP002"],
    "component-file-missing": ["MCP011"],
    "component-json-not-component": ["CMP001"],
    "component-path-duplicate": ["MCP013"],
    "component-path-format": ["MCP021"],
    # The entry without "path" cannot be referenced, so the API's componentPath is unresolved too.
    "component-path-missing": ["MCP010", "MCP020"],
    "component-path-unresolved": ["MCP010"],
    "component-unreferenced": ["MCP017"],
    "components-not-array": ["MCP003"],
    "expirable-not-boolean": ["MCP015"],
    "handler-not-async": ["JS004"],
    "lowercase-skill-md": ["SKL003"],
    "mcp-json-bom": ["JSON004"],
    "mcp-json-duplicate-key": ["JSON003"],
    "mcp-json-missing-comma": ["JSON001"],
    "mcp-json-near-limit": ["MCP019"],
    "mcp-json-too-large": ["MCP018"],
    "mcp-json-top-level-array": ["MCP001"],
    "mcp-json-trailing-comma": ["JSON002"],
    "meta-ui-not-object": ["MCP003"],
    "missing-index-js": ["SKL007"],
    "missing-mcp-json": ["SKL006"],
    "missing-skill-md": ["SKL002"],
    "page-path-relative": ["MCP012"],
    "related-page-relative": ["MCP014"],
    "require-bare-module": ["JS003"],
    # The misspelt require leaves apis/hello.js unreached, which the info line says.
    "require-unresolved": ["SKL011", "JS003"],
    "scope-dynamic-desc": ["MCP016"],
    "skill-md-not-utf8": ["SKL005"],
    "skill-md-too-large": ["SKL004"],
}


def test_fixture_set_is_complete() -> None:
    on_disk = {p.name for p in BROKEN.iterdir() if p.is_dir()} - {"not-a-skill"}
    assert on_disk == set(EXPECTED)
    assert len({c for codes in EXPECTED.values() for c in codes}) >= 20


def _check_text(name: str) -> tuple[list[str], str]:
    [report] = check_path(BROKEN / name, name)
    codes = [d.code for d in report.diagnostics]
    return codes, render_text(report.diagnostics, report.sources, prefix=name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_skill(name: str, snapshot: object) -> None:
    codes, text = _check_text(name)
    assert codes == EXPECTED[name]
    assert text == snapshot


def test_every_code_used_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for codes in EXPECTED.values():
        for code in codes:
            assert code in CATALOGUE
            assert f"`{code}`" in docs


def test_not_a_skill_is_a_usage_error(snapshot: object) -> None:
    with pytest.raises(NotASkill) as info:
        check_path(BROKEN / "not-a-skill", "not-a-skill")
    assert info.value.diagnostic.code == "SKL001"
    result = CliRunner().invoke(main, ["check", str(BROKEN / "not-a-skill")])
    assert result.exit_code == 2
    assert "error[SKL001]: not a skill folder" in result.output


def test_symlink_out_of_the_skill(tmp_path: Path, snapshot: object) -> None:
    skill = tmp_path / "linked"
    shutil.copytree(BROKEN / "handler-not-async", skill)
    (skill / "apis" / "hello.js").write_text(
        "module.exports = async function hello () { return { content: [] } }\n", encoding="utf-8"
    )
    outside = tmp_path / "secret.js"
    outside.write_text("module.exports = 'secret'\n", encoding="utf-8")
    (skill / "apis" / "leak.js").symlink_to(outside)
    [report] = check_path(skill, "linked")
    assert [d.code for d in report.diagnostics] == ["SKL008"]
    assert report.diagnostics[0].file == "apis/leak.js"
    assert "apis/leak.js" not in report.sources
    assert render_text(report.diagnostics, report.sources, prefix="linked").replace(str(tmp_path), "<tmp>") == snapshot
