"""A folder that holds skill folders (no app.json listing them), as published collections are laid
out: `check` and `build` take each skill in it, by name; a folder with none is still SKL001."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from skillc.cli import main
from tests.conftest import FIXTURES

SHOP = FIXTURES / "gate-draws" / "shop-skill"
PREVIEW = FIXTURES / "storage-seed" / "preview-skill"


def _collection(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    root.mkdir()
    shutil.copytree(SHOP, root / "shop-skill")
    shutil.copytree(PREVIEW, root / "preview-skill")
    (root / "notes").mkdir()  # a folder that is not a skill is passed over
    (root / "README.md").write_text("a collection\n", encoding="utf-8")
    return root


def test_check_takes_each_skill_of_the_folder(tmp_path: Path) -> None:
    root = _collection(tmp_path)
    result = CliRunner().invoke(main, ["check", str(root), "--format", "json"])
    assert result.exit_code == 1  # the shop skill has errors; the preview skill is clean
    units = json.loads(result.output)["units"]
    assert [(u["name"], len(u["diagnostics"])) for u in units] == [("preview-skill", 0), ("shop-skill", 9)]
    text = CliRunner().invoke(main, ["check", str(root)])
    assert f"{root}/shop-skill/components/store-status/index.wxss:1:25: error[WXSS007]" in text.output
    assert text.output.rstrip().splitlines()[-1] == "checked 2 skills: 7 errors, 2 warnings (failed)"


def test_a_folder_without_skills_is_still_not_a_skill(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{tmp_path}: error[SKL001]: not a skill folder")
    assert "a folder of skill folders" in result.stderr


def test_build_takes_each_skill_of_the_folder(tmp_path: Path) -> None:
    root = _collection(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(root), "-o", str(out), "--backend", "json"])
    assert result.exit_code == 1  # shop-skill's errors; both are built
    assert (out / "preview-skill" / "components" / "store-list" / "template.json").is_file()
    assert (out / "shop-skill" / "components" / "store-status" / "template.json").is_file()
    assert "[2/2] building" in result.stderr
