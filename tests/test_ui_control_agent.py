"""An agent completes the coffee order by operating the cards with ui_control__* over real HTTP.

The model's own call is searchDrinks; after that the agent only observes and taps: snapshot the
drink list, find the oat latte, tap it (the card's follow-up confirmOrder needs consent: the act
says so, and the agent's call of confirmOrder asks the user by elicitation), wait for the badge,
then the same on the order card's confirm button and payOrder. A stale snapshot id gives
stale_control; another client's card gives denied; the listing says ui_control is available.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client import Client
from mcp_types import ElicitRequestParams, ElicitResult, Implementation

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE
from tests.session_client import SessionClient
from tests.test_server import APPS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("ui")))
    with ServeHandle.start(options) as handle:  # no --approve: every L3 call asks the user
        yield handle


class Agent:
    """One MCP client (the agent's host) and the user behind its elicitation prompts."""

    def __init__(self, client: Client, asked: list[str]) -> None:
        self.client = client
        self.asked = asked

    async def ui(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(f"ui_control__{tool}", arguments)
        assert result.is_error is False, result.content
        out: dict[str, Any] = result.structured_content or {}
        return out


def _client(url: str, name: str, asked: list[str]) -> Client:
    async def user(_ctx: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message.splitlines()[0])  # type: ignore[union-attr]
        return ElicitResult(action="accept", content={"approve": True})

    return SessionClient(
        url, extensions=[APPS], elicitation_callback=user, client_info=Implementation(name=name, version="1")
    )


def test_the_order_is_completed_through_ui_control(server: ServeHandle) -> None:
    asked: list[str] = []

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _client(server.url, "agent", asked) as client:
            agent = Agent(client, asked)
            listed = await client.list_tools()
            out["status"] = (listed.meta or {}).get("diagnostics", {}).get("ui_control")
            shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
            drinks = shown.meta["skillc/card"]["cardId"]

            snap = await agent.ui("snapshot", card_id=drinks)
            found = await agent.ui("find", card_id=drinks, snapshot_id=snap["snapshot_id"], query="Oat Latte")
            latte = found["matches"][0]
            out["latte"] = latte
            tapped = await agent.ui(
                "act", card_id=drinks, node_id=latte["id"], snapshot_id=snap["snapshot_id"], action="tap"
            )
            out["tapped"] = tapped
            out["badge"] = await agent.ui("wait_for", card_id=drinks, kind="text_contains", text="已选", timeout_s=5)
            # The same control from the old snapshot has changed (it gained the badge): refused.
            out["stale"] = await agent.ui(
                "act", card_id=drinks, node_id=latte["id"], snapshot_id=snap["snapshot_id"], action="tap"
            )

            # The follow-up needs consent: the agent makes the call the card asked for; the user is asked.
            (follow,) = tapped["follow_up"]
            confirmed = await client.call_tool(follow["api_name"], follow["arguments"])
            order = confirmed.meta["skillc/card"]["cardId"]
            snap = await agent.ui("snapshot", card_id=order)
            button = (await agent.ui("find", card_id=order, snapshot_id=snap["snapshot_id"], role="button"))["matches"][
                0
            ]
            out["button"] = button
            paying = await agent.ui(
                "act", card_id=order, node_id=button["id"], snapshot_id=snap["snapshot_id"], action="tap"
            )
            out["paying"] = paying
            (follow,) = paying["follow_up"]
            paid = await client.call_tool(follow["api_name"], follow["arguments"])
            receipt = paid.meta["skillc/card"]["cardId"]
            out["paid"] = await agent.ui("wait_for", card_id=receipt, kind="text_contains", text="支付成功")
            out["receipt"] = receipt
            out["events"] = paid.meta["skillc/events"]
        async with _client(server.url, "someone-else", []) as other:
            out["denied"] = (await other.call_tool("ui_control__snapshot", {"card_id": receipt})).structured_content
        return out

    out = asyncio.run(session())
    assert out["status"] == {"status": "available"}
    assert out["latte"]["role"] == "button" and out["latte"]["label"].startswith("燕麦拿铁 Oat Latte")
    tapped = out["tapped"]
    assert tapped["ok"] is True and tapped["handled"] == ["onSelect"]
    assert tapped["follow_up"] == [
        {
            "api_name": "confirmOrder",
            "arguments": {"drinkId": "d02", "quantity": 1},
            "status": "input_required",
            "text": "confirmOrder needs the user's consent; call its tool to answer",
        }
    ]
    assert out["badge"]["ok"] is True
    stale = out["stale"]
    assert (stale["ok"], stale["error_code"]) == (False, "stale_control")
    assert out["button"]["label"] == "确认并支付"
    assert out["paying"]["ok"] is True and out["paying"]["handled"] == ["onConfirm"]
    assert out["paid"]["ok"] is True
    # The user was asked once per L3 call, when the agent made it: confirmOrder, then payOrder.
    assert asked == ["confirmOrder (risk L3) needs your consent.", "payOrder (risk L3) needs your consent."]
    denied = out["denied"]
    assert (denied["ok"], denied["error_code"]) == (False, "denied")
    # Each act is an audit record in the audit log (and in the session's events).
    cards = server.prepared.server.cards("coffee-skill")
    assert cards is not None
    records = [json.loads(r) for r in cards.runtime.audit.ui_records()]
    assert [(r["action"], r["node_id"], r["ok"], r.get("error_code")) for r in records] == [
        ("tap", out["latte"]["id"], True, None),
        ("tap", out["latte"]["id"], False, "stale_control"),
        ("tap", out["button"]["id"], True, None),
    ]
    assert records[0]["label"].startswith("燕麦拿铁") and records[0]["before"] != records[0]["after"]


def test_without_ui_control_the_listing_says_so(tmp_path_factory: pytest.TempPathFactory) -> None:
    options = ServeOptions(
        paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("off")), ui_control=False
    )
    with ServeHandle.start(options) as handle:

        async def session() -> Any:
            async with SessionClient(handle.url) as client:
                return await client.list_tools()

        listed = asyncio.run(session())
    assert not [t for t in listed.tools if t.name.startswith("ui_control__")]
    assert listed.meta["diagnostics"]["ui_control"] == {
        "status": "disabled_by_policy",
        "reason": "the server was started with --no-ui-control",
    }
