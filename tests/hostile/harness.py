"""What every hostile test needs: a skill written on the spot, `skillc serve` in a child process
(so an abort kills the server, not the test run), and a call timed from outside.

Containment is asserted from outside the server: the answer (an ``isError`` result with the
exact text or diagnostic), the time it took, the server process still alive, and a benign skill
next to the attacker still answering while the attack runs.

Nothing here assumes an idle machine: the work an attack makes the server do is measured in the
server's CPU time, a deadline's answer is bounded by a multiple of the deadline
(tests.waiting.bound_for), and the probe is sent once the attack has reached the server.
"""

from __future__ import annotations

import json
import os
import re
import resource
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

from tests.waiting import PATIENCE_S, cpu_seconds

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


# What `skillc call` spends starting (Python, imports, loading the skill) on top of the call: about
# 0.4 CPU seconds, and on a loaded machine up to tens of wall seconds.
CLI_START_CPU_S = 4.0
CLI_START_S = 30.0


def run_cli(cmd: list[str], *, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run a command to its end: the process, its wall seconds and its CPU seconds (the child's and
    those of its own children). A loop that the deadline failed to stop shows in the CPU seconds
    however busy the machine is; the wall seconds only grow with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return proc, took, cpu


@dataclass
class Answer:
    """One tools/call as seen from outside: the JSON-RPC response (or the transport error) and its time."""

    status: int | None
    body: dict[str, Any] | None
    seconds: float
    error: str | None = None
    answered_at: float = 0.0  # time.monotonic() when the answer came

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
    # The conversation's session, sent back as a host does (docs/serve.md, "Sessions").
    session: str | None = None

    def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float = 120.0,
        sent: threading.Event | None = None,
    ) -> Answer:
        """One tools/call; ``sent`` is set once the whole request is on its way to the server."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments or {}},
        }
        if self.session is not None:
            body["params"]["_meta"] = {"skillc/session": self.session}  # type: ignore[index]

        def trace(event: str, _info: dict[str, Any]) -> None:
            if sent is not None and event == "http11.send_request_body.complete":
                sent.set()

        t0 = time.monotonic()
        try:
            with httpx.Client(timeout=timeout) as client:
                r = client.post(self.url, json=body, headers=ACCEPT, extensions={"trace": trace})
        except httpx.HTTPError as err:
            now = time.monotonic()
            return Answer(None, None, now - t0, f"{type(err).__name__}: {err}", now)
        finally:
            if sent is not None:
                sent.set()  # also when it failed: nobody waits for a request that never goes
        now = time.monotonic()
        parsed = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
        result = parsed.get("result") if isinstance(parsed, dict) else None
        named = (result.get("_meta") or {}).get("skillc/session") if isinstance(result, dict) else None
        if isinstance(named, str):
            self.session = named
        return Answer(r.status_code, parsed, now - t0, None if parsed else r.text[:500], now)

    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        return "".join(self.stderr)

    def cpu_seconds(self) -> float:
        """The server's CPU time so far: what an attack cost it, whatever the load on the machine."""
        return cpu_seconds(self.process.pid)


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
    attack_lasts: bool = False,
) -> tuple[Answer, Answer]:
    """Run the attack call; once it has reached the server, call the probe. Returns (attack
    answer, probe answer).

    ``attack_lasts``: the attack runs until its deadline, so the probe must be answered before the
    attack is; a server that made the probe wait behind the attack would answer it after. (A quick
    attack may be answered before the probe whatever the server does: then the probe is only
    required to be answered.)"""
    box: list[Answer] = []
    sent = threading.Event()
    t = threading.Thread(target=lambda: box.append(served.call(*attack, timeout=300, sent=sent)))
    t.start()
    assert sent.wait(PATIENCE_S), "the attack call was never sent"
    probe_answer = served.call(*probe, timeout=PATIENCE_S)
    t.join(330)
    assert box, "the attack call never came back"
    assert probe_answer.body is not None, f"the probe was not answered: {probe_answer.error}"
    if attack_lasts:
        assert probe_answer.answered_at < box[0].answered_at, (
            f"the probe waited behind the attack ({probe_answer.seconds:.1f} s; the attack took {box[0].seconds:.1f} s)"
        )
    return box[0], probe_answer
