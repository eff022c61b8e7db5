"""Dynamic cards under `skillc serve`, in real time: the timers of a card with scope.dynamic run on
their own after the call that mounted it, and the view reads their patches through the app-only
tool skillc_card_updates (a cursor into the card's update stream); skillc_card_visibility pauses
them, expiry stops them. The real MCP client over loopback HTTP; short intervals, bounded waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client import Client

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, FIXTURES
from tests.test_server import apps_client

PICKUP = FIXTURES / "dynamic-cards" / "pickup-skill"
TICK_MS = 150  # the countdown's interval here; the server's minimum is lowered to 100 ms


@pytest.fixture(scope="module")
def pickup_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("pickup-state")
    config = RuntimeConfig(state_dir=state, card_timer_min_interval_ms=100)
    with ServeHandle.start(ServeOptions(paths=(PICKUP,), port=0, runtime=config)) as handle:
        yield handle


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _updates_until(client: Client, card_id: str, since: str, count: int, limit_s: float = 10.0) -> Any:
    """Poll skillc_card_updates (as the view does) until ``count`` updates came; the last answer."""
    deadline = time.monotonic() + limit_s
    while True:
        got = await client.call_tool("skillc_card_updates", {"cardId": card_id, "since": since})
        assert got.is_error is False, got.content
        if len(got.structured_content["updates"]) >= count or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.05)


def test_the_update_tools_are_app_only_and_only_with_a_dynamic_component(pickup_server: ServeHandle) -> None:
    async def session() -> dict[str, Any]:
        async with apps_client(pickup_server.url) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = run(session())
    for name in ("skillc_card_updates", "skillc_card_visibility"):
        meta = tools[name].meta or {}
        assert meta["ui"] == {"visibility": ["app"]} and meta["openai/visibility"] == "private"
    # session: the card's, for a bridge whose calls carry no _meta (docs/serve.md, "Sessions")
    assert set(tools["skillc_card_updates"].input_schema["properties"]) == {"cardId", "since", "session"}
    assert set(tools["skillc_card_visibility"].input_schema["properties"]) == {"cardId", "visible", "since", "session"}
    assert set(tools["skillc_card_updates"].output_schema["properties"]) == {
        "cardId",
        "cursor",
        "updates",
        "expired",
        "hidden",
        "timers",
        "pollMs",
    }


def test_a_server_without_dynamic_cards_lists_no_update_tools(tmp_path: Any) -> None:
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path))

    async def session(url: str) -> set[str]:
        async with apps_client(url) as client:
            return {t.name for t in (await client.list_tools()).tools}

    with ServeHandle.start(options) as handle:
        names = run(session(handle.url))
    assert "skillc_card_event" in names
    assert not {"skillc_card_updates", "skillc_card_visibility"} & names


def test_timers_run_on_their_own_and_the_view_reads_their_patches(pickup_server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any, Any]:
        async with apps_client(pickup_server.url) as client:
            shown = await client.call_tool("startCountdown", {"seconds": 3, "tickMs": TICK_MS})
            card = shown.meta["skillc/card"]
            # Nothing calls the server now: the card's interval runs by itself.
            got = await _updates_until(client, card["cardId"], card["cursor"], 3)
            again = await client.call_tool(
                "skillc_card_updates", {"cardId": card["cardId"], "since": got.structured_content["cursor"]}
            )
            return card, got, again

    card, got, again = run(session())
    stream = card["cursor"].rpartition(".")[0]
    assert (card["updatesTool"], card["visibilityTool"]) == ("skillc_card_updates", "skillc_card_visibility")
    assert card["cursor"] == f"{stream}.0" and card["pendingTimers"] == 1
    out = got.structured_content
    assert [(u["seq"], u["kind"], u["timerId"], u["patches"]) for u in out["updates"]] == [
        (1, "timer", 1, [{"op": "setText", "id": "0.1.0", "text": "2 秒"}]),
        (2, "timer", 1, [{"op": "setText", "id": "0.1.0", "text": "1 秒"}]),
        (
            3,
            "timer",
            1,
            [{"op": "setText", "id": "0.1.0", "text": "0 秒"}, {"op": "setText", "id": "0.2.0", "text": "请取餐"}],
        ),
    ]
    # At zero the card cleared its interval: nothing is live, so nothing more comes on its own.
    assert (out["cursor"], out["timers"], out["expired"], out["hidden"], out["pollMs"]) == (
        f"{stream}.3",
        0,
        False,
        False,
        100,
    )
    assert got.content[0].text == f"card {card['cardId']}: 3 updates, 4 patches (0 live timers)"
    assert again.structured_content["updates"] == []


def test_a_cursor_the_stream_cannot_serve_gets_the_whole_card(pickup_server: ServeHandle) -> None:
    async def session() -> Any:
        async with apps_client(pickup_server.url) as client:
            shown = await client.call_tool("startCountdown", {"seconds": 100, "tickMs": 60000})
            card_id = shown.meta["skillc/card"]["cardId"]
            return await client.call_tool("skillc_card_updates", {"cardId": card_id, "since": "another-stream.0"})

    out = run(session()).structured_content
    (reset,) = out["updates"]
    assert (reset["kind"], reset["seq"], reset["actions"]) == ("reset", 0, [])
    (replace,) = reset["patches"]
    assert replace["op"] == "replaceRoot" and replace["node"]["id"] == "root"


def test_a_tap_between_timers_says_which_cursor_its_patches_follow(pickup_server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any]:
        async with apps_client(pickup_server.url) as client:
            shown = await client.call_tool("startCountdown", {"seconds": 50, "tickMs": TICK_MS})
            card = shown.meta["skillc/card"]
            await _updates_until(client, card["cardId"], card["cursor"], 1)
            tapped = await client.call_tool(
                "skillc_card_event", {"cardId": card["cardId"], "nodeId": "0.3", "event": "tap"}
            )
            hide = await client.call_tool("skillc_card_visibility", {"cardId": card["cardId"], "visible": False})
            return tapped, hide

    tapped, hide = run(session())
    meta = tapped.meta["skillc/updates"]
    after, cursor = int(meta["after"].rpartition(".")[2]), int(meta["cursor"].rpartition(".")[2])
    # The view saw the card at its mount cursor: a timer came in between, so its copy is behind
    # and it reads the stream (in which the tap is the latest update) instead of applying these.
    assert after >= 1 and cursor == after + 1 and meta["timers"] == 1
    assert tapped.structured_content["handled"] == ["onMore"]
    assert hide.structured_content["hidden"] is True


def test_hidden_cards_pause_and_resume_and_expired_cards_stop(pickup_server: ServeHandle) -> None:
    async def session() -> dict[str, Any]:
        async with apps_client(pickup_server.url) as client:
            shown = await client.call_tool("startCountdown", {"seconds": 500, "tickMs": TICK_MS})
            card_id = shown.meta["skillc/card"]["cardId"]
            seen = await _updates_until(client, card_id, shown.meta["skillc/card"]["cursor"], 2)
            hidden = await client.call_tool("skillc_card_visibility", {"cardId": card_id, "visible": False})
            paused_at = hidden.structured_content["cursor"]
            await asyncio.sleep(TICK_MS * 4 / 1000)
            while_hidden = await client.call_tool("skillc_card_updates", {"cardId": card_id, "since": paused_at})
            shown_again = await client.call_tool(
                "skillc_card_visibility", {"cardId": card_id, "visible": True, "since": paused_at}
            )
            resumed = await _updates_until(client, card_id, paused_at, 2)
            picked = await client.call_tool("pickedUp", {})
            expired_at = await client.call_tool("skillc_card_updates", {"cardId": card_id, "since": paused_at})
            stop = expired_at.structured_content["cursor"]
            await asyncio.sleep(TICK_MS * 4 / 1000)
            after_expiry = await client.call_tool("skillc_card_updates", {"cardId": card_id, "since": stop})
            return {
                "seen": seen,
                "hidden": hidden,
                "while_hidden": while_hidden,
                "shown_again": shown_again,
                "resumed": resumed,
                "picked": picked,
                "after_expiry": after_expiry,
            }

    r = run(session())
    assert len(r["seen"].structured_content["updates"]) >= 2
    hidden = r["hidden"].structured_content
    assert (hidden["hidden"], hidden["timers"]) == (True, 1)
    # Four intervals went by while hidden: no callback ran.
    assert r["while_hidden"].structured_content["updates"] == []
    assert r["while_hidden"].structured_content["hidden"] is True
    assert r["shown_again"].structured_content["hidden"] is False
    # Asked without a cursor, the visibility answer is the whole card as it was when it paused.
    (reset,) = hidden["updates"]
    left = int(reset["patches"][0]["node"]["children"][0]["children"][1]["children"][0]["props"]["text"].split()[0])
    texts = [u["patches"][0]["text"] for u in r["resumed"].structured_content["updates"][:2]]
    assert texts == [f"{left - 1} 秒", f"{left - 2} 秒"]  # resumed where it paused: no beat skipped or made up
    (action,) = r["picked"].meta["skillc/actions"]
    assert action["type"] == "expireAllCards" and r["seen"].structured_content["cardId"] in action["expired"]
    after = r["after_expiry"].structured_content
    assert (after["updates"], after["expired"], after["timers"]) == ([], True, 0)


def test_the_update_tools_refuse_bad_arguments_and_static_cards(pickup_server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any, Any, Any]:
        async with apps_client(pickup_server.url) as client:
            static = await client.call_tool("staticNote", {})
            card = static.meta["skillc/card"]
            bad = await client.call_tool("skillc_card_updates", {"cardId": 5})
            unknown = await client.call_tool("skillc_card_visibility", {"cardId": "card-nope", "visible": True})
            not_dynamic = await client.call_tool("skillc_card_updates", {"cardId": card["cardId"]})
            return card, bad, unknown, not_dynamic

    card, bad, unknown, not_dynamic = run(session())
    # Without scope.dynamic a card has no timers, no cursor and no update tools.
    assert "cursor" not in card and "updatesTool" not in card and card["pendingTimers"] == 0
    assert card["document"]["root"]["children"][0]["children"][1]["children"][0]["props"]["text"] == "undefined"
    assert bad.is_error and bad.content[0].text == (
        "invalid arguments for skillc_card_updates: cardId must be a string, since a cursor string"
    )
    assert unknown.is_error and unknown.content[0].text == "no card card-nope is known to this server"
    assert not_dynamic.is_error and not_dynamic.content[0].text == (
        f"card {card['cardId']} has no update stream: its component does not declare scope.dynamic"
    )
