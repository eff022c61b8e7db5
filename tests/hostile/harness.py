"""What every hostile test needs: a skill written on the spot, `skillc serve` in a child process
(so an abort kills the server, not the test run), and a call timed from outside.

Containment is asserted from outside the server: the answer (an ``isError`` result with the
exact text or diagnostic), the time it took, the server process still alive, and a benign skill
next to the attacker still answering while the attack runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_URL = re.compile(r"MCP endpoint: (http://\S+/mcp)")

BENIGN_INDEX = """\
const skill = wx.modelContext.createSkill('benign')
skill.registerAPI('ping', async () => ({ content: [{ type: 'text', text: 'pong' }] }))
"""


def write_skill(
    root: Path,
    name: str,
    index_js: str,
    apis: list[dict[str, Any]],
    *,
    files: dict[str, str] | None = None,
    components: list[dict[str, Any]] | None = None,
) -> Path:
    """A skill folder ``root/name`` with SKILL.md, mcp.json, index.js and any other ``files``."""
    skill = root / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"# {name}\n\nA hostile test skill.\n", encoding="utf-8")
    manifest: dict[str, Any] = {"apis": apis, "components": components or []}
    (skill / "mcp.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    (skill / "index.js").write_text(index_js, encoding="utf-8")
    for rel, text in (files or {}).items():
        path = skill / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return skill


def api(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name}.", "inputSchema": {"type": "object"}, **extra}


def benign_skill(root: Path) -> Path:
    return write_skill(root, "benign", BENIGN_INDEX, [api("ping")])


@dataclass
class Answer:
    """One tools/call as seen from outside: the JSON-RPC response (or the transport error) and its time."""

    status: int | None
    body: dict[str, Any] | None
    seconds: float
    error: str | None = None

    @property
    def result(self) -> dict[str, Any]:
        assert self.body is not None, self.error
        assert "result" in self.body, self.body
        result: dict[str, Any] = self.body["result"]
        return result

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.result.get("content", []))


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float = 60.0) -> Answer:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments or {}},
        }
        t0 = time.monotonic()
        try:
            r = httpx.post(self.url, json=body, headers=ACCEPT, timeout=timeout)
        except httpx.HTTPError as err:
            return Answer(None, None, time.monotonic() - t0, f"{type(err).__name__}: {err}")
        parsed = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
        return Answer(r.status_code, parsed, time.monotonic() - t0, None if parsed else r.text[:500])

    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        return "".join(self.stderr)


@contextmanager
def serve(*paths: Path, state: Path, args: tuple[str, ...] = (), start_timeout: float = 60.0) -> Iterator[Served]:
    """``skillc serve PATHS --port 0`` in a child process; the server must still be alive at the end
    and must never have printed a Python traceback."""
    cmd = [sys.executable, "-m", "skillc", "serve", *map(str, paths), "--port", "0", "--state-dir", str(state), *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    lines: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            m = _URL.search(line)
            if m and not url:
                url.append(m.group(1))
                found.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        if not found.wait(start_timeout):
            raise AssertionError(f"skillc serve did not start: {''.join(lines)}")
        served = Served(url[0], proc, lines)
        _wait_listening(served, start_timeout)
        yield served
        assert served.alive(), f"the server died (exit {proc.returncode}):\n{served.log()}"
        assert "Traceback (most recent call last)" not in served.log(), served.log()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_listening(served: Served, timeout: float) -> None:
    # The endpoint is printed just before uvicorn binds: wait until it answers.
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if not served.alive():
            raise AssertionError(f"skillc serve exited: {served.log()}")
        try:
            httpx.get(served.url.rsplit("/", 1)[0] + "/", timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("skillc serve never started listening")


def while_attacking(
    served: Served,
    attack: tuple[str, dict[str, Any]],
    probe: tuple[str, dict[str, Any]],
    *,
    head_start: float = 0.3,
    probe_within: float = 5.0,
) -> tuple[Answer, Answer]:
    """Run the attack call; once it is in flight, call the probe and require its answer within
    ``probe_within`` seconds. Returns (attack answer, probe answer)."""
    box: list[Answer] = []
    t = threading.Thread(target=lambda: box.append(served.call(*attack, timeout=120)))
    t.start()
    time.sleep(head_start)
    probe_answer = served.call(*probe, timeout=probe_within + 30)
    t.join(150)
    assert box, "the attack call never came back"
    assert probe_answer.seconds < probe_within, f"the probe waited {probe_answer.seconds:.1f} s behind the attack"
    return box[0], probe_answer
