"""Sessions nobody can guess (docs/serve.md "Sessions", docs/security.md "Sessions and cards").

A session is a capability the server mints and the host carries back in
``_meta["skillc/session"]``; nothing a client can know or copy (its clientInfo, a card id of the
old short shape, a made-up value) opens another's events, artefacts or cards. Over real HTTP and
stdio with the official SDK client; the capability checks with real HMAC keys.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation, ReadResourceRequestParams

from skillc.runtime.config import RuntimeConfig
from skillc.server.caller import Caller, calling_as
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from skillc.server.sessions import SESSION_META, SessionBinder, SessionKeys
from tests.conftest import COFFEE, ROOT
from tests.session_client import SessionClient
from tests.test_server import APPS

TAP_LATTE = "0.1.0[d02].1.0"  # the oat latte row of the coffee drink list


def run(coro: Any) -> Any:
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("session-state")),
        consent=ConsentPolicy(approve_all=True),
        inline_document_bytes=1000,  # every coffee card goes by reference: an artefact per card
    )
    with ServeHandle.start(options) as handle:
        yield handle


def _client(url: str, name: str = "claude-ai", version: str = "0.1.0", *, carry: bool = True) -> Any:
    """An MCP Apps host; ``carry``: it sends back the session its results name (else it never
    sends _meta, as a 2025-era host)."""
    info = Implementation(name=name, version=version)
    kind = SessionClient if carry else Client
    return kind(url, extensions=[APPS], client_info=info, mode="legacy")


async def _events(client: Any, uri: str) -> list[dict[str, Any]]:
    read = await client.read_resource(f"{uri}?limit=1000")
    page: dict[str, Any] = json.loads(read.contents[0].text)
    events: list[dict[str, Any]] = page["events"]
    return events


def _said(events: list[dict[str, Any]]) -> str:
    return json.dumps(events, ensure_ascii=False)


# -- the capability --------------------------------------------------------------------------------


def test_a_capability_verifies_only_for_the_caller_and_key_it_was_minted_for() -> None:
    keys = SessionKeys(secrets.token_bytes(32))
    alice = keys.mint("did:example:alice")
    assert keys.verify(alice, "did:example:alice")
    assert not keys.verify(alice, "did:example:bob") and not keys.verify(alice, "")
    assert not SessionKeys(secrets.token_bytes(32)).verify(alice, "did:example:alice")  # another fleet
    nonce, mac = alice.removeprefix("s1-").split("-")
    flipped = "0" if mac[-1] != "0" else "1"
    for forged in (
        f"s1-{nonce}-{mac[:-1]}{flipped}",
        f"s1-{secrets.token_hex(16)}-{mac}",
        "s-" + secrets.token_hex(16),  # the old clientInfo-derived shape
        "tab-2",
        alice.upper(),
        None,
        42,
    ):
        assert not keys.verify(forged, "did:example:alice"), forged
    assert len({keys.mint("") for _ in range(100)}) == 100  # 128 random bits each


def test_another_callers_session_in_meta_gets_a_fresh_one() -> None:
    binder = SessionBinder(SessionKeys(secrets.token_bytes(32)))
    connection = type("Connection", (), {})()
    with calling_as(Caller(did="did:example:alice", subject="alice")):
        alices = binder.session(connection, {})
        assert binder.session(object.__new__(type("C", (), {})), {SESSION_META: alices}) == alices
    with calling_as(Caller(did="did:example:bob", subject="bob")):
        bobs = binder.session(connection, {SESSION_META: alices})
        assert bobs != alices and binder.verify(bobs) and not binder.verify(alices)
    with calling_as(None):  # a server without auth is one caller: not alice either
        assert binder.session(connection, {SESSION_META: alices}) != alices


# -- over HTTP ----------------------------------------------------------------------------------------


def test_a_copied_client_info_gets_a_fresh_session_never_anothers_events(server: ServeHandle) -> None:
    async def session() -> tuple[str, str, list[dict[str, Any]]]:
        async with _client(server.url) as victim:
            mine = await victim.call_tool("searchDrinks", {"keyword": "victim-secret"})
        async with _client(server.url) as copycat:  # the same clientInfo, nothing else
            theirs = await copycat.call_tool("searchDrinks", {"keyword": "latte"})
            seen = await _events(copycat, theirs.meta["skillc/events"])
        return mine.meta[SESSION_META], theirs.meta[SESSION_META], seen

    victims, copycats, seen = run(session())
    assert victims != copycats
    assert seen and "victim-secret" not in _said(seen)


def test_two_2025_era_clients_that_never_send_meta_do_not_share(server: ServeHandle) -> None:
    async def session() -> list[tuple[str, list[dict[str, Any]]]]:
        got = []
        for keyword in ("first-client", "second-client"):
            async with _client(server.url, "mcp", "0.1.0", carry=False) as client:
                shown = await client.call_tool("searchDrinks", {"keyword": keyword})
                # The events URI the result named is a capability in itself: readable without _meta.
                got.append((shown.meta[SESSION_META], await _events(client, shown.meta["skillc/events"])))
        return got

    (first, first_events), (second, second_events) = run(session())
    assert first != second
    assert "first-client" in _said(first_events) and "second-client" not in _said(first_events)
    assert "second-client" in _said(second_events) and "first-client" not in _said(second_events)


def test_a_forged_session_in_meta_gets_a_fresh_one(server: ServeHandle) -> None:
    async def session() -> tuple[str, list[str], list[list[dict[str, Any]]]]:
        async with _client(server.url) as victim:
            shown = await victim.call_tool("searchDrinks", {"keyword": "victim-secret"})
        real = shown.meta[SESSION_META]
        forged = [real[:-1] + ("0" if real[-1] != "0" else "1"), "s-" + real[3:35], "card-session"]
        got, pages = [], []
        async with _client(server.url, "intruder", carry=False) as intruder:
            for value in forged:
                out = await intruder.call_tool("searchDrinks", {"keyword": "latte"}, meta={SESSION_META: value})
                got.append(out.meta[SESSION_META])
                pages.append(await _events(intruder, out.meta["skillc/events"]))
        return real, got, pages

    real, got, pages = run(session())
    assert real not in got and len(set(got)) == len(got)  # each a fresh session of its own
    assert all("victim-secret" not in _said(page) for page in pages)


def test_events_of_another_session_are_refused(server: ServeHandle) -> None:
    async def session() -> None:
        async with _client(server.url) as victim:
            shown = await victim.call_tool("searchDrinks", {"keyword": "victim-secret"})
        uri = shown.meta["skillc/events"]
        async with _client(server.url, "intruder") as intruder:
            await intruder.call_tool("searchDrinks", {"keyword": "latte"})  # a session of its own
            for guess in (uri[:-1] + ("0" if uri[-1] != "0" else "1"), "events://session/s-" + uri[-32:]):
                with pytest.raises(MCPError, match="Unknown resource: events://session/"):
                    await intruder.read_resource(guess)

    run(session())


def test_artefacts_of_another_session_are_refused_and_the_holder_reads_them(server: ServeHandle) -> None:
    async def session() -> tuple[str, str, str]:
        async with _client(server.url, carry=False) as owner:  # a 2025-era host: never sends _meta
            shown = await owner.call_tool("searchDrinks", {"keyword": "latte"})
            ref = shown.meta["skillc/card"]["documentRef"]
            read = await owner.read_resource(ref["uri"])  # the uri a result handed out reads as given
        uri: str = ref["uri"]
        digest_only, _, carried = uri.partition("?session=")
        forged = carried[:-1] + ("0" if carried[-1] != "0" else "1")
        async with _client(server.url, "intruder") as intruder:
            await intruder.call_tool("searchDrinks", {"keyword": "mocha"})  # a session of its own
            for guess in (digest_only, f"{digest_only}?session={forged}", f"{digest_only}?session=s-{carried[3:35]}"):
                with pytest.raises(MCPError, match="Unknown resource: artefact://sha256/"):
                    await intruder.read_resource(guess)
        return uri, shown.meta[SESSION_META], read.contents[0].blob

    uri, owner_session, blob = run(session())
    assert uri.endswith(f"?session={owner_session}") and blob


class _Connection:
    """A transport connection as the server keys it (an identity; nothing else is read of it)."""


def test_another_callers_events_and_artefacts_are_refused_even_with_the_uri(server: ServeHandle) -> None:
    """With auth (docs/security.md), a URI a result handed to one user opens nothing for another:
    its session verifies only for the caller it was minted for. Over HTTP the callers come from the
    auth middleware; here the request runs as each caller through the same ``calling_as``."""

    async def owner() -> tuple[str, str]:
        async with _client(server.url, carry=False) as client:
            shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
            return shown.meta["skillc/events"], shown.meta["skillc/card"]["documentRef"]["uri"]

    events, artefact = run(owner())
    skill_server = server.prepared.server

    async def read(uri: str) -> Any:
        ctx = ServerRequestContext(
            session=_Connection(),  # type: ignore[arg-type]
            lifespan_context=None,
            protocol_version="2025-11-25",
            method="resources/read",
        )
        return await skill_server.read_resource(ctx, ReadResourceRequestParams(uri=uri))

    async def as_each() -> None:
        with calling_as(Caller(did="did:example:mallory", subject="mallory")):
            for uri in (events, artefact):
                with pytest.raises(MCPError, match="Unknown resource"):
                    await read(uri)
        with calling_as(None):  # the caller the URIs were minted for (this server has no auth)
            assert (await read(events)).contents and (await read(artefact)).contents

    asyncio.run(as_each())


def test_a_guessed_or_foreign_card_id_is_refused_by_the_card_tools(server: ServeHandle) -> None:
    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _client(server.url) as victim:
            shown = await victim.call_tool("searchDrinks", {"keyword": "latte"})
            card_id = shown.meta["skillc/card"]["cardId"]
            out["card_id"] = card_id
            async with _client(server.url, "intruder") as intruder:
                own = await intruder.call_tool("searchDrinks", {"keyword": "mocha"})
                out["own_card"] = own.meta["skillc/card"]["cardId"]
                tap = {"cardId": card_id, "nodeId": TAP_LATTE, "event": "tap"}
                out["event"] = await intruder.call_tool("skillc_card_event", tap)
                out["view"] = await intruder.call_tool("skillc_card_view", {"cardId": card_id, "colorScheme": "dark"})
                short = "card-" + secrets.token_hex(6)  # the old 48-bit shape
                out["short"] = await intruder.call_tool("skillc_card_event", {**tap, "cardId": short})
                out["short_view"] = await intruder.call_tool("skillc_card_view", {"cardId": short, "width": 300})
            # The card is untouched: its owner's first tap selects the latte (no restyle happened).
            out["owner_tap"] = await victim.call_tool(
                "skillc_card_event", {"cardId": card_id, "nodeId": TAP_LATTE, "event": "tap"}
            )
        return out

    out = run(session())
    card_id = out["card_id"]
    assert card_id.startswith("card-") and len(card_id) == len("card-") + 32 and card_id != out["own_card"]
    for tool, result in (("skillc_card_event", out["event"]), ("skillc_card_view", out["view"])):
        assert result.is_error is True
        assert result.content[0].text == f"{tool}: denied: card {card_id} belongs to another user"
    for result in (out["short"], out["short_view"]):
        assert result.is_error is True and result.content[0].text.endswith("is known to this server")
    owner = out["owner_tap"]
    assert owner.is_error is False and owner.structured_content["handled"] == ["onSelect"]
    assert all(p["op"] != "replaceRoot" for p in owner.structured_content["patches"])


def test_the_session_a_result_names_continues_in_the_next_call(server: ServeHandle) -> None:
    async def session() -> tuple[list[str], list[dict[str, Any]]]:
        async with _client(server.url) as host:
            first = await host.call_tool("searchDrinks", {"keyword": "latte"})
            card_id = first.meta["skillc/card"]["cardId"]
            tapped = await host.call_tool("skillc_card_event", {"cardId": card_id, "nodeId": TAP_LATTE, "event": "tap"})
            second = await host.call_tool("searchDrinks", {"keyword": "second-call"})
            sessions = [r.meta[SESSION_META] for r in (first, tapped, second)]
            return sessions, await _events(host, second.meta["skillc/events"])

    sessions, events = run(session())
    assert len(set(sessions)) == 1
    said = _said(events)
    assert '"keyword": "latte"' in said and "second-call" in said and "onSelect" in said


# -- over stdio ---------------------------------------------------------------------------------------


async def _stdio_calls(state: Path, keywords: list[str]) -> list[tuple[str, list[dict[str, Any]]]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillc", "serve", "--stdio", str(COFFEE), "--state-dir", str(state)],
        cwd=str(ROOT),
    )
    got = []
    with (state.parent / "stderr.txt").open("a", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:  # never sends _meta
            for keyword in keywords:
                shown: Any = await client.call_tool("searchDrinks", {"keyword": keyword})
                got.append((shown.meta[SESSION_META], await _events(client, shown.meta["skillc/events"])))
    return got


def test_a_new_stdio_process_does_not_see_the_previous_ones_events(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = asyncio.run(asyncio.wait_for(_stdio_calls(state, ["one-a", "one-b"]), 120))
    second = asyncio.run(asyncio.wait_for(_stdio_calls(state, ["two-a"]), 120))
    # One process, one connection: its calls share a session without any _meta.
    assert first[0][0] == first[1][0]
    assert "one-a" in _said(first[1][1]) and "one-b" in _said(first[1][1])
    # The next process on the same state is a new connection: a new session, none of the old events.
    assert second[0][0] != first[0][0]
    assert "two-a" in _said(second[0][1]) and "one-a" not in _said(second[0][1])
