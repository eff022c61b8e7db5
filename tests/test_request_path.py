"""The cost-bounded request path: one card-table write per mounted card, no tools/list run per
tools/call, and Mcp-Param headers still checked against the advertised inputSchema."""

from __future__ import annotations

import asyncio
import itertools
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import sqlite_store
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, request_records

MODERN = "2026-07-28"
_CARD_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b.*\bcards\b", re.IGNORECASE | re.DOTALL)


@pytest.fixture
def card_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement that writes the card table, on any thread's connection."""
    writes: list[str] = []
    real = sqlite_store.connect

    def traced(path: Path) -> sqlite3.Connection:
        conn = real(path)
        conn.set_trace_callback(lambda sql: writes.append(sql) if _CARD_WRITE.match(sql) else None)
        return conn

    monkeypatch.setattr(sqlite_store, "connect", traced)
    return writes


def test_a_mounted_card_is_written_once_and_numbered_in_order(tmp_path: Path, card_writes: list[str]) -> None:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    # SQLite's statement trace counts the writes: this test pins the engine it traces.
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path, state_url=None))
    ids = itertools.count(1)
    host = CardHost(runtime, card_ids=lambda: f"card-{next(ids)}")

    async def calls() -> list[int]:
        per_call = []
        ctx = runtime.context(session_id="s1")
        for mount in (True, True, False, True):
            before = len(card_writes)
            out = await host.call("searchDrinks", {"keyword": "latte"}, ctx, mount=mount)
            assert (out.card is not None) == mount
            per_call.append(len(card_writes) - before)
        return per_call

    try:
        assert asyncio.run(calls()) == [1, 1, 0, 1]
        records = host.store.session_cards(runtime.skill_scope, "s1")
        assert [r.card_id for r in records] == ["card-1", "card-2", "card-3"]
        assert [r.seq for r in records] == sorted({r.seq for r in records})  # distinct, in mount order
    finally:
        asyncio.run(host.close())
        runtime.close()


@pytest.fixture(scope="module")
def coffee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("state")
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:
        yield handle


def test_a_tools_call_with_arguments_runs_no_tools_list(coffee: ServeHandle) -> None:
    """The SDK checks a 2026-era call's Mcp-Param headers against the tool's inputSchema; the
    server's lookup answers it, so no tools/list handler runs (and logs) inside the call."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "searchDrinks", "arguments": {"keyword": "latte"}, "_meta": meta}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "searchDrinks",
    }
    with request_records() as records:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        reply = httpx.post(coffee.url, json=body, headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["isError"] is False
    assert [(r.method, r.tool) for r in records] == [("tools/call", "searchDrinks")]


def test_the_schema_lookup_answers_what_tools_list_advertises(coffee: ServeHandle) -> None:
    async def listed() -> Any:
        async with Client(coffee.url) as client:
            return await client.list_tools()

    tools = asyncio.run(listed()).tools
    lookup = coffee.prepared.server.server.get_tool_input_schema
    assert lookup is not None
    assert len(tools) > 3
    for tool in tools:
        assert lookup(tool.name) == tool.input_schema, tool.name
    assert lookup("noSuchTool") is None
