"""openWorldHint comes from the tokens of a skill's API code: a comment, a string, a template or a
regular expression that spells ``wx.request`` never makes a tool open-world, a real read of a
network member of ``wx`` (or ``wx`` itself escaping) does. The lexer's literals are checked
against QuickJS, the engine that runs the code: every string, plain template and regular
expression it finds in the project's JavaScript is one literal there, with the same value.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import quickjs
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.frontend.js_tokens import tokens
from skillc.frontend.open_world import network_reads, reaches_network
from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE
from tests.session_client import SessionClient
from tests.test_serve_agent_context import make_note_skill

ROOT = Path(__file__).resolve().parents[1]

NOT_A_CALL = """\
// never calls wx.request
/* wx.request({ url }) was here */
const note = 'wx.request'
const doc = `call wx.request ${'later'} wx.uploadFile`
const pattern = /wx\\.request\\(/g
const shown = { wx: 'wx.request' }
if (typeof wx === 'undefined') throw new Error(obj.wx.request)
"""


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        (NOT_A_CALL, []),
        ("wx.showToast({ title: 'wx.request' }); wx.getStorageSync('k')", []),
        ("wx.request({ url })", ["wx.request"]),
        ("wx ?. request({})", ["wx.request"]),
        ("wx['request']({})", ["wx.request"]),
        ("wx[`downloadFile`]({})", ["wx.downloadFile"]),
        ("globalThis.wx.connectSocket({})", ["wx.connectSocket"]),
        ("wx.cloud.callFunction({ name: 'f' })", ["wx.cloud"]),
        ("const api = wx[name]", ["wx"]),
        ("const { request } = wx", ["wx"]),
        ("helper(wx)", ["wx"]),
        ("const t = `a ${'}'} ${wx.request} b`", ["wx.request"]),
        ("x = a / 2 / wx.request", ["wx.request"]),
        ("const r = f(a) / 2; wx.request({ url }); const q = b[0] / 3", ["wx.request"]),
        ("return /wx.request/.test(s)", []),
    ],
)
def test_network_reads_come_from_tokens(source: str, reads: list[str]) -> None:
    assert network_reads(source) == reads


def _serve_annotations(skill: Path, state: Path) -> dict[str, bool | None]:
    options = ServeOptions(paths=(skill,), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:

        async def listed() -> dict[str, bool | None]:
            async with SessionClient(handle.url) as client:
                tools = (await client.list_tools()).tools
                return {t.name: t.annotations.open_world_hint if t.annotations else None for t in tools}

        return asyncio.run(listed())


def test_a_comment_never_makes_a_served_tool_open_world(tmp_path: Path) -> None:
    skill = make_note_skill(tmp_path / "a")
    index = skill / "index.js"
    index.write_text(NOT_A_CALL + index.read_text(encoding="utf-8"), encoding="utf-8")
    hints = _serve_annotations(skill, tmp_path / "state-a")
    assert hints["remember"] is False

    index.write_text(index.read_text(encoding="utf-8") + "if (false) wx.request({ url: 'https://x' })\n")
    hints = _serve_annotations(skill, tmp_path / "state-b")
    assert hints["remember"] is True


def _corpus() -> list[Path]:
    folders = [COFFEE.parent, ROOT / "tests" / "fixtures"]
    return sorted(p for folder in folders for p in folder.rglob("*.js") if "node_modules" not in p.parts)


def test_the_lexer_s_literals_are_quickjs_s() -> None:
    ctx = quickjs.Context()
    checked = 0
    for path in _corpus():
        for token in tokens(path.read_text(encoding="utf-8", errors="replace")):
            if token.kind == "string":
                assert ctx.eval(f"({token.text})") == token.value, (path, token)
            elif token.kind == "template" and token.text.startswith("`") and token.text.endswith("`"):
                assert isinstance(ctx.eval(f"({token.text})"), str), (path, token)  # one whole literal
            elif token.kind == "regex":
                source = token.text[1 : token.text.rindex("/")]
                assert ctx.eval(f"({token.text}).source") == source, (path, token)
            else:
                continue
            checked += 1
    assert checked > 500  # the corpus is the project's skills: hundreds of literals


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("wx.request`${}'\"/\\*[]()=\n abc1;?"))))
def test_any_text_lexes_to_the_end(source: str) -> None:
    # Every skill's code is lexed when the server starts: no text may stop it or loop.
    seen = list(tokens(source))
    assert all(t.text for t in seen)
    assert [t.offset for t in seen] == sorted({t.offset for t in seen})
    assert isinstance(reaches_network(source), bool)
