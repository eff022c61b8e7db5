"""Bounds that hold whatever a client or a skill sends: a tool call's stored events have a fixed
size, a skill cannot smuggle an identity header past the filter by spelling it as a backend
would read it, and a bad URL, header, response body or storage key is a named ``fail``, never a
traceback. Each case is the exact input that escaped before, run through `skillc call` (as a
process, so its stderr is what an operator would see) or `skillc serve`, against real local HTTP
servers; on SQLite, and on PostgreSQL when the suite runs with --state-store=postgresql.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from mcp_types import Implementation

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.host.storage import load_storage_seed
from skillc.runtime.state import open_state, state_url_of
from skillc.server.events import EventHub, EventLimits, EventQuery
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import FIXTURES
from tests.test_server import apps_client

BOUNDS = FIXTURES / "bounds" / "bounds-skill"
USER = "did:example:user"


def skillc_call(state: Path, api: str, args: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any]]:
    """`skillc call ... --json` as its own process: the exit code and the outcome. Whatever the
    input, nothing may reach stderr as a traceback."""
    argv = [sys.executable, "-m", "skillc", "call", str(BOUNDS), api, "--args", json.dumps(args)]
    done = subprocess.run(
        [*argv, "--state-dir", str(state), "--json", "--user", USER, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def text_of(outcome: dict[str, Any]) -> str:
    text: str = outcome["result"]["content"][0]["text"]
    return text


# -- real servers -----------------------------------------------------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, *_args: object) -> None:
        pass


class WsgiBackend:
    """A real WSGI server (the standard library's): it maps ``_`` in header names to ``-`` and
    joins repeated headers with a comma, as the backend that saw ``did:evil:8,did:example:user``
    did. Records each request's ``HTTP_*`` environ."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

        def app(environ: dict[str, Any], start: Any) -> list[bytes]:
            self.seen.append({k: str(v) for k, v in environ.items() if k.startswith("HTTP_")})
            start("200 OK", [("content-type", "application/json")])
            return [b'{"ok": true}']

        self.server: WSGIServer = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Body(http.server.BaseHTTPRequestHandler):
    """``/deep/N``: a JSON array nested N deep; anything else: ``{}``."""

    def do_GET(self) -> None:
        self.server.hits += 1  # type: ignore[attr-defined]
        depth = int(self.path.removeprefix("/deep/")) if self.path.startswith("/deep/") else 0
        body = b"[" * depth + b"]" * depth if depth else b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


class BodyServer:
    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Body)
        self.server.hits = 0  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def hits(self) -> int:
        hits: int = self.server.hits  # type: ignore[attr-defined]
        return hits

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def backend() -> Iterator[WsgiBackend]:
    made = WsgiBackend()
    yield made
    made.close()


@pytest.fixture
def bodies() -> Iterator[BodyServer]:
    made = BodyServer()
    yield made
    made.close()


# -- 1. a tool call's arguments do not grow the store without bound ----------------------------------


def test_forty_calls_with_4_mb_arguments_store_bounded_events(tmp_path: Path) -> None:
    blob = "x" * 4_000_000  # 4 MB: what fits in the 4 MiB request body the MCP transport accepts
    calls = 40
    runtime = RuntimeConfig(state_dir=tmp_path)
    with ServeHandle.start(ServeOptions(paths=(BOUNDS,), port=0, runtime=runtime)) as handle:

        async def session() -> list[str]:
            async with apps_client(handle.url, client_info=Implementation(name="bulk", version="1")) as client:
                replies = [await client.call_tool("echo", {"blob": blob}) for _ in range(calls)]
            return [r.content[0].text for r in replies]  # type: ignore[union-attr]

        answers = asyncio.run(session())
    assert answers == [f"got {len(blob)}"] * calls
    store = open_state(state_url_of(runtime))
    try:
        rows = [json.loads(str(r[0])) for r in store.execute("SELECT event FROM events")]
        sizes = [len(str(r[0]).encode()) for r in store.execute("SELECT event FROM events")]
    finally:
        store.close()
    started = [e for e in rows if e["message"] == "tools/call echo started"]
    assert len(started) == calls
    limit = EventLimits().max_metadata_bytes
    # Every stored event, the metadata plus its other fields, stays near the metadata bound: far
    # under the 1 MB per call the issue allows, let alone the 4 MB each call sent.
    assert max(sizes) < limit + 8192
    assert sum(sizes) < calls * 64 * 1024
    marker = started[0]["metadata"]["arguments"]["$truncated"]
    assert marker["original_size"] == len(json.dumps({"blob": blob}))
    assert marker["max_size"] == limit and marker["preview"].startswith('{"blob": "xxx')
    assert started[0]["metadata"]["tool"] == "echo"


