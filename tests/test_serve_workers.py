"""`skillc serve --workers N`, /healthz and /readyz, and graceful shutdown, on real `skillc serve`
processes (docs/deploy.md). The slow fixture skill answers after a setTimeout, so a call can be
running when the server is told to stop; it notes the token of the call it is napping for in its
storage, which is how a test knows the call is running (rather than hoping a sleep was enough)."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import sqlite3
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
import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.runtime.config import RuntimeConfig
from skillc.server.health import store_reason
from skillc.server.supervisor import Supervisor
from skillc.server.worker import WorkerOptions
from tests.conftest import ROOT
from tests.waiting import PATIENCE_S, bound_for, wait_until

SLOW = ROOT / "tests" / "fixtures" / "serve-workers" / "slow-skill"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
READY = re.compile(r"^worker (\d+)/(\d+) ready pid (\d+)$")
ENDPOINT = re.compile(r"^MCP endpoint: (http://127\.0\.0\.1:(\d+)/mcp)")


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    port: int
    lines: list[str] = field(default_factory=list)
    fresh: queue.Queue[str] = field(default_factory=queue.Queue)

    def ready_pids(self) -> dict[int, int]:
        """Worker index -> pid of its latest "ready" line."""
        pids: dict[int, int] = {}
        for line in self.lines:
            m = READY.match(line)
            if m:
                pids[int(m.group(1))] = int(m.group(3))
        return pids

    def wait_line(self, pattern: str, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.fresh.get(timeout=0.2)
            except queue.Empty:
                continue
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} in:\n" + "\n".join(self.lines))


@contextmanager
def serve(tmp_path: Path, *args: str, skill: Path = SLOW) -> Iterator[Served]:
    command = [sys.executable, "-m", "skillc", "serve", str(skill), "--port", "0", "--state-dir", str(tmp_path), *args]
    env = {k: v for k, v in os.environ.items() if k != "SKILLC_STATE_URL"}  # the SQLite file in tmp_path
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    lines: list[str] = []
    fresh: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            fresh.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    served = Served(proc, "", 0, lines, fresh)
    try:
        m = ENDPOINT.match(served.wait_line(r"^MCP endpoint: "))
        assert m is not None
        served.url, served.port = m.group(1), int(m.group(2))
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def nap_call(
    url: str, ms: int, token: str, client: httpx.Client | None = None, *, timeout_s: float = 60
) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "napThenAnswer", "arguments": {"ms": ms, "token": token}},
    }
    reply = (client or httpx).post(url, json=body, headers=HEADERS, timeout=timeout_s)  # type: ignore[attr-defined]
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["result"]
    return result


def base(served: Served) -> str:
    return f"http://127.0.0.1:{served.port}"


def pid_and_call(served: Served, token: str) -> int:
    """One fresh connection: the worker's pid from /healthz, then a tool call on the same connection."""
    with httpx.Client() as client:
        health = client.get(base(served) + "/healthz")
        assert health.status_code == 200
        result = nap_call(served.url, 0, token, client)
    assert result["structuredContent"] == {"token": token, "slept": 0}
    pid: int = health.json()["pid"]
    return pid


