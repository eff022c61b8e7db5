"""The gate of `skillc debug`'s server (skillc.server.debugger.guard): the attacks it answers, each
against the real server over HTTP: a foreign Origin, a DNS-rebinding Host, a missing or wrong launch
token, a wildcard CORS answer, an oversized or too-deep body, and SSE outboxes that would grow."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.channel_sse import MAX_CONSOLES, OUTBOX_MAX, SseConsoleChannel
from skillc.server.debugger.console_page import DebugServer, build_debug_server
from skillc.server.debugger.guard import MAX_BODY_BYTES, TOKEN_HEADER
from skillc.server.runner import ServeOptions, prepare
from tests.conftest import COFFEE
from tests.waiting import PATIENCE_S, wait_until

PAY = '{"query": "/call pay {\\"amount\\": 7}"}'
TOKEN_ROUTES = [
    ("GET", "/__debug/events"),
    ("POST", "/__debug/answer"),
    ("GET", "/__debug/api/targets"),
    ("GET", "/__debug/api/console"),
    ("POST", "/__debug/api/render"),
    ("POST", "/__debug/api/chat"),
    ("GET", "/__agent_trace"),
    ("POST", "/__agent_trace"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, debug: DebugServer, port: int) -> None:
        self.debug = debug
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.token = debug.token
        self.turns: list[str] = []
        self.server = debug.uvicorn_server("127.0.0.1", port)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def auth(self, **extra: str) -> dict[str, str]:
        return {TOKEN_HEADER: self.token, **extra}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    state = tmp_path_factory.mktemp("debug-guard")
    prepared = prepare(ServeOptions(paths=(COFFEE,), runtime=RuntimeConfig(state_dir=state)))
    debug = build_debug_server(prepared, browser=False)
    port = free_port()
    debug.listening("127.0.0.1", port)
    running = Served(debug, port)
    assert debug.page is not None and debug.page.chat is not None
    chat = debug.page.chat
    real_turn = chat.turn

    async def counted(query: str) -> Any:
        running.turns.append(query)  # every chat turn that got past the gate, whatever its outcome
        return await real_turn(query)

    chat.turn = counted  # type: ignore[method-assign]
    running.thread.start()
    wait_until(lambda: bool(running.server.started), PATIENCE_S, "the debug server to start")
    yield running
    running.server.should_exit = True
    running.thread.join(timeout=30)


def one_line_error(reply: httpx.Response) -> str:
    assert "\n" not in reply.text.strip(), reply.text
    error = reply.json()["error"]
    assert isinstance(error, str) and error
    return error


def test_the_printed_console_url_carries_a_strong_token(served: Served) -> None:
    urls = served.debug.descriptor.urls
    assert urls.console == f"{served.base}/?token={served.token}"
    assert len(served.token) >= 43  # 32 random bytes, URL-safe base64: 256 bits
    # The field names of the descriptor stay as they were.
    assert set(served.debug.descriptor.wire()["urls"]) == {"debuggerMcp", "skillsMcp", "console", "agentTrace"}


def test_a_foreign_origin_cannot_run_a_chat_turn(served: Served) -> None:
    before = len(served.turns)
    for headers in (
        {"origin": "http://evil.example", "content-type": "text/plain"},  # the measured attack
        served.auth(origin="http://evil.example", **{"content-type": "application/json"}),  # even with the token
    ):
        reply = httpx.post(f"{served.base}/__debug/api/chat", headers=headers, content=PAY)
        assert reply.status_code == 403
        assert "origin" in one_line_error(reply).lower()
    assert len(served.turns) == before


@pytest.mark.parametrize(("method", "path"), [("GET", "/__debug/events"), *TOKEN_ROUTES[1:4]])
def test_a_rebinding_host_is_refused(served: Served, method: str, path: str) -> None:
    # The token too, to show the Host check alone refuses: a rebinding page could have read it nowhere,
    # but the check must not depend on that.
    headers = served.auth(host=f"evil.example:{served.port}", **{"content-type": "application/json"})
    body = json.dumps({"id": "cmd-1", "ok": True}) if method == "POST" else None
    with httpx.Client(timeout=5) as client:
        reply = client.request(method, f"{served.base}{path}", headers=headers, content=body)
    assert reply.status_code == 421
    assert "host" in one_line_error(reply).lower()
    assert not served.debug.channel.connected  # no console attached


@pytest.mark.parametrize(("method", "path"), TOKEN_ROUTES)
@pytest.mark.parametrize("token", [None, "wrong", "x" * 43])
def test_the_consoles_routes_need_the_launch_token(served: Served, method: str, path: str, token: str | None) -> None:
    before = len(served.turns)
    headers = {"content-type": "application/json"} if token is None else {TOKEN_HEADER: token}
    body = PAY if method == "POST" else None
    with httpx.Client(timeout=5) as client:
        reply = client.request(method, f"{served.base}{path}", headers=headers, content=body)
        assert reply.status_code == 403
        assert "token" in one_line_error(reply)
        wrong_query = client.request(method, f"{served.base}{path}", params={"token": token or ""}, content=body)
        assert wrong_query.status_code == 403
    assert len(served.turns) == before and not served.debug.channel.connected


def test_the_token_opens_the_routes_and_the_page_needs_none(served: Served) -> None:
    assert httpx.get(f"{served.base}/__debug/api/targets", headers=served.auth()).status_code == 200
    assert httpx.get(f"{served.base}/__debug/api/console", params={"token": served.token}).status_code == 200
    assert httpx.get(f"{served.base}/__agent_trace", headers=served.auth()).json() == {"stored": False}
    # The page and its assets carry no secret: they load without it (and then read it from the URL).
    page = httpx.get(f"{served.base}/")
    assert page.status_code == 200 and "/__debug/static/console.js" in page.text
    script = httpx.get(f"{served.base}/__debug/static/console.js").text
    assert TOKEN_HEADER in script and "token=" in script
    # The page and its assets still get the Host check.
    assert httpx.get(f"{served.base}/", headers={"host": "evil.example"}).status_code == 421


def test_no_wildcard_cors_anywhere(served: Served) -> None:
    preflight = {"origin": "http://localhost:5173", "access-control-request-method": "POST"}
    for path in ("/__agent_trace", "/__wsd_mcp", "/mcp", "/__debug/api/chat"):
        for reply in (
            httpx.options(f"{served.base}{path}", headers={**preflight, TOKEN_HEADER: served.token}),
            httpx.post(
                f"{served.base}{path}",
                headers=served.auth(origin="http://localhost:5173", accept="application/json, text/event-stream"),
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                timeout=10,
            ),
        ):
            assert reply.headers.get("access-control-allow-origin") != "*", (path, reply.headers)
    # An MCP endpoint answers the admitted Origin itself; a sandboxed frame's "null" gets no grant.
    mcp = httpx.options(f"{served.base}/__wsd_mcp", headers=preflight)
    assert mcp.headers["access-control-allow-origin"] == "http://localhost:5173"
    null = httpx.options(f"{served.base}/__wsd_mcp", headers={**preflight, "origin": "null"})
    assert "access-control-allow-origin" not in null.headers


def _status_mid_body(served: Served, path: str, head: str, chunks: list[bytes]) -> int:
    """Send the head and ``chunks``, which never finish the body, then read the answer: one comes
    only if the server decided without waiting for the rest of the body."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(
            (
                f"POST {path}?token={served.token} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Content-Type: application/json\r\n{head}\r\n"
            ).encode()
        )
        with contextlib.suppress(OSError):  # the server may answer and stop reading first
            for chunk in chunks:
                sock.sendall(chunk)
        status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(status_line.split()[1])


