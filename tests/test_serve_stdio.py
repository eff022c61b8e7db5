"""`skillc serve --stdio`: the SDK's Python stdio client drives a real `python -m skillc serve --stdio`.

The server runs under a small relay (``relay.py`` below) that copies its stdout to the client
and to a file and records its exit code, so the test sees exactly what went over the wire and
how the process ended once the client closed stdin.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, ListToolsResult, ReadResourceResult, TextContent, TextResourceContents

from tests.conftest import COFFEE, ROOT
from tests.waiting import PATIENCE_S

RELAY = """\
import subprocess, sys, threading
wire_log, rc_file, *command = sys.argv[1:]
child = subprocess.Popen(command, stdout=subprocess.PIPE)  # stdin and stderr inherited
def pump():
    with open(wire_log, "wb") as log:
        for line in child.stdout:
            log.write(line); log.flush()
            sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
t = threading.Thread(target=pump); t.start()
rc = child.wait(); t.join()
open(rc_file, "w").write(str(rc))
sys.exit(rc)
"""


def _serve_command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skillc",
        "serve",
        "--stdio",
        str(COFFEE),
        "--state-dir",
        str(tmp_path / "state"),
        *extra,
    ]


async def _session(tmp_path: Path, mode: str) -> tuple[ListToolsResult, CallToolResult, ReadResourceResult]:
    relay = tmp_path / "relay.py"
    relay.write_text(RELAY, encoding="utf-8")
    wire, rc = tmp_path / "wire.jsonl", tmp_path / "rc"
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(relay), str(wire), str(rc), *_serve_command(tmp_path)],
        cwd=str(ROOT),
    )
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            tools = await client.list_tools()
            called = await client.call_tool("searchDrinks", {"keyword": "latte"})
            read = await client.read_resource("ui://coffee-skill/drink-list")
    return tools, called, read


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the 2025 handshake; 2026-07-28 via server/discover
def test_stdio_serves_tools_calls_and_resources(tmp_path: Path, mode: str) -> None:
    tools, called, read = asyncio.run(asyncio.wait_for(_session(tmp_path, mode), 120))
    assert [t.name for t in tools.tools][:3] == ["searchDrinks", "confirmOrder", "payOrder"]

    assert called.is_error is False
    assert "Latte" in json.dumps(called.structured_content)
    assert any(isinstance(b, TextContent) and b.text for b in called.content)

    [contents] = read.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.uri == "ui://coffee-skill/drink-list"
    assert contents.mime_type == "text/html;profile=mcp-app" and "<html" in contents.text.lower()

    # stdout carried JSON-RPC messages and nothing else: one object per line.
    lines = (tmp_path / "wire.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 4  # initialize, tools/list, tools/call, resources/read answers
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and ("id" in message or "method" in message), line[:200]

    # Every human line went to stderr; the banner came once the transport was up.
    err = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "loading coffee-skill (" in err
    assert "serving coffee-skill (" in err
    assert "MCP endpoint: stdio" in err
    assert err.index("loading coffee-skill") < err.index("MCP endpoint: stdio")
    assert "skillc: tools/call searchDrinks coffee-skill ok" in err  # the request log (text format)

    # Closing stdin (the client's shutdown) ended the server cleanly.
    assert (tmp_path / "rc").read_text(encoding="utf-8") == "0"


def test_stdio_eof_at_once_exits_zero(tmp_path: Path) -> None:
    done = subprocess.run(_serve_command(tmp_path), input=b"", capture_output=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""
    assert b"MCP endpoint: stdio" in done.stderr


@pytest.mark.parametrize("extra", [["--port", "9000"], ["--host", "0.0.0.0"], ["--allowed-host", "x.y"]])
def test_stdio_with_http_options_is_a_usage_error(tmp_path: Path, extra: list[str]) -> None:
    done = subprocess.run(_serve_command(tmp_path, *extra), input=b"", capture_output=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stdout == b""
    err = done.stderr.decode()
    assert f"skillc: error: {extra[0]} is an HTTP option and cannot be given with --stdio" in err
    assert "loading" not in err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stdio_stops_on_a_signal(tmp_path: Path, signum: int, code: int) -> None:
    """A signal stops the server even while stdin stays open (the read does not hold it up)."""
    proc = subprocess.Popen(_serve_command(tmp_path), stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stderr is not None
    for raw in proc.stderr:
        if raw.startswith(b"MCP endpoint: stdio"):
            break
    proc.send_signal(signum)
    try:
        code_got = proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    assert code_got == code


def test_a_2025_stdio_client_gets_console_lines_after_set_level(tmp_path: Path) -> None:
    """Over stdio the connection lasts: logging/setLevel there decides which console lines come as
    notifications/message (none before it is sent)."""
    seen: list[tuple[str, str | None, str]] = []

    async def got(params: object) -> None:
        seen.append((params.level, params.logger, params.data["text"]))  # type: ignore[attr-defined]

    async def session() -> tuple[list[tuple[str, str | None, str]], list[tuple[str, str | None, str]]]:
        command, *args = _serve_command(tmp_path)
        params = StdioServerParameters(command=command, args=args, cwd=str(ROOT))
        with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", logging_callback=got) as client:
                await client.call_tool("searchDrinks", {"keyword": "latte"})
                before = list(seen)
                with warnings.catch_warnings():  # deprecated by 2026-07-28, still 2025's way
                    warnings.simplefilter("ignore")
                    await client.set_logging_level("info")
                await client.call_tool("searchDrinks", {"keyword": "latte"})
                # A notification may trail its result on the wire: wait for it, not for a fixed time.
                until = time.monotonic() + PATIENCE_S
                while len(seen) == len(before) and time.monotonic() < until:
                    await asyncio.sleep(0.02)
                return before, list(seen)

    before, after = asyncio.run(asyncio.wait_for(session(), 120))
    assert before == []
    assert len(after) == 1
    level, logger, text = after[0]
    assert (level, logger) == ("info", "coffee-skill/api-vm")
    assert text.startswith("[coffee-skill] searchDrinks took ")


def test_max_events_bounds_the_session_buffer(tmp_path: Path) -> None:
    async def session() -> dict[str, object]:
        command, *args = _serve_command(tmp_path, "--max-events", "3", "--max-event-bytes", "64")
        params = StdioServerParameters(command=command, args=args, cwd=str(ROOT))
        with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for _ in range(3):
                    shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
                assert shown.meta is not None
                read = await client.read_resource(shown.meta["skillc/events"])
                page: dict[str, object] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
                return page

    page = asyncio.run(asyncio.wait_for(session(), 120))
    assert page["retained_count"] == 3 and page["dropped_count"] > 0
    events = page["events"]
    assert isinstance(events, list) and len(events) == 3
    assert all(len(str(e["message"]).encode()) <= 64 for e in events)
