"""A rolling restart behind nginx drops no call: a real nginx (Debian's ``nginx``), configured with
the snippet of docs/deploy.md, in front of two ``skillc serve --workers 2 --drain-seconds``
instances sharing a state store (a throwaway PostgreSQL in the PostgreSQL half of ``make test``,
else SQLite). While clients call through nginx without pause, each
instance in turn is stopped with SIGTERM (its /readyz goes 503 at once), exits 0 after its drain,
and is started again on its port; every call answers, and each restarted instance serves again.
Without the drain, about two runs in three lose a call or two to a 502 (a request nginx wrote on
a kept-alive connection the stopping instance closed), and /readyz never says 503.

Without nginx the test skips with a one-line reason, and under CI fails (tests/conftest.py).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.server.health import DRAINING_REASON
from tests.conftest import ROOT, require
from tests.test_fleet_reads import shared_state
from tests.test_multi_instance import COUNTER, _free_port
from tests.waiting import PATIENCE_S, wait_until

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
DRAIN_S = 6  # above the snippet's upstream keepalive_timeout (4 s), as docs/deploy.md asks
CLIENTS = 6
NGINX_BLOCK = re.compile(r"```nginx\n(.*?)```", re.S)
DOC_BACKENDS = ("server 10.0.0.7:8765", "server 10.0.0.8:8765")
DOC_LISTEN = "listen 443 ssl;"


def nginx_binary() -> str:
    path = os.environ.get("SKILLC_NGINX") or shutil.which("nginx")
    if path is None and os.access("/usr/sbin/nginx", os.X_OK):  # /usr/sbin may not be on a user's PATH
        path = "/usr/sbin/nginx"
    require(path is not None, "nginx is not installed (apt-get install nginx)")
    assert path is not None
    return path


def nginx_config(prefix: Path, listen: int, backends: tuple[int, int]) -> str:
    """docs/deploy.md's nginx snippet, on loopback ports and without TLS, in a config of its own."""
    snippet = next(b for b in NGINX_BLOCK.findall((ROOT / "docs" / "deploy.md").read_text()) if "upstream skillc" in b)
    for doc, port in zip(DOC_BACKENDS, backends, strict=True):
        assert doc in snippet, f"docs/deploy.md's nginx snippet no longer names {doc!r}"
        snippet = snippet.replace(doc, f"server 127.0.0.1:{port}")
    assert DOC_LISTEN in snippet, f"docs/deploy.md's nginx snippet no longer says {DOC_LISTEN!r}"
    snippet = snippet.replace(DOC_LISTEN, f"listen 127.0.0.1:{listen};")
    snippet = "\n".join(line for line in snippet.splitlines() if "ssl_" not in line)
    temps = "\n".join(
        f"    {kind}_temp_path {prefix}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers that can use the temp folders above
    return f"""{user}worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 512; }}
http {{
    log_format upstream '$status $upstream_addr $upstream_status';
    access_log {prefix}/access.log upstream;
{temps}
{snippet}
}}
"""


@dataclass
class Backend:
    name: str
    port: int
    args: tuple[str, ...]
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    def start(self) -> None:
        command = [sys.executable, "-m", "skillc", "serve", str(COUNTER), "--port", str(self.port), *self.args]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def readyz(self) -> int | None:
        try:
            reply = httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=10)
        except httpx.TransportError:
            return None
        if reply.status_code == 503:
            assert reply.json()["reason"] == DRAINING_REASON, reply.text
        return reply.status_code

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=60)


