"""`skillc build` and `skillc render`: outputs, manifest, caching, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from skillc.build import MANIFEST, BuildOptions, build_skill
from skillc.cli import main

from .conftest import COFFEE


def _copy(tmp_path: Path) -> Path:
    skill = tmp_path / "coffee-skill"
    shutil.copytree(COFFEE, skill)
    return skill


def test_second_build_recompiles_nothing(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    options = BuildOptions(out_dir=tmp_path / "out")
    first = build_skill(skill, options)
    assert first is not None and first.errors == 0
    assert [c.status for c in first.components] == ["compiled"] * 3
    outputs = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    # 3 cards x (template + stylesheet + 1 preview x 2 viewports x 3 backends) + the manifest
    assert len(outputs) == 3 * 8 + 1
    second = build_skill(skill, options)
    assert second is not None
    assert [c.status for c in second.components] == ["cached"] * 3
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == outputs

    # Touch one stylesheet: only that card recompiles.
    wxss = skill / "components" / "order-confirm" / "index.wxss"
    wxss.write_text(wxss.read_text("utf-8").replace("#c8742c", "#b5651d"), "utf-8")
    third = build_skill(skill, options)
    assert third is not None
    assert {c.name: c.status for c in third.components} == {
        "drink-list": "cached",
        "order-confirm": "compiled",
        "payment-result": "cached",
    }
    # A deleted output is rebuilt.
    (tmp_path / "out" / "coffee-skill" / "components" / "drink-list" / "template.json").unlink()
    fourth = build_skill(skill, options)
    assert fourth is not None
    assert {c.name: c.status for c in fourth.components}["drink-list"] == "compiled"


def test_manifest_records_hashes(tmp_path: Path) -> None:
    build_skill(_copy(tmp_path), BuildOptions(out_dir=tmp_path / "out"))
    manifest = json.loads((tmp_path / "out" / "coffee-skill" / MANIFEST).read_text("utf-8"))
    entry = manifest["components"]["drink-list"]
    assert entry["inputs"] == ["components/drink-list/index.wxml", "components/drink-list/index.wxss"]
    assert "components/drink-list/render/preview.414-dark.html" in entry["outputs"]
    assert all(len(h) == 64 for h in entry["outputs"].values())
    template = json.loads((tmp_path / "out" / "coffee-skill" / "components/drink-list/template.json").read_text())
    assert template["version"] == 1 and template["file"] == "components/drink-list/index.wxml"


def test_build_cli_and_bad_data(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", "utf-8")
    result = CliRunner().invoke(
        main,
        ["build", str(_copy(tmp_path)), "-o", str(tmp_path / "o"), "--backend", "json", "--data", f"drink-list={bad}"],
    )
    assert result.exit_code == 1
    assert "error[RND004]: data file 'bad' must hold a JSON object" in result.output
    assert "built" in result.output
    assert CliRunner().invoke(main, ["build", str(COFFEE), "--viewport", "wide"]).exit_code == 2
    assert CliRunner().invoke(main, ["build", str(COFFEE), "--data", "nofile"]).exit_code == 2


def test_render_cli() -> None:
    result = CliRunner().invoke(main, ["render", str(COFFEE), "payment-result", "--backend", "json", "--width", "414"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["viewport"]["width"] == 414 and doc["root"]["id"] == "root"
    html = CliRunner().invoke(main, ["render", str(COFFEE), "drink-list", "--color-scheme", "dark"])
    assert html.exit_code == 0 and html.output.startswith("<!DOCTYPE html>")
    assert CliRunner().invoke(main, ["render", str(COFFEE), "nope"]).exit_code == 2
    unknown = CliRunner().invoke(main, ["render", str(COFFEE), "drink-list", "--backend", "pdf"])
    assert unknown.exit_code == 2 and "RND101" in unknown.output


def test_schema_cli_matches_real_output() -> None:
    import jsonschema

    schema = json.loads(CliRunner().invoke(main, ["schema", "render-ir"]).output)
    doc = json.loads(CliRunner().invoke(main, ["render", str(COFFEE), "order-confirm", "--backend", "json"]).output)
    jsonschema.validate(doc, schema)
    assert CliRunner().invoke(main, ["schema", "patches"]).exit_code == 0