def test_workers_are_distinct_processes_and_each_serves_calls(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2") as served:
        pids = served.ready_pids()
        assert sorted(pids) == [1, 2]
        assert len(set(pids.values())) == 2 and served.proc.pid not in pids.values()
        assert served.lines[-1] == f"MCP endpoint: {served.url} (2 workers, single user did:example:user, no auth)"
        seen = {pid_and_call(served, f"t{i}") for i in range(40)}
        # SO_REUSEPORT spreads connections by a hash of the client port: 40 connections reach both.
        assert seen == set(pids.values())
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0
    assert any(line.startswith("worker 1/2 (pid ") and line.endswith("stopped with status 0") for line in served.lines)


def test_a_killed_worker_is_restarted_and_serving_goes_on(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2") as served:
        first = served.ready_pids()
        os.kill(first[1], signal.SIGKILL)
        served.wait_line(rf"^worker 1/2 \(pid {first[1]}\) exited with status -9; restarting$")
        served.wait_line(r"^worker 1/2 ready pid \d+$")
        now = served.ready_pids()
        assert now[2] == first[2] and now[1] != first[1]
        seen = {pid_and_call(served, f"after{i}") for i in range(40)}
        assert seen == {now[1], now[2]}
        assert served.proc.poll() is None
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0


def napping(state_dir: Path) -> str | None:
    """The token of the latest call that reached the slow skill (its storage, in the SQLite state)."""
    file = RuntimeConfig(state_dir=state_dir).state_file
    if not file.exists():
        return None
    db = sqlite3.connect(file, timeout=30)
    try:
        rows = db.execute("SELECT value FROM storage WHERE key = 'napping'").fetchall()
    except sqlite3.OperationalError:  # no table yet
        return None
    finally:
        db.close()
    return str(json.loads(rows[0][0])) if rows else None


def wait_napping(state_dir: Path, token: str) -> None:
    wait_until(lambda: napping(state_dir) == token, PATIENCE_S, f"the call {token!r} to reach the skill")


def _slow_call_in_background(
    url: str, state_dir: Path, results: list[dict[str, Any]], ms: int = 1200
) -> threading.Thread:
    thread = threading.Thread(target=lambda: results.append(nap_call(url, ms, "slow")), daemon=True)
    thread.start()
    wait_napping(state_dir, "slow")
    return thread


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_finishes_the_running_call_then_exits_0(tmp_path: Path, workers: str) -> None:
    with serve(tmp_path, "--workers", workers) as served:
        results: list[dict[str, Any]] = []
        thread = _slow_call_in_background(served.url, tmp_path, results)
        served.proc.send_signal(signal.SIGTERM)
        thread.join(timeout=30)
        assert served.proc.wait(timeout=30) == 0
    assert len(results) == 1
    assert results[0]["isError"] is False
    assert results[0]["structuredContent"] == {"token": "slow", "slept": 1200}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_new_connection_after_sigterm_is_refused(tmp_path: Path, workers: str) -> None:
    with serve(tmp_path, "--workers", workers) as served:
        results: list[dict[str, Any]] = []
        # Long enough that the server is still finishing it however slowly it closes its listener.
        thread = _slow_call_in_background(served.url, tmp_path, results, ms=NAP_WHILE_CLOSING_MS)
        served.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: refused(served.port), PATIENCE_S, "the listener to close")
        assert served.proc.poll() is None  # still finishing the slow call
        assert not results
        thread.join(timeout=NAP_WHILE_CLOSING_MS / 1000 + 60)
        assert served.proc.wait(timeout=60) == 0
    assert results and results[0]["structuredContent"] == {"token": "slow", "slept": NAP_WHILE_CLOSING_MS}


NAP_WHILE_CLOSING_MS = 8_000


def refused(port: int) -> bool:
    """Whether a new connection to ``port`` is refused (a server that still listens takes it)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_graceful_timeout_bounds_the_wait(tmp_path: Path) -> None:
    with serve(tmp_path, "--graceful-timeout", "0.2") as served:
        results: list[dict[str, Any]] = []
        errors: list[BaseException] = []

        def call() -> None:
            try:
                results.append(nap_call(served.url, 120_000, "cut", timeout_s=180))
            except (httpx.HTTPError, AssertionError) as err:
                errors.append(err)

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        wait_napping(tmp_path, "cut")
        started = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0
        assert time.monotonic() - started < bound_for(0.2)  # did not wait for the 120 s call
        thread.join(timeout=60)
    assert not results and len(errors) == 1


def test_healthz_and_readyz_answer_any_host_and_readyz_says_when_the_store_is_unusable(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with serve(state) as served:
        lb = {"host": "10.0.0.7:8080"}  # a load balancer probes the backend by address
        health = httpx.get(base(served) + "/healthz", headers=lb)
        assert (health.status_code, health.json()) == (200, {"status": "ok", "pid": served.proc.pid})
        assert health.headers["cache-control"] == "no-store"
        ready = httpx.get(base(served) + "/readyz", headers=lb)
        assert (ready.status_code, ready.json()) == (200, {"status": "ok", "pid": served.proc.pid})
        # The same Host on the MCP endpoint is still refused by the DNS-rebinding guard.
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        assert httpx.post(served.url, json=body, headers={**HEADERS, **lb}).status_code == 421
        shutil.move(state, tmp_path / "moved")
        state.write_text("not a folder")
        unusable = httpx.get(base(served) + "/readyz")
        assert unusable.status_code == 503
        assert unusable.json() == {
            "status": "unavailable",
            "pid": served.proc.pid,
            "reason": f"cannot open the state store {RuntimeConfig(state_dir=state).state_file}: File exists",
        }
        state.unlink()
        shutil.move(tmp_path / "moved", state)
        assert httpx.get(base(served) + "/readyz").status_code == 200
        assert httpx.get(base(served) + "/healthz").status_code == 200


def test_store_reason_names_an_unreachable_postgresql_url(tmp_path: Path) -> None:
    config = RuntimeConfig(state_dir=tmp_path, state_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")
    reason = store_reason(config)
    assert reason is not None
    assert reason.startswith(
        "cannot connect to the state store postgresql://nobody@127.0.0.1:1/none?connect_timeout=1: connection failed: "
    )


def test_workers_with_stdio_is_a_usage_error() -> None:
    done = CliRunner().invoke(main, ["serve", "--stdio", "--workers", "2", str(SLOW)])
    assert done.exit_code == 2
    assert done.stderr == (
        "skillc: error: --workers is an HTTP option and cannot be given with --stdio (which serves over stdin/stdout)\n"
    )
    done = CliRunner().invoke(main, ["serve", "--stdio", "--graceful-timeout", "5", str(SLOW)])
    assert done.exit_code == 2
    assert done.stderr == (
        "skillc: error: --graceful-timeout is an HTTP option and cannot be given with --stdio "
        "(which serves over stdin/stdout)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "Invalid value for '--workers': 0 is not in the range 1<=x<=256."),
        (["--graceful-timeout", "-1"], "Invalid value for '--graceful-timeout': -1.0 is not in the range 0<=x<=3600."),
    ],
)
def test_bad_worker_options_are_usage_errors(args: list[str], message: str) -> None:
    done = CliRunner().invoke(main, ["serve", *args, str(SLOW)])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines()[-1] == f"Error: {message}"


def test_the_supervisor_gives_up_when_a_worker_cannot_start(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # A plain listener (no SO_REUSEPORT) holds the port: every worker's bind fails.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = WorkerOptions(paths=(SLOW,), host="127.0.0.1", port=port, runtime=RuntimeConfig(state_dir=tmp_path))
        said: list[str] = []
        announced: list[bool] = []
        code = Supervisor(options, 2, said.append).run(lambda: announced.append(True))
    assert code == 1 and not announced
    assert len(said) == 1  # the first failure stops the other worker
    assert re.fullmatch(r"skillc: error: worker [12]/2 \(pid \d+\) exited with status 1 before it was ready", said[0])
    err = capfd.readouterr().err
    assert f"skillc: error: a worker cannot listen on 127.0.0.1:{port}: Address already in use\n" in err
    assert "Traceback" not in err  # said as a problem to fix, not a crash