def test_event_metadata_is_cut_and_made_json_safe_on_every_backend(tmp_path: Path) -> None:
    """The hub itself, without a server: what a client can put into metadata (a lone surrogate
    as a JSON escape, nesting no encoder can walk, thousands of keys) is stored, bounded."""
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    store = open_state(state_url_of(RuntimeConfig(state_dir=tmp_path)))
    try:
        for hub in (EventHub(), EventHub(store=store)):
            hub.append("s", "mcp", "tool_call", "info", "a\ud800b", metadata={"arguments": {"k": "\udc00"}})
            hub.append("s", "mcp", "tool_call", "info", "deep", metadata={"tool": "t", "arguments": deep})
            hub.append("s", "mcp", "tool_call", "info", "wide", metadata={f"k{i}": "y" * 100 for i in range(1000)})
            events = hub.page(EventQuery("s")).events
            assert (events[0].message, events[0].metadata) == ("a?b", {"arguments": {"k": "?"}})
            assert events[1].metadata == {"tool": "t", "arguments": {"$truncated": {"max_size": 16384}}}
            assert events[2].metadata["$truncated"]["original_size"] > 100_000
            assert all(len(json.dumps(e.metadata)) <= 16384 for e in events)
    finally:
        store.close()


# -- 2. identity headers cannot be smuggled in another spelling -------------------------------------


@pytest.mark.parametrize("name", ["X-Skillc_User-DID", "x_skillc_user_did", " X-SKILLC-USER-DID", "X-SKILLC-USER-DID "])
def test_a_smuggled_identity_header_never_reaches_the_backend(tmp_path: Path, backend: WsgiBackend, name: str) -> None:
    header = {name: "did:evil:8", "X_Skillc_Capability": "forged", "X-Trace": "t-1"}
    code, outcome = skillc_call(
        tmp_path, "fetch", {"url": backend.url + "/profile", "header": header}, "--allow-host", backend.url
    )
    assert (code, outcome["result"]["structuredContent"]) == (0, {"status": 200, "kind": "object"})
    [seen] = backend.seen
    assert seen["HTTP_X_SKILLC_USER_DID"] == USER
    assert "HTTP_X_SKILLC_CAPABILITY" not in seen  # no login: the host sends none, the forgery is gone
    assert seen["HTTP_X_TRACE"] == "t-1"


# -- 3. named errors, never a traceback -------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/a\nb", "invalid url: character '\\n' at position"),
        ("/a\r\nX-Evil: 1", "invalid url: character '\\r' at position"),
        ("/a b", "invalid url: character ' ' at position"),
        ("/a\x00b", "invalid url: character '\\x00' at position"),
        ("/a\x7fb", "invalid url: character '\\x7f' at position"),
    ],
)
def test_a_url_with_invalid_characters_is_a_named_fail(
    tmp_path: Path, bodies: BodyServer, path: str, reason: str
) -> None:
    code, outcome = skillc_call(tmp_path, "fetch", {"url": bodies.url + path}, "--allow-host", bodies.url)
    assert code == 1
    assert text_of(outcome).startswith("request:fail " + reason)
    assert bodies.hits == 0


def test_a_url_that_does_not_parse_is_a_named_fail(tmp_path: Path) -> None:
    code, outcome = skillc_call(tmp_path, "fetch", {"url": "http://[::1/x"}, "--allow-host", "http://[::1]:80")
    assert (code, text_of(outcome)) == (1, "request:fail invalid url: Invalid IPv6 URL")


