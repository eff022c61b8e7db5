"""WeChat's cli agent artefacts on Linux: `skillc agent execute` / `render --from-execute`, the
V019 destructive manifest and `check --format wxa`'s validate-report.json.

Every output is validated against a JSON Schema written from the official documentation of the
files (tests/fixtures/wxa/*.schema.json), and a CI script written for the official files
(tests/fixtures/wxa/ci-gate.mjs) reads ours. The commands run as a CI job runs them: a real
process, its exit code, the files it leaves.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from .conftest import COFFEE, FIXTURES

WXA = FIXTURES / "wxa"
NOTES = WXA / "notes-skill"


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((WXA / f"{name}.schema.json").read_text("utf-8"))
    return loaded


def skillc(*args: str | Path, chromium: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SKILLC_CHROMIUM": chromium} if chromium else None
    return subprocess.run(
        [sys.executable, "-m", "skillc", *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def execute(skill: Path, api: str, out: Path, args: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    done = skillc("agent", "execute", skill, api, "--args", json.dumps(args or {}), "--out", out)
    path = out / f"execute-result.{api}.json"
    assert path.is_file(), done.stderr
    doc = json.loads(path.read_text("utf-8"))
    jsonschema.validate(doc, schema("execute-result"))
    assert json.loads(done.stdout) == doc  # printed as written
    return done.returncode, doc


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A copy of the notes fixture: check and execute write cli-agent-run/ into it."""
    return Path(shutil.copytree(NOTES, tmp_path / "notes-skill"))


# -- execute -------------------------------------------------------------------------------------


def test_execute_writes_the_official_document_for_the_coffee_skill(tmp_path: Path) -> None:
    code, doc = execute(COFFEE, "searchDrinks", tmp_path, {"keyword": "latte"})
    assert code == 0
    assert doc["status"] == "ok" and doc["_meta"]["cliExitCode"] == 0
    assert doc["params"]["componentPath"] == "components/drink-list/index"
    assert doc["invokeResult"]["hasCard"] is True and doc["invokeResult"]["isError"] is False
    assert [d["id"] for d in doc["invokeResult"]["structuredContent"]["drinks"]] == ["d01", "d02", "d09"]
    assert any("searchDrinks took" in line for line in doc["consoleMessages"])
    assert all(line.startswith("[ai-mode] ") for line in doc["consoleMessages"])


@pytest.mark.parametrize(
    ("api", "args", "code", "status"),
    [
        ("listNotes", {}, 0, "ok"),  # pass
        ("tagNote", {"id": "n9", "tag": "x"}, 1, "ok"),  # the API reports isError: a fail
        ("countNotes", {}, 2, "error"),  # the handler throws: a runtime error
        ("clearNotes", {}, 3, "error"),  # no manifest, a V019 keyword: refused
    ],
)
def test_execute_exit_codes(
    notes: Path, tmp_path: Path, api: str, args: dict[str, Any], code: int, status: str
) -> None:
    got, doc = execute(notes, api, tmp_path / "run", args)
    assert (got, doc["status"], doc["_meta"]["cliExitCode"]) == (code, status, code)
    if code == 3:
        assert doc["_meta"]["diagnosis"]["type"] == "destructive-refused"
        assert "clear" in doc["_meta"]["diagnosis"]["hint"]
    if code == 2:
        assert "undefinedList" in doc["_meta"]["diagnosis"]["hint"]
    if code == 1:
        assert doc["invokeResult"]["isError"] is True


def test_a_structured_content_that_misses_the_output_schema_fails(tmp_path: Path) -> None:
    skill = Path(shutil.copytree(NOTES, tmp_path / "notes-skill"))
    api = skill / "apis" / "listNotes.js"
    api.write_text(api.read_text("utf-8").replace("total: notes.length", "total: 'three'"), "utf-8")
    code, doc = execute(skill, "listNotes", tmp_path / "run")
    assert (code, doc["status"], doc["invokeResult"]["isError"]) == (1, "ok", False)


# -- the destructive manifest --------------------------------------------------------------------


def decide(manifest: Path, **decisions: bool | None) -> None:
    doc = json.loads(manifest.read_text("utf-8"))
    for entry in doc["apis"]:
        if entry["apiName"] in decisions:
            entry["destructive"] = decisions[entry["apiName"]]
            entry["destructiveReason"] = "decided in review"
    manifest.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")


def wxa001(skill: Path) -> set[str]:
    done = skillc("check", "--format", "json", skill)
    diags = [d for unit in json.loads(done.stdout)["units"] for d in unit["diagnostics"]]
    return {d["message"].split(":")[0] for d in diags if d["code"] == "WXA001"}


