"""What an agent and its host get from `skillc serve` beyond a tool's result: SKILL.md (instructions,
prompt, resource), outputSchema only when enforced, the call's console, cards only for MCP Apps
clients, the restyle tool, one request-log record per request.

A small "note" skill is made for the module: ``shape`` returns a structuredContent that breaks its
outputSchema and logs, ``remember`` shows a card whose tap calls updateModelContext, ``wipe`` is L3
with a description that says nothing of consent. Two servers serve it, one with strict output.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, request_records
from tests.session_client import SessionClient
from tests.test_server import apps_client, make_lab_skill

NOTE_MCP = {
    "apis": [
        {
            "name": "shape",
            "description": "Returns a count.",
            "inputSchema": {"type": "object"},
            "outputSchema": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
            },
            "_meta": {"x_skillc": {"risk": "L0"}},
        },
        {
            "name": "remember",
            "description": "Shows a note card.",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"componentPath": "components/note/index"}, "x_skillc": {"risk": "L0"}},
        },
        {
            "name": "wipe",
            "description": "Deletes every note.",
            "inputSchema": {"type": "object"},
            "_meta": {"x_skillc": {"risk": "L3"}},
        },
    ],
    "components": [{"path": "components/note/index"}],
}
NOTE_INDEX = """\
const skill = wx.modelContext.createSkill('skills/note-skill')
skill.registerAPI('shape', async () => {
  console.log('shape ran')
  console.warn('count is a string')
  return { content: [{ type: 'text', text: 'three' }], structuredContent: { count: 'three' } }
})
skill.registerAPI('remember', async () => ({
  content: [{ type: 'text', text: 'a note' }], structuredContent: { text: 'milk' }
}))
skill.registerAPI('wipe', async () => ({ content: [{ type: 'text', text: 'wiped' }] }))
"""
NOTE_JS = """\
Component({
  data: { text: '' },
  lifetimes: { created () {
    wx.modelContext.getContext(this).on(wx.modelContext.NotificationType.Result, ({ result }) => {
      this.setData({ text: result.structuredContent.text })
    })
  } },
  methods: { onTap () {
    const view = wx.modelContext.getViewContext(this)
    view.updateModelContext({ content: [{ type: 'text', text: 'the user read the note' }] })
  } }
})
"""
NOTE_WXML = '<view class="note" bindtap="onTap"><text class="t">{{text}}</text></view>\n'
NOTE_WXSS = """\
.note { padding: 20rpx; background-color: #ffffff; color: #111111; }
@media (prefers-color-scheme: dark) {
  .note { background-color: #101010; color: #eeeeee; }
}
"""
SKILL_MD = """\
# 记事 (note-skill)

Keeps short notes for the user.

## How
1. Call `remember` to show the note.
"""

# The resource is SKILL.md as agent hosts read it (MCP Skills): with the name and description a
# front matter must give, added at the top when the file has none; the prompt is the file as written.
SERVED_SKILL_MD = '---\nname: "note-skill"\ndescription: "Keeps short notes for the user."\n---\n' + SKILL_MD


def make_note_skill(root: Path) -> Path:
    skill = root / "note-skill"
    comp = skill / "components" / "note"
    comp.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "mcp.json").write_text(json.dumps(NOTE_MCP), encoding="utf-8")
    (skill / "index.js").write_text(NOTE_INDEX, encoding="utf-8")
    (comp / "index.js").write_text(NOTE_JS, encoding="utf-8")
    (comp / "index.json").write_text('{"component": true, "usingComponents": {}}', encoding="utf-8")
    (comp / "index.wxml").write_text(NOTE_WXML, encoding="utf-8")
    (comp / "index.wxss").write_text(NOTE_WXSS, encoding="utf-8")
    return skill


@pytest.fixture(scope="module")
def note_skill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_note_skill(tmp_path_factory.mktemp("note"))


def _start(paths: tuple[Path, ...], state: Path, **options: Any) -> ServeHandle:
    return ServeHandle.start(ServeOptions(paths=paths, port=0, runtime=RuntimeConfig(state_dir=state), **options))


@pytest.fixture(scope="module")
def note_server(note_skill: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    with _start((note_skill,), tmp_path_factory.mktemp("note-state")) as handle:
        yield handle


@pytest.fixture(scope="module")
def strict_server(note_skill: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    with _start((note_skill,), tmp_path_factory.mktemp("strict-state"), strict_output=True) as handle:
        yield handle


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- SKILL.md ---------------------------------------------------------------------------------------


def test_one_skill_s_instructions_are_its_skill_md(note_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(note_server.url, mode="legacy") as client:
            return client.instructions

    instructions = run(session())
    assert instructions.endswith("\n\n" + SKILL_MD)
    assert "the prompt note-skill and skill://note-skill/SKILL.md" in instructions


def test_several_skills_give_names_and_first_paragraphs(tmp_path: Path) -> None:
    lab = make_lab_skill(tmp_path)
    with _start((COFFEE, lab), tmp_path / "state") as handle:

        async def session() -> Any:
            async with SessionClient(handle.url, mode="legacy") as client:
                return client.instructions

        text = run(session())
    assert '- coffee-skill: 咖啡点单 (coffee-skill). Order coffee from the "Morning Beans" café for pickup.' in text
    assert "- lab-skill: lab. Test APIs." in text
    assert "## Never" not in text  # the rest of a SKILL.md is one prompts/get away


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_skill_md_is_a_prompt_and_a_resource(note_server: ServeHandle, mode: str) -> None:
    async def session() -> Any:
        async with SessionClient(note_server.url, mode=mode) as client:
            prompts = (await client.list_prompts()).prompts
            got = await client.get_prompt("note-skill")
            resources = {str(r.uri): r for r in (await client.list_resources()).resources}
            read = await client.read_resource("skill://note-skill/SKILL.md")
            with pytest.raises(MCPError, match="Unknown prompt: nope \\(prompts: note-skill\\)"):
                await client.get_prompt("nope")
            return prompts, got, resources, read

    prompts, got, resources, read = run(session())
    assert [(p.name, p.title, p.description) for p in prompts] == [
        ("note-skill", "记事 (note-skill)", "Keeps short notes for the user.")
    ]
    assert [(m.role, m.content.text) for m in got.messages] == [("user", SKILL_MD)]
    doc = resources["skill://note-skill/SKILL.md"]
    assert (doc.mime_type, doc.title, doc.size) == (
        "text/markdown",
        "记事 (note-skill): SKILL.md",
        len(SERVED_SKILL_MD.encode()),
    )
    card = resources["ui://note-skill/note"]
    assert card.title == "note-skill note card"
    assert card.description == "The MCP Apps view that shows the results of remember as a card and takes taps."
    (contents,) = read.contents
    assert (contents.mime_type, contents.text) == ("text/markdown", SERVED_SKILL_MD)


def test_the_coffee_prompt_is_its_skill_md(tmp_path: Path) -> None:
    with _start((COFFEE,), tmp_path) as handle:

        async def session() -> Any:
            async with SessionClient(handle.url) as client:
                return await client.get_prompt("coffee-skill")

        got = run(session())
    assert got.messages[0].content.text == (COFFEE / "SKILL.md").read_text(encoding="utf-8")


# -- outputSchema ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_result_that_breaks_its_output_schema_reaches_the_client(note_server: ServeHandle, mode: str) -> None:
    async def session() -> Any:
        async with SessionClient(note_server.url, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("shape", {})

    tools, result = run(session())  # the official client raises when an advertised schema fails
    assert tools["shape"].output_schema is None
    assert result.is_error is False and result.structured_content == {"count": "three"}
    warned = [d for d in result.meta["skillc/diagnostics"] if d["code"] == "RUN016"]
    assert [d["severity"] for d in warned] == ["warning"]
    assert (
        warned[0]["message"]
        == "shape: structuredContent does not match outputSchema at /count: 'three' is not of type 'integer'"
    )


def test_strict_output_advertises_and_enforces_the_schema(strict_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(strict_server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("shape", {})

    tools, result = run(session())
    assert tools["shape"].output_schema == NOTE_MCP["apis"][0]["outputSchema"]  # type: ignore[index]
    assert result.is_error is True
    assert result.content[0].text == (
        "shape returned a result that breaks its outputSchema: "
        "shape: structuredContent does not match outputSchema at /count: 'three' is not of type 'integer'"
    )


# -- descriptions ---------------------------------------------------------------------------------


def test_consent_is_said_once_in_a_description(note_server: ServeHandle, coffee_url: str) -> None:
    async def listed(url: str) -> dict[str, str]:
        async with SessionClient(url, mode="legacy") as client:
            return {t.name: t.description or "" for t in (await client.list_tools()).tools}

    note = run(listed(note_server.url))
    assert note["wipe"] == "Deletes every note. (Risk L3: runs only with the user's consent.)"
    coffee = run(listed(coffee_url))
    for name in ("confirmOrder", "payOrder"):
        assert "(Risk L3: runs only" not in coffee[name]  # mcp.json already says it
    assert coffee["confirmOrder"].count("consent") == 1


@pytest.fixture(scope="module")
def coffee_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with _start((COFFEE,), tmp_path_factory.mktemp("coffee-state")) as handle:
        yield handle.url


# -- the call's console ---------------------------------------------------------------------------


def test_a_result_carries_its_console(note_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(note_server.url, mode="legacy") as client:
            return await client.call_tool("shape", {})

    console = run(session()).meta["skillc/console"]
    assert [(c["source"], c["level"], c["text"], c["file"], c["line"]) for c in console] == [
        ("api-vm", "log", "shape ran", "index.js", 3),
        ("api-vm", "warn", "count is a string", "index.js", 4),
    ]


def test_console_lines_become_log_notifications_when_asked(note_server: ServeHandle) -> None:
    seen: list[Any] = []

    async def got(params: Any) -> None:
        seen.append(params)

    async def session(level: str | None) -> None:
        async with SessionClient(note_server.url, logging_callback=got, log_level=level) as client:  # type: ignore[arg-type]
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("shape", {})

    run(session(None))
    assert seen == []  # not asked for: none sent
    run(session("warning"))
    assert [(p.level, p.logger, p.data["text"]) for p in seen] == [
        ("warning", "note-skill/api-vm", "count is a string")
    ]
    seen.clear()
    run(session("debug"))
    assert [(p.level, p.data["text"]) for p in seen] == [("info", "shape ran"), ("warning", "count is a string")]


# -- cards only for MCP Apps clients ----------------------------------------------------------------


def test_a_client_without_mcp_apps_gets_no_card(note_server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any, Any]:
        async with (
            SessionClient(note_server.url) as plain,
            apps_client(note_server.url) as apps,
            SessionClient(note_server.url, mode="legacy") as legacy,
        ):
            return (
                await plain.call_tool("remember", {}),
                await apps.call_tool("remember", {}),
                await legacy.call_tool("remember", {}),
            )

    plain, apps, legacy = run(session())
    assert plain.content[0].text == "a note" and plain.structured_content == {"text": "milk"}
    assert "skillc/card" not in (plain.meta or {}) and "skillc/fallback" not in (plain.meta or {})
    assert apps.meta["skillc/card"]["componentPath"] == "components/note/index"
    # A 2025-era request over stateless HTTP declares no capabilities: it may be a host that shows cards.
    assert legacy.meta["skillc/card"]["componentPath"] == "components/note/index"


# -- the card view's tools ------------------------------------------------------------------------


def _root_style(node: dict[str, Any]) -> dict[str, str]:
    return node["children"][0]["style"]


def test_restyle_renders_the_card_for_the_host_theme_and_keeps_it(note_server: ServeHandle) -> None:
    async def session() -> tuple[Any, ...]:
        async with apps_client(note_server.url) as client:
            shown = await client.call_tool("remember", {})
            card = shown.meta["skillc/card"]
            dark = await client.call_tool("skillc_card_view", {"cardId": card["cardId"], "colorScheme": "dark"})
            again = await client.call_tool("skillc_card_view", {"cardId": card["cardId"], "colorScheme": "dark"})
            narrow = await client.call_tool("skillc_card_view", {"cardId": card["cardId"], "width": 300})
            tap = await client.call_tool("skillc_card_event", {"cardId": card["cardId"], "nodeId": "0"})
            bad = await client.call_tool("skillc_card_view", {"cardId": card["cardId"], "colorScheme": "sepia"})
            nope = await client.call_tool("skillc_card_view", {"cardId": "card-nope", "colorScheme": "dark"})
            return card, dark, again, narrow, tap, bad, nope

    card, dark, again, narrow, tap, bad, nope = run(session())
    assert card["document"]["viewport"]["color_scheme"] == "light"
    assert _root_style(card["document"]["root"])["background-color"] == "#ffffff"
    (patch,) = dark.structured_content["patches"]
    assert patch["op"] == "replaceRoot"
    assert _root_style(patch["node"])["background-color"] == "#101010"
    assert _root_style(patch["node"])["color"] == "#eeeeee"
    assert again.structured_content["patches"] == []  # already dark: nothing to do
    (wide,) = narrow.structured_content["patches"]
    assert _root_style(wide["node"])["padding"] == "8px"  # 20rpx at 300px, was 10px at 375
    assert tap.structured_content["actions"] == [
        {
            "type": "updateModelContext",
            "cardId": card["cardId"],
            "content": [{"type": "text", "text": "the user read the note"}],
        }
    ]
    assert bad.is_error and bad.content[0].text.startswith("invalid arguments for skillc_card_view")
    assert nope.is_error and nope.content[0].text == "no card card-nope is known to this server"


def test_a_restyled_card_is_rebuilt_in_its_scheme(note_skill: Path, tmp_path: Path) -> None:
    async def first(url: str) -> tuple[str, str]:
        async with apps_client(url) as client:
            shown = await client.call_tool("remember", {})
            card_id: str = shown.meta["skillc/card"]["cardId"]
            await client.call_tool("skillc_card_view", {"cardId": card_id, "colorScheme": "dark"})
            return card_id, shown.meta["skillc/session"]

    async def after_restart(url: str, card_id: str, session: str) -> Any:
        # The card's session outlives the restart (the key is in the state directory); its view
        # carries it, as the card view does.
        async with apps_client(url) as client:
            return await client.call_tool(
                "skillc_card_view", {"cardId": card_id, "width": 300}, meta={"skillc/session": session}
            )

    with _start((note_skill,), tmp_path) as handle:
        card_id, session = run(first(handle.url))
    with _start((note_skill,), tmp_path) as handle:  # the same state directory: a rebuilt card
        restyled = run(after_restart(handle.url, card_id, session))
    (patch,) = restyled.structured_content["patches"]
    assert _root_style(patch["node"])["background-color"] == "#101010"


# -- the request log ------------------------------------------------------------------------------


def test_every_request_is_one_log_record(note_server: ServeHandle) -> None:
    with request_records() as records:

        async def session() -> None:
            async with SessionClient(note_server.url) as client:
                await client.list_tools()
                await client.call_tool("remember", {})
                await client.call_tool("wipe", {})
                await client.call_tool("nope", {})
                await client.read_resource("skill://note-skill/SKILL.md")
                with pytest.raises(MCPError):
                    await client.read_resource("ui://note-skill/none")

        run(session())
    got = [(r.method, r.tool, r.skill, r.outcome, r.protocol) for r in records]
    assert got == [
        ("tools/list", None, None, "ok", "2026-07-28"),
        ("tools/call", "remember", "note-skill", "ok", "2026-07-28"),
        ("tools/call", "wipe", "note-skill", "refused", "2026-07-28"),
        ("tools/call", "nope", None, "error", "2026-07-28"),
        ("resources/read", None, None, "ok", "2026-07-28"),
        ("resources/read", None, None, "protocol_error", "2026-07-28"),
    ]
    assert all(r.ms >= 0 for r in records)
    assert records[3].detail is not None and records[3].detail.startswith("Unknown tool: nope")
    assert records[4].detail == "skill://note-skill/SKILL.md"


def test_plain_serve_says_a_debugger_is_available(note_server: ServeHandle, note_skill: Path) -> None:
    async def session() -> Any:
        async with SessionClient(note_server.url) as client:
            return await client.read_resource("skillc://debugger/descriptor")

    descriptor = json.loads(run(session()).contents[0].text)
    assert descriptor["state"] == "available"
    assert descriptor["skills"] == [str(note_skill)]
    assert descriptor["setup"].startswith(f"skillc debug {note_skill} serves these skills")
    assert "port" not in descriptor and "urls" not in descriptor
