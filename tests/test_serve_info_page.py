"""The info page a browser gets from `skillc serve`, and the command line's start-up and request log.

The page is served at ``/`` and at ``GET /mcp`` when the Accept header is a browser's (names
text/html, not text/event-stream); an MCP client's GET keeps the SDK's event stream. Everything a
skill supplies is escaped, and the page runs under a CSP that forbids every script and load.
"""

from __future__ import annotations

import json
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.info_page import CSP, wants_page
from skillc.server.runner import ListeningServer, ServeHandle, ServeOptions, prepare, uvicorn_config
from tests.conftest import COFFEE, ROOT

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
PLAIN_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "a", "code", "pre"}
PLAIN_TAGS |= {"table", "tr", "th", "td"}
EVIL_MCP = {
    "apis": [
        {
            "name": "greet",
            "description": 'Says hello. <img src=x onerror="alert(3)"> & more',
            "inputSchema": {"type": "object"},
        }
    ],
    "components": [],
}
EVIL_SKILL_MD = '# Evil <script>alert(1)</script>\n\nGreets <script>alert(2)</script> & "quotes".\n'
EVIL_INDEX = """\
const skill = wx.modelContext.createSkill('skills/evil-skill')
skill.registerAPI('greet', async () => ({ content: [{ type: 'text', text: 'hello' }] }))
"""


def make_evil_skill(root: Path) -> Path:
    skill = root / "evil-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text(EVIL_SKILL_MD, encoding="utf-8")
    (skill / "mcp.json").write_text(json.dumps(EVIL_MCP), encoding="utf-8")
    (skill / "index.js").write_text(EVIL_INDEX, encoding="utf-8")
    return skill


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    root = tmp_path_factory.mktemp("info-page")
    evil = make_evil_skill(root)
    options = ServeOptions(paths=(COFFEE, evil), port=0, runtime=RuntimeConfig(state_dir=root / "state"))
    with ServeHandle.start(options) as handle:
        yield handle


def _base(handle: ServeHandle) -> str:
    return handle.url.removesuffix("/mcp")


def browse(url: str, **headers: str) -> httpx.Response:
    """GET as a browser; the body is read only when it is a page (an event stream never ends)."""
    with httpx.stream("GET", url, headers={"accept": BROWSER, **headers}, timeout=30) as got:
        if got.headers.get("content-type", "").startswith("text/html") or got.status_code != 200:
            got.read()
        return got


@pytest.mark.parametrize("path", ["/", "/mcp"])
def test_browser_gets_the_info_page(server: ServeHandle, path: str) -> None:
    got = browse(_base(server) + path)
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("text/html")
    assert got.headers["content-security-policy"] == CSP
    assert "default-src 'none'" in CSP and "script-src" not in CSP  # no script at all
    assert got.headers["x-content-type-options"] == "nosniff"
    page = got.text
    for tool in ("searchDrinks", "confirmOrder", "payOrder", "greet"):
        assert f"<code>{tool}</code>" in page
    assert f"<code>{server.url}</code>" in page  # the endpoint, as the browser reached it
    assert "skillc serve --stdio " in page and str(COFFEE.resolve()) in page
    assert "npx @modelcontextprotocol/inspector" in page
    assert "&quot;url&quot;: &quot;" + server.url in page  # the client config snippet (escaped JSON)
    # Plain markup only: no script, no image, no stylesheet or frame to load.
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", page))
    assert tags <= PLAIN_TAGS, tags


def test_untrusted_skill_text_is_escaped(server: ServeHandle) -> None:
    page = browse(_base(server) + "/").text
    assert "<script>" not in page and "<img" not in page
    assert "Greets &lt;script&gt;alert(2)&lt;/script&gt; &amp; &quot;quotes&quot;." in page
    assert "Says hello. &lt;img src=x onerror=&quot;alert(3)&quot;&gt; &amp; more" in page


def test_mcp_clients_keep_the_sdk_behaviour(server: ServeHandle) -> None:
    with httpx.stream("GET", server.url, headers={"accept": "text/event-stream"}, timeout=30) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
    posted = httpx.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={"accept": "application/json, text/event-stream", "content-type": "application/json"},
        timeout=30,
    )
    assert posted.status_code == 200 and posted.json()["result"]["tools"]


def test_other_paths_and_methods(server: ServeHandle) -> None:
    base = _base(server)
    assert browse(base + "/nope").status_code == 404
    assert browse(base + "/mcp/x").status_code == 404
    assert httpx.post(base + "/", json={}, timeout=30).status_code == 405


