"""`render --result`, `call` / `run` output and usage errors, stale build outputs, one --width."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.build import BuildOptions, build_skill, parse_viewport
from skillc.cli import main

from .conftest import COFFEE, FIXTURES


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return str(path)


def _texts(doc: dict[str, object]) -> list[str]:
    found: list[str] = []

    def walk(node: dict[str, object]) -> None:
        props = node.get("props")
        if node.get("type") == "#text" and isinstance(props, dict):
            found.append(str(props.get("text")))
        for kid in node.get("children") or []:  # type: ignore[attr-defined]
            walk(kid)

    walk(doc["root"])  # type: ignore[arg-type]
    return found


# -- render --result -----------------------------------------------------------------------------

RESULT = {
    "content": [{"type": "text", "text": "1 drink"}],
    "structuredContent": {
        "keyword": "mocha",
        "total": 1,
        "drinks": [{"id": "d7", "name": "Mocha", "price": 31, "image": "https://img.example/m.png"}],
    },
}


def test_render_result_runs_the_cards_javascript(tmp_path: Path) -> None:
    code, out, err = invoke(
        "render",
        str(COFFEE),
        "drink-list",
        "--backend",
        "json",
        "--result",
        _file(tmp_path, "r.json", json.dumps(RESULT)),
    )
    assert code == 0, err
    texts = _texts(json.loads(out))
    # The Result handler turned structuredContent into `title` and `drinks`: the card's own setData.
    assert texts == ["“mocha”的搜索结果", "1 款", "Mocha", "¥31"]


def test_render_result_delivers_input_too(tmp_path: Path) -> None:
    empty = _file(
        tmp_path, "e.json", '{"content": [{"type": "text", "text": "none"}], "structuredContent": {"drinks": []}}'
    )
    args = ["render", str(COFFEE), "drink-list", "--backend", "json", "--result", empty, "--args", '{"keyword": "tea"}']
    code, out, err = invoke(*args)
    assert code == 0, err
    assert _texts(json.loads(out)) == ["为你推荐", "没有找到“tea”相关的饮品"]


def test_the_same_file_as_template_data_skips_the_javascript(tmp_path: Path) -> None:
    code, out, _err = invoke(
        "render",
        str(COFFEE),
        "drink-list",
        "--backend",
        "json",
        "--data",
        _file(tmp_path, "r.json", json.dumps(RESULT)),
    )
    assert code == 0
    assert "“mocha”的搜索结果" not in _texts(json.loads(out))  # `title` is no key of an API result


def test_render_result_reports_a_card_that_throws(tmp_path: Path) -> None:
    skill = FIXTURES / "cards" / "throwing-skill"
    result = _file(tmp_path, "r.json", json.dumps(RESULT))
    code, out, err = invoke("render", str(skill), "throw-result", "--result", result)
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == (
        f"{skill}/components/throw-result/index.js:6:31: error[CMPVM003]: components/throw-result/index threw in "
        "its Result notification handler: TypeError: cannot read property 'here' of undefined "
        "(at components/throw-result/index.js:6)"
    )
    assert lines[-1] == f"skillc: error: throw-result could not be shown from {result}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{nope", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        (
            "[1]",
            "is not an AtomicApiResult: expected a JSON object {content, structuredContent?, _meta?, isError?}, "
            "got an array",
        ),
        (
            '{"drinks": []}',
            'is not an AtomicApiResult: the field "content" is missing '
            '(an array of {"type": "text", "text": ...} blocks); '
            "this looks like template data: render it with --data",
        ),
        (
            '{"structuredContent": {}}',
            'is not an AtomicApiResult: the field "content" is missing '
            '(an array of {"type": "text", "text": ...} blocks)',
        ),
        ('{"content": "hi"}', 'is not an AtomicApiResult: the field "content" must be an array, got a string'),
        (
            '{"content": [{"text": "x"}]}',
            'is not an AtomicApiResult: the field "content[0]" must be an object with a string "type"',
        ),
        ('{"content": [{"type": "text"}]}', 'is not an AtomicApiResult: the field "content[0].text" must be a string'),
        (
            '{"content": [], "structuredContent": [1]}',
            'is not an AtomicApiResult: the field "structuredContent" must be an object, got an array',
        ),
        ('{"content": [], "_meta": 3}', 'is not an AtomicApiResult: the field "_meta" must be an object, got a number'),
        (
            '{"content": [], "isError": "no"}',
            'is not an AtomicApiResult: the field "isError" must be true or false, got a string',
        ),
        (
            '{"content": [], "data": {}}',
            'is not an AtomicApiResult: unknown field "data" '
            "(an AtomicApiResult has isError, content, structuredContent, _meta)",
        ),
    ],
)
def test_render_result_bad_files(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, "bad.json", text)
    code, out, err = invoke("render", str(COFFEE), "drink-list", "--result", path)
    assert (code, out) == (2, "")
    sep = ": " if message.startswith("not JSON") else " "
    assert err == f"skillc: error: {path}{sep}{message}\n"


def test_render_result_usage_errors(tmp_path: Path) -> None:
    good = _file(tmp_path, "r.json", json.dumps(RESULT))
    code, _out, err = invoke("render", str(COFFEE), "drink-list", "--data", good, "--result", good)
    assert code == 2
    assert err == (
        "skillc: error: --data and --result cannot be used together: --data is template data, "
        "--result is an API result the card's JavaScript turns into data; give one\n"
    )
    code, _out, err = invoke("render", str(COFFEE), "drink-list", "--args", "{}")
    assert (code, err) == (
        2,
        "skillc: error: --args is the Input of a card rendered from --result; give --result too\n",
    )
    failed = _file(tmp_path, "f.json", '{"isError": true, "content": [{"type": "text", "text": "no"}]}')
    code, _out, err = invoke("render", str(COFFEE), "drink-list", "--result", failed)
    assert (code, err) == (1, "skillc: error: the result has isError: true; WeChat shows no card for an error result\n")


def test_render_help_says_which_is_which() -> None:
    _code, out, _err = invoke("render", "--help")
    flat = " ".join(out.split())
    assert "--data FILE is template data (what the WXML binds, no JavaScript runs)" in flat
    assert "--result FILE is what an API returned, delivered to the card as at run time" in flat


# -- call ----------------------------------------------------------------------------------------


def test_call_unknown_api_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = invoke("call", str(COFFEE), "nosuch", "--state-dir", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        f"skillc: error: {COFFEE} declares no API named 'nosuch' in mcp.json "
        "(APIs: searchDrinks, confirmOrder, payOrder)\n"
    )


def test_call_refusal_says_how_to_approve(tmp_path: Path) -> None:
    args = ["call", str(COFFEE), "confirmOrder", "--args", '{"drinkId": "d01"}', "--state-dir", str(tmp_path)]
    code, out, _err = invoke(*args)
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "error[RUN019]" in line)
    assert lines[at].startswith(f"{COFFEE}: error[RUN019]: confirmOrder needs the user's approval (risk L3)")
    assert lines[at + 1] == "  = hint: pass --approve to approve this call as the user would"
    code, out, _err = invoke(*args, "--format", "json")
    [diag] = [d for d in json.loads(out)["diagnostics"] if d["code"] == "RUN019"]
    assert diag["hint"] == "pass --approve to approve this call as the user would"
    approved = invoke(*args, "--approve")
    assert approved[0] == 0 and "RUN019" not in approved[1]


def test_call_format_json_and_its_alias(tmp_path: Path) -> None:
    base = ["call", str(COFFEE), "searchDrinks", "--args", '{"keyword": "latte"}', "--state-dir", str(tmp_path)]
    code, out, _err = invoke(*base, "--format", "json")
    alias = invoke(*base, "--json")
    assert code == 0 == alias[0]
    doc, again = json.loads(out), json.loads(alias[1])
    assert doc["result"]["structuredContent"]["total"] == 3
    assert {k for k in doc if k != "durationMs"} == {k for k in again if k != "durationMs"}


# -- run -----------------------------------------------------------------------------------------


def _skill_with_missing_method(tmp_path: Path) -> Path:
    skill = tmp_path / "coffee"
    shutil.copytree(COFFEE, skill)
    wxml = skill / "components" / "drink-list" / "index.wxml"
    wxml.write_text(wxml.read_text("utf-8").replace('bindtap="onSelect"', 'bindtap="onMissing"'), "utf-8")
    return skill


def test_a_warning_only_step_passes_and_a_step_that_cannot_run_fails(tmp_path: Path) -> None:
    skill = _skill_with_missing_method(tmp_path)
    flow = _file(
        tmp_path,
        "flow.json",
        json.dumps(
            {"steps": [{"call": "searchDrinks", "arguments": {"keyword": "latte"}}, {"tap": {"handler": "onMissing"}}]}
        ),
    )
    code, out, _err = invoke("run", str(skill), "--script", flow)
    assert code == 0, out
    assert "[2] tap onMissing on card-1 (node 0.1.0[d01])" in out.splitlines()
    assert "warning[CMPVM005]" in out and "FAILED" not in out
    flow = _file(tmp_path, "gone.json", json.dumps({"steps": [{"call": "searchDrinks"}, {"tap": {"node": "9.9"}}]}))
    code, out, _err = invoke("run", str(skill), "--script", flow)
    assert code == 1
    assert "[2] tap 9.9 FAILED" in out.splitlines()
    assert "  error[CMPVM012]: card card-1 has no node with a tap handler matching 9.9" in out.splitlines()


def test_run_format_json_and_its_alias(tmp_path: Path) -> None:
    flow = _file(tmp_path, "f.json", json.dumps({"steps": [{"call": "searchDrinks"}]}))
    one = invoke("run", str(COFFEE), "--script", flow, "--format", "json")
    two = invoke("run", str(COFFEE), "--script", flow, "--json")
    assert one[0] == two[0] == 0
    [step] = json.loads(one[1])
    assert step["kind"] == "call" and step["failed"] is False and len(json.loads(two[1])) == 1


# -- --width -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["render", str(COFFEE), "drink-list"], ["run", str(COFFEE), "--script", "x.json"], ["serve", str(COFFEE)]],
)
def test_one_width_range_everywhere(command: list[str]) -> None:
    for bad in ("0", "10001"):
        code, _out, err = invoke(*command, "--width", bad)
        assert code == 2
        assert f"Invalid value for '--width': {bad} is not in the range 1<=x<=10000." in err
    assert parse_viewport("10000").width == 10000  # build --viewport: the same bounds
    with pytest.raises(ValueError, match="less than or equal to 10000"):
        parse_viewport("10001")


# -- build ---------------------------------------------------------------------------------------


def test_rebuild_removes_outputs_it_no_longer_writes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = build_skill(COFFEE, BuildOptions(out_dir=out, backends=("json",)))
    assert first is not None and first.errors == 0
    render = out / "coffee-skill" / "components" / "drink-list" / "render"
    assert sorted(p.name for p in render.iterdir()) == ["preview.375-light.json", "preview.414-dark.json"]
    mine = render / "notes.txt"  # a file the build did not write is never removed
    mine.write_text("keep", "utf-8")
    again = build_skill(COFFEE, BuildOptions(out_dir=out, backends=("html",), viewports=(parse_viewport("390:dark"),)))
    assert again is not None and again.errors == 0
    assert sorted(p.name for p in render.iterdir()) == ["notes.txt", "preview.390-dark.html"]
    manifest = json.loads((out / "coffee-skill" / "build-manifest.json").read_text("utf-8"))
    on_disk = {p.relative_to(out / "coffee-skill").as_posix() for p in (out / "coffee-skill").rglob("*") if p.is_file()}
    recorded = {rel for entry in manifest["components"].values() for rel in entry["outputs"]}
    assert on_disk == recorded | {"build-manifest.json", "components/drink-list/render/notes.txt"}


def test_a_manifest_that_names_files_outside_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", "utf-8")
    (out / "coffee-skill").mkdir(parents=True)
    forged = {"version": 1, "components": {"x": {"outputs": {"../../victim.txt": "0", str(victim): "0"}}}}
    (out / "coffee-skill" / "build-manifest.json").write_text(json.dumps(forged), "utf-8")
    assert build_skill(COFFEE, BuildOptions(out_dir=out, backends=("json",))) is not None
    assert victim.read_text("utf-8") == "keep"
