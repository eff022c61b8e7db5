"""``skillc serve --drain-seconds``: after SIGTERM, /readyz says 503 at once, the listener goes on
serving new and kept-alive connections with ``Connection: close`` on every response, and only at
the end of the drain (or on a second SIGTERM) stops accepting; the call running all along finishes.
Real ``skillc serve`` processes (the slow fixture skill of tests/test_serve_workers.py)."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.server.health import DRAINING_REASON
from tests.test_serve_workers import (
    NAP_WHILE_CLOSING_MS,
    Served,
    _slow_call_in_background,
    base,
    nap_call,
    refused,
    serve,
)
from tests.waiting import PATIENCE_S, wait_until

# Far longer than any test here takes: the drain ends by a second SIGTERM, not by the clock.
LONG_DRAIN_S = "600"


def readiness_by_pid(served: Served, workers: int) -> dict[int, int]:
    """/readyz of every worker (one fresh connection each until each pid answered): pid -> status."""
    seen: dict[int, int] = {}
    for _ in range(400):
        with httpx.Client() as client:
            reply = client.get(base(served) + "/readyz")
        seen[int(reply.json()["pid"])] = reply.status_code
        if reply.status_code == 503:
            assert reply.json()["reason"] == DRAINING_REASON
        if len(seen) == workers:
            return seen
    raise AssertionError(f"only workers {sorted(seen)} answered /readyz")


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_drains_with_readyz_503_and_connection_close_then_the_running_call_finishes(
    tmp_path: Path, workers: int
) -> None:
    with serve(tmp_path, "--workers", str(workers), "--drain-seconds", LONG_DRAIN_S) as served:
        kept = httpx.Client()
        before = kept.get(base(served) + "/healthz")
        assert before.status_code == 200 and "close" not in before.headers.get("connection", "")
        assert set(readiness_by_pid(served, workers).values()) == {200}
        results: list[dict[str, Any]] = []
        thread = _slow_call_in_background(served.url, tmp_path, results, ms=NAP_WHILE_CLOSING_MS)
        served.proc.send_signal(signal.SIGTERM)
        wait_until(
            lambda: set(readiness_by_pid(served, workers).values()) == {503}, PATIENCE_S, "every worker to drain"
        )
        # Still serving: the kept-alive connection and new ones, each answer asking to close.
        again = kept.get(base(served) + "/healthz")
        assert again.status_code == 200 and again.headers["connection"] == "close"
        with httpx.Client() as fresh:
            reply = fresh.post(
                served.url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
                headers={"accept": "application/json, text/event-stream", "content-type": "application/json"},
            )
        assert reply.status_code == 200 and reply.headers["connection"] == "close"
        assert "napThenAnswer" in reply.text
        assert nap_call(served.url, 0, "during")["structuredContent"] == {"token": "during", "slept": 0}
        assert not results  # the slow call is still running
        served.proc.send_signal(signal.SIGTERM)  # ends the drain
        wait_until(lambda: refused(served.port), PATIENCE_S, "the listener to close")
        thread.join(timeout=NAP_WHILE_CLOSING_MS / 1000 + 60)
        assert served.proc.wait(timeout=60) == 0
        kept.close()
    assert results and results[0]["structuredContent"] == {"token": "slow", "slept": NAP_WHILE_CLOSING_MS}


def test_the_drain_ends_by_itself_and_the_server_exits_0(tmp_path: Path) -> None:
    with serve(tmp_path, "--drain-seconds", "0.5") as served:
        served.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: refused(served.port), PATIENCE_S, "the listener to close after the drain")
        assert served.proc.wait(timeout=60) == 0


def test_a_connection_accepted_as_the_drain_ends_still_gets_its_answer(tmp_path: Path) -> None:
    """A request whose connection the server accepted but had not read when the drain ended (what
    a proxy writes at that moment) is answered, not closed unread."""
    with serve(tmp_path, "--drain-seconds", LONG_DRAIN_S) as served:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n".encode()
        rest = (
            b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        served.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: readiness_by_pid(served, 1) != {}, PATIENCE_S, "the drain")  # serving still
        with socket.create_connection(("127.0.0.1", served.port), timeout=60) as pending:
            pending.sendall(head)  # half a request: the server has no request on it yet
            wait_until(lambda: readiness_by_pid(served, 1).popitem()[1] == 503, PATIENCE_S, "/readyz 503")
            served.proc.send_signal(signal.SIGTERM)  # ends the drain
            wait_until(lambda: handshake_dropped(served.port), PATIENCE_S, "the listener to drop new connections")
            pending.sendall(rest)
            answer = b""
            while chunk := pending.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert b"napThenAnswer" in answer
        assert served.proc.wait(timeout=60) == 0


def handshake_dropped(port: int) -> bool:
    """Whether a new connection gets no answer at all (the drain's end: its SYN is dropped)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except TimeoutError:
        return True
    except ConnectionRefusedError:
        raise AssertionError("the listener closed while a connection it accepted had not sent its request") from None
    return False