def test_the_page_keeps_the_dns_rebinding_guard(server: ServeHandle) -> None:
    assert browse(_base(server) + "/", host="evil.example").status_code == 421
    assert browse(server.url, origin="http://evil.example").status_code == 403


@pytest.mark.parametrize(
    ("accept", "page"),
    [
        (BROWSER, True),
        ("text/html", True),
        ("text/event-stream", False),
        ("text/html, text/event-stream", False),
        ("*/*", False),
        ("application/json", False),
        ("text/html;q=0", False),
        ("", False),
        (None, False),
    ],
)
def test_wants_page(accept: str | None, page: bool) -> None:
    assert wants_page(accept) is page


# -- the command line ---------------------------------------------------------------------------


class _Lines:
    """A process's stderr, line by line, readable with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert proc.stderr is not None
        threading.Thread(target=self._pump, args=(proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, predicate: Callable[[str], bool], timeout_s: float = 120) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"timed out; stderr so far: {self.seen}") from None
            if line is None:
                raise AssertionError(f"stderr ended; it said: {self.seen}")
            self.seen.append(line)
            if predicate(line):
                return line


def _serve(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--state-dir", str(tmp_path / "state"), *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def _message(line: str) -> str:
    return str(json.loads(line).get("message", ""))


def test_cli_progress_banner_and_json_request_log(tmp_path: Path) -> None:
    proc = _serve(tmp_path, "--port", "0", "--log-format", "json")
    try:
        lines = _Lines(proc)
        # Under json every line is a JSON object, the start-up lines too (their text in "message").
        banner = lines.until(lambda line: _message(line).startswith("MCP endpoint: "))
        url, _, who = _message(banner).removeprefix("MCP endpoint: ").partition(" ")
        assert who == "(single user did:example:user, no auth)"
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp") and not url.endswith(":0/mcp")
        assert _message(lines.seen[0]) == f"loading coffee-skill ({COFFEE})..."
        assert any(_message(line).startswith("serving coffee-skill (") for line in lines.seen)
        assert lines.seen.index(banner) > 0  # "loading" came first, the banner once it listened

        params = {"name": "searchDrinks", "arguments": {"keyword": "latte"}}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        answered = httpx.post(url, json=call, headers=headers, timeout=60)  # listening once the banner is out
        assert answered.status_code == 200 and answered.json()["result"]["isError"] is False

        logged = lines.until(lambda line: line.startswith("{") and '"tools/call"' in line, timeout_s=30)
        record = json.loads(logged)
        assert record["method"] == "tools/call"
        assert record["tool"] == "searchDrinks" and record["skill"] == "coffee-skill"
        assert record["outcome"] == "ok" and record["level"] == "info"
        assert isinstance(record["ms"], (int, float)) and record["ms"] >= 0
        assert isinstance(record["ts"], (int, float))
    finally:
        proc.terminate()
        out, _err = proc.communicate(timeout=60)
    assert out == ""  # HTTP mode prints nothing on stdout either


def test_cli_text_request_log(tmp_path: Path) -> None:
    proc = _serve(tmp_path, "--port", "0")
    try:
        lines = _Lines(proc)
        url = lines.until(lambda line: line.startswith("MCP endpoint: ")).removeprefix("MCP endpoint: ").split(" ")[0]
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"accept": "application/json", "content-type": "application/json"}
        assert httpx.post(url, json=body, headers=headers, timeout=60).status_code == 200
        logged = lines.until(lambda line: line.startswith("skillc: tools/list"), timeout_s=30)
        # METHOD [TARGET] OUTCOME MSms, then the HTTP request's id.
        assert re.fullmatch(r"skillc: tools/list ok \d+\.\dms req=[0-9a-f]{16}", logged), logged
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def test_cli_busy_port_is_a_usage_error_without_banner(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _serve(tmp_path, "--port", str(port))
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert f"skillc: error: cannot listen on 127.0.0.1:{port}: " in err
    assert "MCP endpoint" not in err and "loading" not in err


def test_the_banner_hook_runs_once_the_socket_listens(tmp_path: Path) -> None:
    prepared = prepare(ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path)))
    heard: list[int] = []

    def on_listening(host: str, port: int) -> None:
        with socket.create_connection((host, port), timeout=5):  # refused if it did not listen yet
            heard.append(port)

    server = ListeningServer(uvicorn_config(prepared, "127.0.0.1", 0), on_listening)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not heard and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    server.should_exit = True
    thread.join(timeout=30)
    assert len(heard) == 1 and heard[0] != 0
