"""What each family of hosts reads from the same tool and view resource (MCP Apps ``_meta.ui``,
OpenAI's ``openai/*``), and the card session a bridge that cannot send ``_meta`` (OpenAI's
``window.openai.callTool``) passes as an argument: it counts only when it is the caller's.
Over real HTTP against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE
from tests.test_server import apps_client, rpc


@pytest.fixture(scope="module")
def approving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("meta")),
        consent=ConsentPolicy(approve_all=True),
    )
    with ServeHandle.start(options) as handle:
        yield handle


def test_tools_and_views_carry_the_keys_of_both_families(approving: ServeHandle) -> None:
    async def read() -> tuple[dict[str, Any], dict[str, Any]]:
        async with apps_client(approving.url) as client:
            tools = {t.name: t.meta or {} for t in (await client.list_tools()).tools}
            uri = tools["searchDrinks"]["ui"]["resourceUri"]
            read = await client.read_resource(uri)
            return tools, read.contents[0].meta or {}

    tools, view = asyncio.run(read())
    search = tools["searchDrinks"]
    assert search["openai/outputTemplate"] == search["ui"]["resourceUri"]
    assert (search["openai/widgetAccessible"], search["openai/visibility"]) == (True, "public")
    assert search["openai/resultCanProduceWidget"] is True
    event = tools["skillc_card_event"]
    assert event["ui"]["visibility"] == ["app"] and "openai/outputTemplate" not in event
    assert (event["openai/widgetAccessible"], event["openai/visibility"]) == (True, "private")
    assert view["ui"]["prefersBorder"] is True and view["openai/widgetPrefersBorder"] is True
    csp = view["openai/widgetCSP"]
    assert csp["connect_domains"] == []
    assert csp["resource_domains"] == view["ui"].get("csp", {}).get("resourceDomains", [])
    assert view["openai/widgetDescription"].startswith("The coffee-skill drink-list card")


def test_a_card_session_passed_as_an_argument_counts_only_when_it_is_the_callers(approving: ServeHandle) -> None:
    # Plain requests with no _meta: each one is its own fresh session over stateless HTTP.
    shown = rpc(approving.url, "tools/call", {"name": "searchDrinks", "arguments": {"keyword": "latte"}}).json()
    meta = shown["result"]["_meta"]
    card, session = meta["skillc/card"]["cardId"], meta["skillc/session"]
    tap = {"cardId": card, "nodeId": "0.1.0[d02].1", "event": "tap"}

    def event(arguments: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = rpc(
            approving.url, "tools/call", {"name": "skillc_card_event", "arguments": arguments}
        ).json()["result"]
        return answer

    denied = event(tap)
    assert denied["isError"] and "denied" in denied["content"][0]["text"]
    forged = event({**tap, "session": session[:-1] + ("0" if session[-1] != "0" else "1")})
    assert forged["isError"] and "denied" in forged["content"][0]["text"]
    handled = event({**tap, "session": session})
    assert not handled.get("isError") and handled["structuredContent"]["handled"]
