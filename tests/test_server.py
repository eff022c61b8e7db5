"""`skillc serve` over real HTTP on loopback: the SDK's Python client in both protocol modes, the
official TypeScript client, raw HTTP for the transport rules (CORS, DNS rebinding, errors).

Two servers run for the module: the coffee skill alone (what an agent sees), and the coffee skill
next to a lab skill with failing APIs and a colliding name (errors, deadlines, namespacing,
consent). Both bind port 0 on 127.0.0.1 and keep their state in a tmp folder.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.extension import advertise
from mcp_types import ElicitResult

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, PEERS
from tests.session_client import SessionClient

LAB_MCP = {
    "apis": [
        {"name": "boom", "description": "Always throws.", "inputSchema": {"type": "object"}},
        {"name": "spin", "description": "Never finishes.", "inputSchema": {"type": "object"}},
        {
            "name": "secret",
            "description": "Reveals a secret; needs consent.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            "_meta": {"x_skillc": {"risk": "L3"}},
        },
        {"name": "searchDrinks", "description": "The lab's own searchDrinks.", "inputSchema": {"type": "object"}},
    ],
    "components": [],
}
LAB_INDEX = """\
const skill = wx.modelContext.createSkill('skills/lab-skill')
skill.registerAPI('boom', async () => { throw new TypeError('kaboom') })
skill.registerAPI('spin', async () => { for (;;) {} })
skill.registerAPI('secret', async (args) => ({ content: [{ type: 'text', text: 'the secret is ' + (args.n * 2) }] }))
skill.registerAPI('searchDrinks', async () => ({ content: [{ type: 'text', text: 'lab drinks' }] }))
"""
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def make_lab_skill(root: Path) -> Path:
    skill = root / "lab-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# lab\n\nTest APIs.\n", encoding="utf-8")
    (skill / "mcp.json").write_text(json.dumps(LAB_MCP), encoding="utf-8")
    (skill / "index.js").write_text(LAB_INDEX, encoding="utf-8")
    return skill


def rpc(url: str, method: str, params: dict[str, Any] | None = None, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return httpx.post(url, json=body, headers={**ACCEPT, **headers}, timeout=30)


@pytest.fixture(scope="module")
def coffee_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("coffee-state")
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:
        yield handle


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    root = tmp_path_factory.mktemp("lab")
    lab = make_lab_skill(root)
    options = ServeOptions(
        paths=(COFFEE, lab),
        port=0,
        runtime=RuntimeConfig(state_dir=root / "state", timeout_s=0.5),
        consent=ConsentPolicy(approve=frozenset({"payOrder"})),
    )
    with ServeHandle.start(options) as handle:
        yield handle


def run(coro: Any) -> Any:
    return asyncio.run(coro)


APPS = advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})


def apps_client(url: str, **kwargs: Any) -> Client:
    """A client that says it is an MCP Apps host (a 2026-07-28 request without it gets no card)."""
    return SessionClient(url, extensions=[APPS], **kwargs)


# -- the Python SDK client, both protocol modes ----------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_python_client_lists_calls_and_reads(coffee_server: ServeHandle, mode: str, version: str) -> None:
    async def session() -> None:
        async with apps_client(coffee_server.url, mode=mode) as client:
            assert client.protocol_version == version
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "searchDrinks",
                "confirmOrder",
                "payOrder",
                "skillc_card_event",
                "skillc_card_view",
                "skillc_consent",
            } | {f"ui_control__{name}" for name in ("snapshot", "find", "act", "wait_for")}
            search = tools["searchDrinks"]
            assert search.annotations is not None
            assert (search.annotations.read_only_hint, search.annotations.destructive_hint) == (True, False)
            assert search.annotations.open_world_hint is False
            assert search.meta is not None and search.meta["ui"]["resourceUri"] == "ui://coffee-skill/drink-list"
            # Advertised only with --strict-output (test_strict_output_*): a client that checks it would
            # reject what WeChat only warns about.
            assert search.output_schema is None
            assert tools["confirmOrder"].annotations is not None
            assert tools["confirmOrder"].annotations.read_only_hint is False
            event_tool = tools["skillc_card_event"]
            # MCP Apps' key, and OpenAI's mirror of it (skillc/server/host_meta.py)
            app_only = {"ui": {"visibility": ["app"]}, "openai/widgetAccessible": True, "openai/visibility": "private"}
            assert event_tool.meta == app_only
            assert tools["skillc_card_view"].meta == app_only
            assert tools["skillc_consent"].meta == app_only

            result = await client.call_tool("searchDrinks", {"keyword": "latte"})
            assert result.is_error is False
            assert result.structured_content is not None and result.structured_content["total"] == 3
            text = "".join(getattr(b, "text", "") for b in result.content)
            assert text.startswith("找到 3 款饮品：拿铁 Latte ¥28")
            assert result.meta is not None
            card = result.meta["skillc/card"]
            assert card["componentPath"] == "components/drink-list/index"
            assert card["document"]["root"]["id"] == "root"
            assert card["eventTool"] == "skillc_card_event"
            assert card["tools"] == {
                "searchDrinks": "searchDrinks",
                "confirmOrder": "confirmOrder",
                "payOrder": "payOrder",
            }
            # The card's Render IR lives in _meta only: nothing of it reaches the model's content.
            assert "0.1.0[d01]" not in json.dumps([b.model_dump() for b in result.content])

            read = await client.read_resource("ui://coffee-skill/drink-list")
            (contents,) = read.contents
            assert contents.mime_type == "text/html;profile=mcp-app"
            html = getattr(contents, "text", "")
            assert html.startswith("<!DOCTYPE html>") and "ui/initialize" in html and "applyPatches" in html
            assert contents.meta is not None
            assert contents.meta["ui"] == {
                "prefersBorder": True,
                "csp": {"resourceDomains": ["https://img.morningbeans.example"]},
            }
            assert contents.meta["openai/widgetCSP"]["resource_domains"] == ["https://img.morningbeans.example"]

    run(session())


def test_resources_list_every_bound_component(coffee_server: ServeHandle) -> None:
    async def session() -> list[tuple[str, str]]:
        async with SessionClient(coffee_server.url, mode="legacy") as client:
            listed = await client.list_resources()
            return sorted((str(r.uri), r.mime_type or "") for r in listed.resources)

    assert run(session()) == [
        ("skill://coffee-skill/SKILL.md", "text/markdown"),
        ("skillc://debugger/descriptor", "application/json"),
        ("ui://coffee-skill/drink-list", "text/html;profile=mcp-app"),
        ("ui://coffee-skill/order-confirm", "text/html;profile=mcp-app"),
        ("ui://coffee-skill/payment-result", "text/html;profile=mcp-app"),
    ]


def test_server_advertises_mcp_apps_and_skills_on_discover(coffee_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(coffee_server.url) as client:
            return client.server_capabilities

    caps = run(session())
    assert caps.extensions == {
        "io.modelcontextprotocol/ui": {},
        "io.modelcontextprotocol/skills": {"directoryRead": True},
    }


def test_card_tap_returns_patches_and_the_follow_up(coffee_server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any]:
        async with apps_client(coffee_server.url) as client:
            shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
            card_id = shown.meta["skillc/card"]["cardId"]
            tapped = await client.call_tool(
                "skillc_card_event", {"cardId": card_id, "nodeId": "0.1.0[d02].1.0", "event": "tap"}
            )
            return card_id, tapped

    card_id, tapped = run(session())
    assert tapped.is_error is False
    out = tapped.structured_content
    assert out["cardId"] == card_id and out["handled"] == ["onSelect"]
    # One insert (the badge) and one style change (the selected border): nothing is re-created.
    insert, border = out["patches"]
    assert (insert["op"], insert["parent"], insert["index"]) == ("insert", "0.1.0[d02].2", 1)
    assert insert["node"]["children"][0]["props"]["text"] == "已选"
    assert border == {"op": "setStyle", "id": "0.1.0[d02]", "style": {"border": "2px solid #c8742c"}}
    assert out["actions"] == [
        {
            "type": "sendFollowUpMessage",
            "cardId": card_id,
            "content": [
                {"type": "text", "text": "我要一杯燕麦拿铁 Oat Latte"},
                {"type": "api/call", "data": {"name": "confirmOrder", "arguments": {"drinkId": "d02", "quantity": 1}}},
            ],
        }
    ]


def test_tap_on_an_unknown_card_is_an_error_result(coffee_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(coffee_server.url, mode="legacy") as client:
            return await client.call_tool("skillc_card_event", {"cardId": "card-nope", "nodeId": "0"})

    result = run(session())
    assert result.is_error is True
    assert result.content[0].text == "no card card-nope is known to this server"


# -- errors are results, never HTTP failures -------------------------------------------------------


def _call(url: str, name: str, arguments: dict[str, Any], mode: str = "legacy") -> Any:
    async def session() -> Any:
        async with SessionClient(url, mode=mode) as client:
            return await client.call_tool(name, arguments)

    return run(session())


def test_bad_argument_is_an_error_result_with_the_schema_error(coffee_server: ServeHandle) -> None:
    result = _call(coffee_server.url, "searchDrinks", {"limit": 99, "category": "juice"})
    assert result.is_error is True
    assert result.content[0].text == (
        "invalid arguments for searchDrinks: /category: 'juice' is not one of ['coffee', 'tea', 'other']; "
        "/limit: 99 is greater than the maximum of 20."
    )


def test_javascript_exception_is_an_error_result(lab_server: ServeHandle) -> None:
    result = _call(lab_server.url, "boom", {})
    assert result.is_error is True
    assert result.content[0].text == "boom threw TypeError: kaboom at index.js:2."


def test_timed_out_api_answers_at_its_deadline(lab_server: ServeHandle) -> None:
    result = _call(lab_server.url, "spin", {}, mode="auto")
    assert result.is_error is True
    assert result.content[0].text == "spin did not finish within 0.5 s and was stopped."


def test_unknown_tool_is_an_error_result(lab_server: ServeHandle) -> None:
    result = _call(lab_server.url, "nope", {})
    assert result.is_error is True
    assert result.content[0].text.startswith("Unknown tool: nope (tools: boom, coffee-skill__searchDrinks")


def test_colliding_api_names_are_namespaced(lab_server: ServeHandle) -> None:
    async def session() -> list[str]:
        async with SessionClient(lab_server.url, mode="legacy") as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert run(session()) == [
        "boom",
        "coffee-skill__searchDrinks",
        "confirmOrder",
        "lab-skill__searchDrinks",
        "payOrder",
        "secret",
        "skillc_card_event",
        "skillc_card_view",
        "skillc_consent",
        "spin",
        "ui_control__act",
        "ui_control__find",
        "ui_control__snapshot",
        "ui_control__wait_for",
    ]
    assert _call(lab_server.url, "lab-skill__searchDrinks", {}).content[0].text == "lab drinks"
    coffee = _call(lab_server.url, "coffee-skill__searchDrinks", {"keyword": "mocha"})
    assert coffee.meta["skillc/card"]["tools"]["searchDrinks"] == "coffee-skill__searchDrinks"


def test_garbage_bodies_get_4xx_never_500(coffee_server: ServeHandle) -> None:
    bad_json = httpx.post(coffee_server.url, content=b"{nope", headers=ACCEPT, timeout=10)
    assert bad_json.status_code == 400
    batch = httpx.post(coffee_server.url, content=b"[]", headers=ACCEPT, timeout=10)
    assert batch.status_code == 400
    no_params = rpc(coffee_server.url, "tools/call", {"arguments": {}})
    assert no_params.status_code == 200 and no_params.json()["error"]["code"] == -32602


# -- consent for L3 --------------------------------------------------------------------------------


def test_l3_without_consent_is_refused_in_legacy_mode(lab_server: ServeHandle) -> None:
    result = _call(lab_server.url, "secret", {"n": 21})
    assert result.is_error is True
    assert result.content[0].text == (
        "secret needs the user's approval (risk L3) and was not approved; ask the user to confirm, then call it again."
    )


@pytest.mark.parametrize(("action", "approve", "expected"), [
    ("accept", True, "the secret is 42"),
    ("accept", False, "secret needs the user's approval (risk L3) and was not approved; ask the user to confirm, "
     "then call it again."),
    ("decline", None, "secret needs the user's approval (risk L3) and was not approved; ask the user to confirm, "
     "then call it again."),
])  # fmt: skip
def test_l3_asks_by_elicitation_on_2026(
    lab_server: ServeHandle, action: str, approve: bool | None, expected: str
) -> None:
    asked: list[str] = []

    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action=action, content=None if approve is None else {"approve": approve})

    async def session() -> Any:
        async with SessionClient(lab_server.url, elicitation_callback=answer) as client:
            assert client.protocol_version == "2026-07-28"
            return await client.call_tool("secret", {"n": 21})

    result = run(session())
    assert result.content[0].text == expected
    assert asked == ['secret (risk L3) needs your consent.\nReveals a secret; needs consent.\nArguments: {"n": 21}']


def test_consent_for_other_arguments_is_not_reused(lab_server: ServeHandle) -> None:
    async def session() -> Any:
        async with SessionClient(lab_server.url, elicitation_callback=None) as client:
            first = await client.session.call_tool("secret", {"n": 1}, allow_input_required=True)
            return first

    # Without an elicitation capability the client is never asked: refused outright.
    assert run(session()).is_error is True
    forged = rpc(
        lab_server.url,
        "tools/call",
        {
            "name": "secret",
            "arguments": {"n": 2},
            "inputResponses": {"skillc-consent": {"action": "accept", "content": {"approve": True}}},
            "requestState": "0" * 64,
        },
    )
    assert forged.json()["result"]["isError"] is True


def test_allow_list_approves_without_asking(lab_server: ServeHandle) -> None:
    result = _call(lab_server.url, "payOrder", {"orderId": "nope"})
    assert "approval" not in result.content[0].text


# -- the transport ---------------------------------------------------------------------------------


def test_cors_preflight_is_answered_204(coffee_server: ServeHandle) -> None:
    reply = httpx.options(
        coffee_server.url,
        headers={"origin": "http://localhost:3000", "access-control-request-method": "POST"},
        timeout=10,
    )
    assert reply.status_code == 204
    assert reply.headers["access-control-allow-origin"] == "*"
    assert "mcp-protocol-version" in reply.headers["access-control-allow-headers"]
    listed = rpc(coffee_server.url, "tools/list", origin="http://localhost:3000")
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == "*"


def test_dns_rebinding_protection_is_on(coffee_server: ServeHandle) -> None:
    assert rpc(coffee_server.url, "tools/list", host="evil.example").status_code == 421
    assert rpc(coffee_server.url, "tools/list", origin="http://evil.example").status_code == 403
    assert rpc(coffee_server.url, "tools/list", host=f"localhost:{coffee_server.port}").status_code == 200


# -- the official TypeScript SDK -------------------------------------------------------------------


@pytest.mark.node
def test_typescript_sdk_client(coffee_server: ServeHandle, node_bin: str, peers_dir: Path) -> None:
    proc = subprocess.run(
        [node_bin, str(PEERS / "mcp_client.mjs"), coffee_server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PEERS,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    version = out["server"]["version"]  # serverInfo names what is served (docs/serve.md)
    assert out["server"] == {"name": "coffee-skill", "title": f"coffee-skill (skillc {version})", "version": version}
    names = [t["name"] for t in out["tools"]]
    assert names == [
        "searchDrinks",
        "confirmOrder",
        "payOrder",
        "skillc_card_event",
        "skillc_card_view",
        "skillc_consent",
        "ui_control__snapshot",
        "ui_control__find",
        "ui_control__act",
        "ui_control__wait_for",
    ]
    assert out["tools"][0]["annotations"] == {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
    assert out["call"]["isError"] is False and out["call"]["total"] == 3
    assert out["call"]["metaKeys"] == ["skillc/card", "skillc/console", "skillc/events", "skillc/session"]
    assert out["bad"] == {
        "isError": True,
        "text": "invalid arguments for searchDrinks: /limit: 0 is less than the minimum of 1.",
    }
    assert out["resource"]["uri"] == "ui://coffee-skill/drink-list"
    assert out["resource"]["mimeType"] == "text/html;profile=mcp-app"
    assert out["resource"]["length"] > 5000


def test_consent_answer_is_bound_to_tool_and_arguments() -> None:
    from skillc.frontend.manifest import ApiSpec
    from skillc.runtime.contracts import RiskLevel
    from skillc.server.tools import ServedApi

    spec = ApiSpec.model_validate({"name": "secret", "description": "d", "inputSchema": {"type": "object"}})
    api = ServedApi("secret", "lab-skill", spec, RiskLevel.L3, False, None)
    policy = ConsentPolicy()
    asked = policy.ask(api, {"n": 1})
    state = asked.request_state
    yes = {"skillc-consent": ElicitResult(action="accept", content={"approve": True})}
    assert policy.answer(api, {"n": 1}, yes, state) is True
    assert policy.answer(api, {"n": 2}, yes, state) is False  # another call's consent
    assert ConsentPolicy().answer(api, {"n": 1}, yes, state) is False  # another server's key
    assert policy.answer(api, {"n": 1}, None, state) is None  # not an answer: ask
    assert policy.allows(api) is False
    assert ConsentPolicy(approve=frozenset({"secret"})).allows(api) is True


def test_cli_serve_runs_and_answers(tmp_path: Path) -> None:
    import socket
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--port", str(port), "--state-dir", str(tmp_path)]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):
            try:
                listed = rpc(url, "tools/list")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert [t["name"] for t in listed.json()["result"]["tools"]][:3] == ["searchDrinks", "confirmOrder", "payOrder"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "serving coffee-skill (" in err and f"MCP endpoint: http://127.0.0.1:{port}/mcp" in err
