"""The sandbox boundary itself: a file cannot leave the module function it is compiled into, JS
entered while modules are defined cannot reach Python, and no stack hook sees the runtime's
functions. Every attack runs in a child process (an abort would otherwise end the test run) and
the server must answer a benign skill in the same process afterwards and meanwhile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.harness import api, benign_skill, serve, write_skill

RUN_INDEX = """\
const skill = wx.modelContext.createSkill('escape')
skill.registerAPI('run', require('./apis/run.js'))
"""
HANDLER = "\nmodule.exports = async function () { return { content: [{ type: 'text', text: 'ran' }] } }\n"

NOT_A_BODY = (
    "SyntaxError: apis/run.js is not a module body: it closes the function it is compiled into "
    "(an unmatched '}' at its top level)"
)

# Files that close the module wrapper, each with a different way to spend the define-time code.
ESCAPES = {
    "host-call": "}); console.log(1); wx.setStorageSync('a', 1); (function () {",
    "plain": "}); var escaped = 1; (function () {",
    "loop": "}); for (;;) {} (function () {",
    "iife-tail": "})(); (function () {",
    "comment-tail": "}); globalThis.x = 1; (function () { //",
    "throws": "}); throw new SyntaxError('fake'); (function () {",
    "sets-slot": "}); globalThis.__skillc_m = function () {}; (function () {",
}

# Files that only look dangerous: braces inside strings, templates, regexes and comments, and a
# top-level return (legal in a CommonJS module).
LEGIT = {
    "strings": "const a = '});'; const b = \"})\"; const c = `}); ${'{'}`;",
    "regex": "const r = /\\}\\)/; const s = /[})]/g;",
    "comments": "// });\n/* }); (function () { */",
    "return": "if (false) return;",
}


def _call(skill: Path, state: Path, api_name: str = "run") -> tuple[int, dict[str, object], str]:
    cmd = [sys.executable, "-m", "skillc", "call", str(skill), api_name, "--json", "--state-dir", str(state)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr and "Fatal Python error" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("prefix", list(ESCAPES.values()), ids=list(ESCAPES))
def test_a_file_that_closes_its_module_function_is_refused(tmp_path: Path, prefix: str) -> None:
    skill = write_skill(tmp_path, "escape", RUN_INDEX, [api("run")], files={"apis/run.js": prefix + HANDLER})
    code, outcome, _ = _call(skill, tmp_path / "state")
    assert code == 1
    result = outcome["result"]
    assert isinstance(result, dict) and result["isError"] is True
    text = result["content"][0]["text"]
    assert text == f"index.js failed to load, so run could not run: {NOT_A_BODY} at apis/run.js:1."


@pytest.mark.parametrize("body", list(LEGIT.values()), ids=list(LEGIT))
def test_braces_in_strings_regexes_and_comments_are_not_escapes(tmp_path: Path, body: str) -> None:
    skill = write_skill(tmp_path, "legit", RUN_INDEX, [api("run")], files={"apis/run.js": body + HANDLER})
    code, outcome, _ = _call(skill, tmp_path / "state")
    assert code == 0, outcome
    assert outcome["result"]["content"][0]["text"] == "ran"  # type: ignore[index]


def test_an_escape_in_a_card_component_is_refused_and_the_api_result_falls_back(tmp_path: Path) -> None:
    index = (
        "const skill = wx.modelContext.createSkill('c')\nskill.registerAPI('show', async () => "
        "({ content: [{ type: 'text', text: 'shown' }], structuredContent: { n: 1 } }))\n"
    )
    files = {
        "components/card/index.js": "}); console.log('x'); (function () {\nComponent({ data: {} })\n",
        "components/card/index.wxml": "<view>{{n}}</view>\n",
        "components/card/index.json": "{}",
    }
    skill = write_skill(
        tmp_path,
        "c",
        index,
        [api("show", _meta={"ui": {"componentPath": "components/card/index"}})],
        files=files,
        components=[{"name": "card", "path": "components/card/index"}],
    )
    code, outcome, _ = _call(skill, tmp_path / "state", "show")
    assert code == 0, outcome
    result = outcome["result"]
    assert isinstance(result, dict) and result["content"][0]["text"] == "shown"


def test_the_server_survives_an_escape_and_keeps_serving(tmp_path: Path) -> None:
    attacker = write_skill(
        tmp_path, "escape", RUN_INDEX, [api("run")], files={"apis/run.js": ESCAPES["host-call"] + HANDLER}
    )
    with serve(attacker, benign_skill(tmp_path), state=tmp_path / "state") as served:
        # its index.js cannot load, so its tools are not advertised (SRV004, tests/test_js_syntax.py)
        for _ in range(3):
            answer = served.call("run")
            assert answer.status == 200 and answer.result["isError"] is True
            assert answer.text == "Unknown tool: run (tools: ping)"
        assert served.call("ping").text == "pong"


PREPARE_INDEX = """\
'use strict'
const skill = wx.modelContext.createSkill('hook')
skill.registerAPI('hook', async () => {
  let outcome
  try {
    Error.prepareStackTrace = function (err, frames) { return frames.map(f => typeof f.getFunction()).join() }
    outcome = 'installed'
  } catch (e) {
    outcome = e.name + ': ' + e.message
  }
  let stack = ''
  try { wx.setStorageSync('', 1) } catch (e) { stack = String(e.stack) }
  return { content: [{ type: 'text', text: outcome + '|' + (stack.includes('function') ? 'leaked' : 'frames') }] }
})
skill.registerAPI('sloppy', async () => ({ content: [{ type: 'text', text: 'ok' }] }))
"""


def test_no_stack_hook_can_be_installed(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "hook", PREPARE_INDEX, [api("hook"), api("sloppy")])
    code, outcome, _ = _call(skill, tmp_path / "state", "hook")
    assert code == 0, outcome
    text = outcome["result"]["content"][0]["text"]  # type: ignore[index]
    assert text == "TypeError: 'prepareStackTrace' is read-only|frames"


def test_a_sloppy_assignment_of_the_hook_is_ignored(tmp_path: Path) -> None:
    index = (
        "const skill = wx.modelContext.createSkill('hook')\n"
        "skill.registerAPI('run', async () => {\n"
        "  Error.prepareStackTrace = function () { return 'hooked' }\n"
        "  return { content: [{ type: 'text', text: String(new Error('x').stack).includes('hooked') ? 'hooked' : "
        "typeof Error.prepareStackTrace }] }\n"
        "})\n"
    )
    skill = write_skill(tmp_path, "hook", index, [api("run")])
    code, outcome, _ = _call(skill, tmp_path / "state")
    assert code == 0, outcome
    assert outcome["result"]["content"][0]["text"] == "undefined"  # type: ignore[index]