def test_destructive_manifest_round_trip(notes: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    manifest = notes / "cli-agent-run" / "destructive-manifest.json"
    assert wxa001(notes) == {"clearNotes", "archiveNotes"}
    assert skillc("check", "--format", "wxa", notes).returncode == 1  # V019: undecided entries fail
    doc = json.loads(manifest.read_text("utf-8"))
    jsonschema.validate(doc, schema("destructive-manifest"))
    hits = {e["apiName"]: (e["hitKeyword"], e["hitField"], e["destructive"]) for e in doc["apis"]}
    assert hits == {"clearNotes": ("clear", "name", None), "archiveNotes": ("删除", "description", None)}
    assert execute(notes, "archiveNotes", run)[0] == 3  # null: refused

    decide(manifest, archiveNotes=False, clearNotes=True)
    assert wxa001(notes) == set()  # a decision either way silences the finding
    assert execute(notes, "archiveNotes", run)[0] == 0  # false: runs
    assert execute(notes, "clearNotes", run)[0] == 3  # true: refused
    assert execute(notes, "listNotes", run)[0] == 0  # not listed: runs

    # A rerun of the validator keeps the decisions someone made.
    assert skillc("check", "--format", "wxa", notes).returncode == 0
    kept = {e["apiName"]: (e["destructive"], e["destructiveReason"]) for e in json.loads(manifest.read_text())["apis"]}
    assert kept == {"clearNotes": (True, "decided in review"), "archiveNotes": (False, "decided in review")}

    decide(manifest, clearNotes=None)
    assert wxa001(notes) == {"clearNotes"}


def test_an_unreadable_manifest_refuses_and_warns(notes: Path, tmp_path: Path) -> None:
    manifest = notes / "cli-agent-run" / "destructive-manifest.json"
    manifest.parent.mkdir()
    manifest.write_text('{"apis": [{"apiName": "clearNotes", "destructive": "no"}]}', "utf-8")
    code, doc = execute(notes, "clearNotes", tmp_path / "run")
    assert code == 3 and "not a destructive manifest" in doc["_meta"]["diagnosis"]["hint"]
    assert execute(notes, "listNotes", tmp_path / "run")[0] == 3  # no decision can be read: nothing runs
    done = skillc("check", "--format", "json", notes)
    assert "WXA002" in {d["code"] for d in json.loads(done.stdout)["units"][0]["diagnostics"]}


# -- validate-report.json ------------------------------------------------------------------------


def test_validate_report_has_the_official_shape_and_rule_ids(tmp_path: Path) -> None:
    coffee = Path(shutil.copytree(COFFEE, tmp_path / "coffee-skill"))
    done = skillc("check", "--format", "wxa", coffee)
    report = json.loads((coffee / "cli-agent-run" / "validate-report.json").read_text("utf-8"))
    jsonschema.validate(report, schema("validate-report"))
    assert done.returncode == 0 and done.stdout.strip().endswith("RESULT: PASS")
    assert report["summary"]["errors"] == 0 and report["results"] == []
    assert {f"V{n:03d}" for n in range(1, 22) if n != 4} == set(report["rules"])
    assert report["rules"]["V019"] == {"stage": "static", "level": "error", "name": "destructive-api"}
    assert report["summary"]["passed"] == report["summary"]["total"] == 20
    assert not (coffee / "cli-agent-run" / "destructive-manifest.json").exists()  # no V019 hit: no manifest


def test_validate_report_results_carry_the_official_rule_of_each_finding(tmp_path: Path) -> None:
    skill = Path(shutil.copytree(NOTES, tmp_path / "notes-skill"))
    wxml = skill / "components" / "note-list" / "index.wxml"
    wxml.write_text(
        wxml.read_text("utf-8").replace('<text class="title">', '<input class="title"/><text class="title">')
    )
    done = skillc("check", "--format", "wxa", skill)
    report = json.loads((skill / "cli-agent-run" / "validate-report.json").read_text("utf-8"))
    jsonschema.validate(report, schema("validate-report"))
    by_rule = {(r["id"], r["level"], r.get("file")) for r in report["results"]}
    assert ("V003", "error", "components/note-list/index.wxml") in by_rule  # TPL001
    assert ("V019", "error", "mcp.json") in by_rule  # WXA001
    assert ("V015", "warning", "mcp.json") in by_rule  # MCP010
    summary = report["summary"]
    assert (summary["errors"], summary["warnings"]) == (3, 1)
    assert summary["failed"] == 2 and summary["passed"] == summary["total"] - 2
    assert done.returncode == 1 and "RESULT: FAIL (3 errors, 1 warnings)" in done.stdout
    assert "[ERROR] V003 card-wxml-components - TPL001" in done.stdout


# -- render --------------------------------------------------------------------------------------


def card_of(skill: Path, api: str, execute_doc: dict[str, Any]) -> Any:
    """The card skillc shows for an execute result (its size and layout estimate)."""
    from skillc.ir.viewport import Viewport
    from skillc.runtime.contracts import AtomicApiResult
    from skillc.wxa.execute import load
    from skillc.wxa.render import mount_card

    invoke = execute_doc["invokeResult"]
    result = AtomicApiResult.model_validate(
        {"content": invoke["content"], "structuredContent": invoke["structuredContent"]}
    )
    return asyncio.run(mount_card(load(skill), api, result, {}, Viewport())).card


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.chromium
def test_render_from_execute_writes_the_snapshot_tree_and_checks(chromium_path: str, tmp_path: Path) -> None:
    from tests.test_html_chromium import png_decode

    run = tmp_path / "run"
    assert execute(NOTES, "listNotes", run)[0] == 0
    result = run / "execute-result.listNotes.json"
    done = skillc("agent", "render", "--from-execute", result, "--skill", NOTES, "--out", run, chromium=chromium_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((run / "listNotes.json").read_text("utf-8"))
    jsonschema.validate(doc, schema("render-result"))
    assert doc["_meta"]["verify"] == {
        "passed": True,
        "checks": dict.fromkeys(
            ["statusOk", "commandIsRender", "hasSnapshot", "noInvokeError", "invokeResultOk"], True
        ),
    }
    png = (run / "listNotes.snapshot.png").read_bytes()
    assert doc["snapshot"]["absolutePath"] == str((run / "listNotes.snapshot.png").resolve())
    assert doc["snapshot"]["dataUrlLength"] == len("data:image/png;base64,") + (len(png) + 2) // 3 * 4
    width, height = png_size(png)
    card = card_of(NOTES, "listNotes", json.loads((run / "execute-result.listNotes.json").read_text("utf-8")))
    assert width == card.dimensions.width == 375
    # The whole card, as tall as its layout: Chromium's text metrics differ from the estimate by a few px.
    assert abs(height - card.content_height) <= 8 and card.dimensions.min_height <= height <= card.dimensions.max_height
    image = png_decode(png)
    # The pinned note's background (#ffe58f) and the card's (#fffbe6) are in the picture.
    pixels = {image.pixels[i : i + image.channels][:3] for i in range(0, len(image.pixels), image.channels)}
    assert bytes((0xFF, 0xE5, 0x8F)) in pixels and bytes((0xFF, 0xFB, 0xE6)) in pixels
    tree = doc["elementTree"].splitlines()
    assert tree[0] == '<view:view class="card">'
    assert '  <text:default-component class="title"> 我的笔记' in tree
    assert "  <(virtual):wx:for>" in tree
    assert '    <view:view class="note pinned">' in tree and '    <view:view class="note">' in tree
    assert "      <(virtual):wx:if>" in tree and '        <text:default-component class="pin"> PIN' in tree
    assert '      <text:default-component class="text"> Water the plants' in tree
    assert not any('class="empty"' in line for line in tree)  # the false wx:if draws nothing
    assert "[ai-mode] note-list showing 3 notes" in " ".join(doc["consoleMessages"]["snapshotCard"]).replace(
        "log: ", ""
    )


@pytest.mark.chromium
def test_render_exit_codes(chromium_path: str, notes: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"

    def render(path: Path) -> subprocess.CompletedProcess[str]:
        return skillc("agent", "render", "--from-execute", path, "--out", run, chromium=chromium_path)

    execute(notes, "tagNote", run, {"id": "n9", "tag": "x"})
    missing = render(run / "execute-result.tagNote.json")  # no structuredContent to draw
    assert missing.returncode == 2 and "structuredContent" in missing.stderr
    execute(notes, "listNotes", run)
    good = run / "execute-result.listNotes.json"
    assert render(good).returncode == 0  # the skill found from _meta.project and params.subpackage
    doc = json.loads(good.read_text("utf-8"))
    doc["invokeResult"]["isError"] = True
    bad = run / "execute-result.flagged.json"
    bad.write_text(json.dumps(doc), "utf-8")
    failed = render(bad)
    assert failed.returncode == 1
    out = json.loads((run / "listNotes.json").read_text("utf-8"))
    assert out["_meta"]["verify"]["passed"] is False and out["_meta"]["verify"]["checks"]["noInvokeError"] is False


# -- a CI script written for the official files --------------------------------------------------


@pytest.mark.chromium
def test_a_ci_script_for_the_official_files_reads_ours(chromium_path: str, node_bin: str, notes: Path) -> None:
    run = notes / "cli-agent-run"
    manifest = run / "destructive-manifest.json"
    assert skillc("check", "--format", "wxa", notes).returncode == 1
    decide(manifest, clearNotes=True, archiveNotes=False)
    assert skillc("check", "--format", "wxa", notes).returncode == 0
    assert skillc("agent", "execute", notes, "listNotes").returncode == 0  # default --out: cli-agent-run/
    done = skillc("agent", "render", "--from-execute", run / "execute-result.listNotes.json", chromium=chromium_path)
    assert done.returncode == 0, done.stderr
    gate = subprocess.run([node_bin, str(WXA / "ci-gate.mjs"), str(run)], capture_output=True, text=True, timeout=60)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "validate: 20/20 rules passed, 0 failed, 0 errors" in gate.stdout
    assert "execute listNotes: ok, exit 0, card true" in gate.stdout
    assert "render listNotes: verify true" in gate.stdout

    # The same script fails the job on what the official tools fail it on.
    assert skillc("agent", "execute", notes, "countNotes").returncode == 2
    decide(manifest, archiveNotes=None)
    assert skillc("check", "--format", "wxa", notes).returncode == 1
    gate = subprocess.run([node_bin, str(WXA / "ci-gate.mjs"), str(run)], capture_output=True, text=True, timeout=60)
    assert gate.returncode == 1
    assert "FAIL V019 destructive-api: mcp.json" in gate.stdout
    assert "FAIL execute countNotes exited 2" in gate.stdout


# -- the elementTree notation --------------------------------------------------------------------


def test_element_tree_prints_one_virtual_block_per_loop_item(tmp_path: Path) -> None:
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.package import load_skill
    from skillc.ir.component import compile_component
    from skillc.ir.evaluate import CardRenderer
    from skillc.wxa.element_tree import element_tree

    skill = Path(shutil.copytree(NOTES, tmp_path / "notes-skill"))
    (skill / "components" / "note-list" / "index.wxml").write_text(
        '<view class="card">\n'
        '  <block wx:for="{{notes}}" wx:key="id">\n'
        "    <text class=\"t {{item.pinned ? 'on' : ''}}\">{{item.text}}</text>\n"
        '    <view wx:if="{{item.pinned}}" class="pin">pinned</view>\n'
        "  </block>\n"
        "</view>\n",
        "utf-8",
    )
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    assert pkg is not None
    compiled = compile_component(pkg, "note-list", sink)
    assert compiled is not None
    renderer = CardRenderer(compiled)
    # Keys with a dot and a bracket: the ids must still be read segment by segment.
    notes = [{"id": "a.1", "text": "one", "pinned": True}, {"id": "b]2", "text": "two", "pinned": False}]
    doc = renderer.render({"notes": notes})
    assert element_tree(doc, compiled.template, renderer.element_classes()).splitlines() == [
        '<view:view class="card">',
        "  <(virtual):wx:for>",
        "    <(virtual):block>",
        '      <text:default-component class="t on"> one',
        "      <(virtual):wx:if>",
        '        <view:view class="pin">',
        "          pinned",
        "    <(virtual):block>",
        '      <text:default-component class="t"> two',
    ]


@pytest.mark.chromium
def test_in_a_project_the_files_live_in_the_project_s_cli_agent_run(chromium_path: str, tmp_path: Path) -> None:
    project = tmp_path / "miniprogram"
    shutil.copytree(NOTES, project / "skills" / "notes-skill")
    (project / "pages" / "index").mkdir(parents=True)
    app = {
        "pages": ["pages/index/index"],
        "subPackages": [{"root": "skills/", "pages": [], "independent": True}],
        "agent": {"skills": [{"name": "notes", "description": "Keeps notes.", "path": "skills/notes-skill"}]},
    }
    (project / "app.json").write_text(json.dumps(app), "utf-8")
    run = project / "cli-agent-run"
    skill = project / "skills" / "notes-skill"

    assert skillc("check", "--format", "wxa", project).returncode == 1
    report = json.loads((run / "validate-report.json").read_text("utf-8"))
    jsonschema.validate(report, schema("validate-report"))
    assert report["skillDirs"] == ["skills/notes-skill"]
    assert {r["file"] for r in report["results"] if r["id"] == "V019"} == {"skills/notes-skill/mcp.json"}
    assert not (skill / "cli-agent-run").exists()
    decide(run / "destructive-manifest.json", archiveNotes=False)
    assert wxa001(project) == {"clearNotes"}  # check reads the project's manifest back
    assert skillc("agent", "execute", skill, "archiveNotes").returncode == 0  # and so does execute
    assert skillc("agent", "execute", skill, "clearNotes").returncode == 3
    assert skillc("agent", "execute", skill, "listNotes").returncode == 0
    execute_doc = json.loads((run / "execute-result.listNotes.json").read_text("utf-8"))
    assert execute_doc["_meta"]["project"] == str(project.resolve())
    assert execute_doc["params"]["subpackage"] == "notes-skill"
    # render finds the skill from the project and the subpackage, and writes beside the result.
    done = skillc("agent", "render", "--from-execute", run / "execute-result.listNotes.json", chromium=chromium_path)
    assert done.returncode == 0, done.stderr
    assert (run / "listNotes.snapshot.png").is_file()