@dataclass
class Load:
    """Clients calling through nginx until told to stop; every answer that is not a tool result
    without isError is a failure."""

    url: str
    stop: threading.Event = field(default_factory=threading.Event)
    calls: int = 0
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, me: int) -> None:
        with httpx.Client(headers=ACCEPT, timeout=120) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                problem = self.call(client, {"name": "keepNote", "arguments": {"text": f"client {me} call {n}"}})
                with self.lock:
                    self.calls += 1
                    if problem is not None:
                        self.failures.append(problem)

    def call(self, client: httpx.Client, params: dict[str, Any]) -> str | None:
        try:
            reply = client.post(self.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        except httpx.TransportError as err:
            return f"transport: {err!r}"
        if reply.status_code != 200:
            return f"HTTP {reply.status_code}: {reply.text[:200]}"
        got = reply.json()
        if "result" not in got or got["result"].get("isError"):
            return f"answer: {str(got)[:200]}"
        return None


@pytest.fixture
def nginx_fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, Backend, Backend]]:
    binary = nginx_binary()
    args = (*shared_state(request, tmp_path).args, "--workers", "2", "--drain-seconds", str(DRAIN_S))
    a, b = Backend("A", _free_port(), args), Backend("B", _free_port(), args)
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    listen = _free_port()
    (prefix / "nginx.conf").write_text(nginx_config(prefix, listen, (a.port, b.port)))
    nginx: subprocess.Popen[bytes] | None = None
    try:
        for backend in (a, b):
            backend.start()
        for backend in (a, b):
            wait_until(lambda backend=backend: backend.readyz() == 200, PATIENCE_S * 2, f"{backend.name} to be ready")  # type: ignore[misc]
        command = [
            binary,
            "-e",
            str(prefix / "error.log"),
            "-p",
            str(prefix),
            "-c",
            str(prefix / "nginx.conf"),
            "-g",
            "daemon off;",
        ]
        nginx = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{listen}/mcp"
        wait_until(lambda: _answers(url) or nginx.poll() is not None, PATIENCE_S, "nginx to listen")
        assert nginx.poll() is None, (nginx.communicate()[1] or b"").decode(errors="replace")
        yield url, prefix, a, b
    finally:
        if nginx is not None and nginx.poll() is None:
            nginx.terminate()
            nginx.wait(timeout=60)
        for backend in (a, b):
            backend.stop()


def _answers(url: str) -> bool:
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        return httpx.post(url, json=body, headers=ACCEPT, timeout=10).status_code == 200
    except httpx.TransportError:
        return False


def served_by(prefix: Path, port: int, after: int) -> int:
    """How many requests logged after byte ``after`` of nginx's access log ``port`` answered with 200."""
    with (prefix / "access.log").open("rb") as log:
        log.seek(after)
        lines = log.read().decode(errors="replace").splitlines()
    ok = 0
    for line in lines:
        status, _, rest = line.partition(" ")
        last_upstream = rest.rsplit(" ", 1)[0].split(",")[-1].strip()
        ok += status == "200" and last_upstream == f"127.0.0.1:{port}"
    return ok


def restart(backend: Backend, prefix: Path) -> None:
    """SIGTERM (its /readyz goes 503 at once), exit 0 after the drain, start again on the same port
    and serve calls through nginx."""
    assert backend.proc is not None
    backend.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: backend.readyz() == 503, PATIENCE_S, f"{backend.name}'s /readyz to say 503 as it drains")
    assert backend.proc.wait(timeout=DRAIN_S + 60) == 0
    mark = (prefix / "access.log").stat().st_size
    backend.start()
    wait_until(
        lambda: served_by(prefix, backend.port, mark) >= 10, PATIENCE_S * 2, f"the restarted {backend.name} to serve"
    )


def test_restarting_each_of_two_instances_behind_nginx_under_load_fails_no_call(
    nginx_fleet: tuple[str, Path, Backend, Backend],
) -> None:
    url, prefix, a, b = nginx_fleet
    load = Load(url)
    clients = [threading.Thread(target=load.run, args=(i,), daemon=True) for i in range(CLIENTS)]
    for client in clients:
        client.start()
    try:
        wait_until(lambda: served_by(prefix, a.port, 0) >= 10 and served_by(prefix, b.port, 0) >= 10,
                   PATIENCE_S, "both instances to serve calls")  # fmt: skip
        for backend in (a, b):  # a rolling restart: one instance at a time
            restart(backend, prefix)
    finally:
        load.stop.set()
        for client in clients:
            client.join(timeout=180)
    errors = [line for line in (prefix / "error.log").read_text().splitlines() if "[error]" in line]
    lost = [line for line in errors if "connect() failed (111" not in line]  # a refused connect is retried
    assert load.failures == [], f"{len(load.failures)} of {load.calls} calls failed: {load.failures[:3]}; {lost[:5]}"
    assert load.calls >= 30