@pytest.mark.parametrize("path", ["/__debug/api/chat", "/__debug/api/render", "/__debug/answer", "/__agent_trace"])
def test_a_300_mb_body_is_413_before_it_is_read(served: Served, path: str) -> None:
    before = len(served.turns)
    mib = b"[" * (1 << 20)
    assert _status_mid_body(served, path, "Content-Length: 300000000\r\n", [mib] * 3) == 413
    # No Content-Length to trust: the count while the body streams in stops it past the limit.
    over = MAX_BODY_BYTES // len(mib) + 2
    chunked = [f"{len(mib):x}\r\n".encode() + mib + b"\r\n"] * over
    assert _status_mid_body(served, path, "Transfer-Encoding: chunked\r\n", chunked) == 413
    assert len(served.turns) == before


@pytest.mark.parametrize("path", ["/__debug/api/chat", "/__debug/api/render", "/__debug/answer", "/__agent_trace"])
def test_deep_json_is_a_one_line_400(served: Served, path: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    reply = httpx.post(
        f"{served.base}{path}", headers=served.auth(**{"content-type": "application/json"}), content=deep
    )
    assert reply.status_code == 400, reply.text[:300]
    assert "\n" not in reply.text and "Traceback" not in reply.text
    assert "too deeply nested" in reply.text


def test_sse_outboxes_are_bounded_and_count_their_drops() -> None:
    async def go() -> list[str]:
        channel = SseConsoleChannel()
        console = channel._connect()
        for n in range(10 * OUTBOX_MAX):
            channel.broadcast("console", {"n": n, "text": "x" * 100})
        assert console.outbox.qsize() == OUTBOX_MAX
        assert console.dropped == 9 * OUTBOX_MAX

        class Request:
            async def is_disconnected(self) -> bool:
                return False

        stream = channel._stream(Request(), console)  # type: ignore[arg-type]
        frames = [await anext(stream) for _ in range(3)]
        await stream.aclose()
        return frames

    hello, dropped, first = asyncio.run(go())
    assert hello.startswith("event: hello")
    assert dropped == f"event: dropped\ndata: {json.dumps({'dropped': 9 * OUTBOX_MAX})}\n\n"
    assert json.loads(first.split("data: ", 1)[1])["n"] == 9 * OUTBOX_MAX  # the oldest went, the newest stay


def test_open_consoles_are_bounded_and_the_oldest_is_closed() -> None:
    async def go() -> tuple[int, bool, list[str]]:
        channel = SseConsoleChannel()
        consoles = [channel._connect() for _ in range(MAX_CONSOLES + 5)]
        first = consoles[0]

        class Request:
            async def is_disconnected(self) -> bool:
                return False

        async def read() -> list[str]:
            return [frame async for frame in channel._stream(Request(), first)]  # type: ignore[arg-type]

        # The first console's stream, started after it was closed, says hello and ends at once
        # (an open one would wait for frames: the deadline only bounds a broken run).
        try:
            frames = await asyncio.wait_for(read(), PATIENCE_S)
        except TimeoutError:
            frames = ["(still open)"]
        return len(channel._consoles), first.gone.is_set(), frames

    open_now, closed, frames = asyncio.run(go())
    assert open_now == MAX_CONSOLES
    assert closed and [f.split("\n", 1)[0] for f in frames] == ["event: hello"]
