"""`skillc debug --no-browser` as a process: it prints the URLs and the descriptor, serves the console
page and its JSON API, and the browser tools say no console is attached."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client import Client

from tests.conftest import COFFEE


@pytest.fixture(scope="module")
def debug_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    env = {**os.environ, "SKILLC_STATE_DIR": str(tmp_path_factory.mktemp("debug-cli"))}
    skillc = Path(sys.executable).with_name("skillc")
    proc = subprocess.Popen(
        [str(skillc), "debug", str(COFFEE), "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        descriptor = json.loads(line)["debugDescriptor"]
        base = descriptor["urls"]["console"].split("?")[0].rstrip("/")
        for _ in range(200):
            try:
                httpx.get(base + "/__debug/api/targets", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield descriptor
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_prints_the_descriptor_and_serves_the_console(debug_process: dict[str, object]) -> None:
    urls = debug_process["urls"]
    assert isinstance(urls, dict)
    assert debug_process["state"] == "listening"
    assert urls["debuggerMcp"].endswith("/__wsd_mcp") and urls["skillsMcp"].endswith("/mcp")
    page = httpx.get(urls["console"])
    assert page.status_code == 200 and "/__debug/static/console.js" in page.text
    # The printed console URL carries the launch token the console's own routes require.
    base, token = urls["console"].split("?token=")
    assert len(token) >= 22 and httpx.get(base + "__debug/api/targets").status_code == 403
    assert httpx.get(base + "__debug").status_code == 200
    assert httpx.get(base + "__debug/static/console.js").headers["content-type"].startswith("text/javascript")
    targets = httpx.get(base + "__debug/api/targets", params={"token": token}).json()
    assert [w["widgetId"] for w in targets["widgets"]] == ["drink-list", "order-confirm", "payment-result"]


def test_browser_tools_without_a_console(debug_process: dict[str, object]) -> None:
    urls = debug_process["urls"]
    assert isinstance(urls, dict)

    async def go() -> tuple[str, str]:
        async with Client(urls["debuggerMcp"]) as client:
            shot = await client.call_tool("take_screenshot", {})
            render = await client.call_tool("render_widget", {"widgetId": "drink-list"})
            assert shot.is_error and render.is_error
            return shot.structured_content["error"]["code"], render.structured_content["error"]["code"]

    assert asyncio.run(go()) == ("DEBUGGER_NOT_CONNECTED", "DEBUGGER_NOT_CONNECTED")
