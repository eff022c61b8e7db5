"""An API's own ``_meta`` goes to the card and the host, never to the model.

tests/fixtures/meta-skill returns ``_meta`` values that all start with "m-" and appear nowhere else;
``content`` and ``structuredContent`` (what the model reads) must not contain any of them, and the
result's ``_meta`` must carry them all, over MCP (raw JSON-RPC and the SDK client) and from
``skillc call``. The coffee skill returns no ``_meta``, so its tests cannot see a leak.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import FIXTURES, ROOT, rpc

SKILL = FIXTURES / "meta-skill"
MARKERS = ("m-123", "m-ui-456", "m-deep-789", "m-badge-42")
LOOKUP_META = {"secret": "m-123", "ui": {"note": "m-ui-456"}, "nested": {"list": ["m-deep-789"], "flag": True}}
SHOW_META = {"secret": "m-123", "badge": "m-badge-42", "ui": {"note": "m-ui-456"}}
ARGS = {"ticketId": "t-1"}


def leaked(value: Any) -> list[str]:
    text = json.dumps(value, ensure_ascii=False)
    return [m for m in MARKERS if m in text]


def assert_model_sees_none(result: dict[str, Any]) -> None:
    """Everything in a tool result but its _meta is for the model."""
    assert result["content"] == [{"type": "text", "text": "ok"}]
    assert leaked(result["content"]) == []
    assert leaked(result.get("structuredContent")) == []
    assert leaked({k: v for k, v in result.items() if k != "_meta"}) == []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("meta-state")
    with ServeHandle.start(ServeOptions(paths=(SKILL,), port=0, runtime=RuntimeConfig(state_dir=state))) as handle:
        yield handle


def test_the_fixture_is_a_clean_skill_whose_apis_return_meta(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skillc", "check", str(SKILL)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0 and "0 errors, 0 warnings" in done.stdout, done.stdout + done.stderr
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    try:
        lookup, show = rt.call_blocking("lookupTicket", ARGS), rt.call_blocking("showTicket", ARGS)
    finally:
        rt.close()
    assert (lookup.result.meta, show.result.meta) == (LOOKUP_META, SHOW_META)
    assert lookup.diagnostics == [] and show.diagnostics == []


def test_a_tool_result_keeps_the_api_meta_out_of_content(server: ServeHandle) -> None:
    result = rpc(server.url, "tools/call", {"name": "lookupTicket", "arguments": ARGS})
    assert result["isError"] is False
    assert_model_sees_none(result)
    assert result["structuredContent"] == {"ticketId": "t-1", "valid": True, "seats": 2}
    meta = result["_meta"]
    assert {k: meta[k] for k in LOOKUP_META} == LOOKUP_META
    assert all(k.startswith("skillc/") for k in meta.keys() - LOOKUP_META.keys()), meta.keys()


def test_a_card_result_keeps_the_api_meta_next_to_the_card(server: ServeHandle) -> None:
    result = rpc(server.url, "tools/call", {"name": "showTicket", "arguments": ARGS})
    assert result["isError"] is False
    assert_model_sees_none(result)
    assert result["structuredContent"] == {"ticketId": "t-1", "valid": True}
    meta = result["_meta"]
    assert {k: meta[k] for k in SHOW_META} == SHOW_META
    assert "skillc/card" in meta
    # The card got the _meta (it shows the badge), and the card lives in _meta too.
    texts = [n["props"]["text"] for n in _walk(meta["skillc/card"]["document"]["root"]) if n["type"] == "#text"]
    assert texts == ["t-1", "m-badge-42"]


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children") or []:
        yield from _walk(child)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_sees_meta_only_in_meta(server: ServeHandle, mode: str) -> None:
    async def call() -> list[Any]:
        async with Client(server.url, mode=mode) as client:
            return [await client.call_tool(name, ARGS) for name in ("lookupTicket", "showTicket")]

    lookup, show = asyncio.run(call())
    for result, expected in ((lookup, LOOKUP_META), (show, SHOW_META)):
        assert result.is_error is False
        assert [(b.type, b.text) for b in result.content] == [("text", "ok")]
        assert leaked([b.model_dump(mode="json") for b in result.content]) == []
        assert leaked(result.structured_content) == []
        assert result.meta is not None and {k: result.meta[k] for k in expected} == expected


def _call(tmp_path: Path, api: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skillc", "call", str(SKILL), api, "--args", json.dumps(ARGS)]
    return subprocess.run([*command, "--state-dir", str(tmp_path), *extra], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("api", "expected"), [("lookupTicket", LOOKUP_META), ("showTicket", SHOW_META)])
def test_skillc_call_json_shows_meta_apart(tmp_path: Path, api: str, expected: dict[str, Any]) -> None:
    done = _call(tmp_path, api, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert_model_sees_none(result)
    assert result["_meta"] == expected


def test_skillc_call_text_shows_meta_on_its_own_line(tmp_path: Path) -> None:
    done = _call(tmp_path, "lookupTicket")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    meta_lines = [line for line in lines if leaked(line)]
    assert meta_lines == [f"_meta: {json.dumps(LOOKUP_META, ensure_ascii=False)}"]
    assert lines[1] == "  ok"