@pytest.mark.parametrize(("depth", "kind"), [(200_000, "string"), (513, "string"), (512, "object"), (1, "object")])
def test_a_deeply_nested_json_body_reaches_the_skill_as_text(
    tmp_path: Path, bodies: BodyServer, depth: int, kind: str
) -> None:
    url = f"{bodies.url}/deep/{depth}"
    code, outcome = skillc_call(tmp_path, "fetch", {"url": url}, "--allow-host", bodies.url)
    assert (code, outcome["result"]["structuredContent"]) == (0, {"status": 200, "kind": kind})


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"X-A\r\nX-Evil": "1"}, "invalid header name 'X-A\\r\\nX-Evil'"),
        ({"X-A\x00": "1"}, "invalid header name 'X-A\\x00'"),
        ({"X A": "1"}, "invalid header name 'X A'"),
        ({"X-A": "1\r\nX-Evil: 1"}, "invalid header value for 'X-A': CR, LF or NUL"),
        ({"X-A": "1\nX-Evil: 1"}, "invalid header value for 'X-A': CR, LF or NUL"),
        ({"X-A": "1\x00"}, "invalid header value for 'X-A': CR, LF or NUL"),
    ],
)
def test_a_header_with_cr_lf_or_nul_is_refused_by_name(
    tmp_path: Path, backend: WsgiBackend, header: dict[str, str], reason: str
) -> None:
    code, outcome = skillc_call(
        tmp_path, "fetch", {"url": backend.url + "/p", "header": header}, "--allow-host", backend.url
    )
    assert (code, text_of(outcome)) == (1, "request:fail " + reason)
    assert backend.seen == []


def test_a_non_ascii_header_value_is_sent_as_utf_8(tmp_path: Path, backend: WsgiBackend) -> None:
    header = {"X-Name": "Zoë"}
    code, _outcome = skillc_call(tmp_path, "fetch", {"url": backend.url, "header": header}, "--allow-host", backend.url)
    assert code == 0
    assert backend.seen[0]["HTTP_X_NAME"].encode("latin-1").decode("utf-8") == "Zoë"


@pytest.mark.parametrize(
    ("units", "reason"),
    [
        ([97, 0xD800], "invalid key: lone surrogate U+D800 at index 1"),
        ([0xDC00], "invalid key: lone surrogate U+DC00 at index 0"),
        ([97, 0, 98], "invalid key: NUL character at index 1"),
    ],
)
def test_a_key_a_store_cannot_hold_is_refused_the_same_on_every_store(
    tmp_path: Path, units: list[int], reason: str
) -> None:
    code, outcome = skillc_call(tmp_path, "keep", {"units": units})
    assert (code, text_of(outcome)) == (1, "setStorage:fail " + reason)
    store = open_state(state_url_of(RuntimeConfig(state_dir=tmp_path)))
    try:
        assert store.execute("SELECT COUNT(*) FROM storage")[0][0] == 0
    finally:
        store.close()


def test_a_value_with_a_lone_surrogate_is_kept(tmp_path: Path) -> None:
    """A value is JSON, which can carry a lone surrogate as an escape: stored, and read back."""
    code, outcome = skillc_call(tmp_path, "keep", {"key": "k", "valueUnits": [97, 0xD800]})
    # The skill read it back whole; the result, which must be UTF-8, carries it replaced.
    assert (code, outcome["result"]["structuredContent"]) == (0, {"data": "a\ufffd", "codes": [97, 0xD800]})
    store = open_state(state_url_of(RuntimeConfig(state_dir=tmp_path)))
    try:
        assert store.execute("SELECT value FROM storage WHERE key = ?", ("k",)) == [('"a\\ud800"',)]
    finally:
        store.close()


def test_a_storage_seed_key_with_nul_is_a_diagnostic() -> None:
    """`--storage FILE` keys are checked as wx.setStorage's are: at their place in the file, not
    as an error from the store at the first call. (A lone surrogate escape is not JSON to the
    file's parser: JSON007 before this check.)"""
    seed, problems = load_storage_seed('{"ok": 1, "a\\u0000b": 2}', "seed.json")
    assert seed is None
    [problem] = problems
    assert problem.code == "RUN105" and "invalid key: NUL character at index 1" in problem.message
    assert (problem.span.line, problem.span.column) == (1, 11)  # type: ignore[union-attr]
