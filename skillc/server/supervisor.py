"""``skillc serve --workers N``: start N worker processes on one port and keep them running.

Each worker (skillc.server.worker) listens on its own SO_REUSEPORT socket bound to the same
address, so the kernel spreads connections over the workers and a worker that dies takes only
its own connections with it. The supervisor:

- starts the workers and says so on stderr (``worker 2/4 ready pid 1234``); when one cannot start
  (it exits before it listens, or is not listening after ``startup_timeout_s``), it stops the
  others and ``run`` returns 1;
- restarts a worker that dies while serving (``worker 2/4 (pid 1234) exited with status -9;
  restarting``); a worker that dies again before it is ready ends the server (status 1), since
  a crash on start would only repeat;
- on SIGTERM or SIGINT sends SIGTERM to every worker (each drains for ``--drain-seconds``, then
  finishes its running calls within the graceful timeout), waits for them, and returns 0 when
  every worker exited cleanly; a second signal while they stop is passed on as SIGTERM too, which
  ends a drain at once (never uvicorn's forced exit, which a second SIGINT would be).

It keeps the port bound (not listening) from the start to the end, so a restart always gets the
same port back and ``--port 0`` has one port for all workers.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

from skillc.server import metrics
from skillc.server.metrics import MULTIPROC_ENV
from skillc.server.request_log import WORKER_ENV
from skillc.server.worker import OPTIONS_ENV, READY_FD_ENV, READY_LINE, WorkerOptions

EXIT_OK, EXIT_FAILED = 0, 1
# Time past the graceful timeout before a worker that has not stopped is killed.
KILL_MARGIN_S = 5.0
_POLL_S = 0.05


def reserve_port(host: str, port: int) -> socket.socket:
    """Bind ``host:port`` without listening: holds the port for the workers (who bind it too, with
    SO_REUSEPORT) and receives no connections itself."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


@dataclass
class _Worker:
    index: int  # 1-based, as the progress lines count
    proc: subprocess.Popen[bytes]
    ready_fd: int
    started: float
    ready: bool = False
    restarts: int = 0
    buffer: bytes = field(default=b"")


class Supervisor:
    def __init__(
        self,
        options: WorkerOptions,
        count: int,
        echo: Callable[[str], object],
        *,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.options = options
        self.count = count
        self.echo = echo
        self.startup_timeout_s = startup_timeout_s
        self.workers: list[_Worker] = []
        self._stop_signal: int | None = None
        self._stopping = False  # the workers were told to stop: a further signal is passed on
        # The workers' metric files: a folder the operator named, else one of ours for this run.
        given = os.environ.get(MULTIPROC_ENV)
        self.metrics_dir = given or tempfile.mkdtemp(prefix="skillc-metrics-")
        self._own_metrics_dir = not given

    def _spawn(self, index: int, restarts: int = 0) -> _Worker:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        env = {
            **os.environ,
            OPTIONS_ENV: self.options.model_dump_json(),
            READY_FD_ENV: str(write_fd),
            WORKER_ENV: str(index),  # the `worker` of its log lines
            MULTIPROC_ENV: self.metrics_dir,  # where its metrics go, for any worker to sum (skillc.server.metrics)
        }
        # A session of its own: a terminal's Ctrl-C reaches the supervisor only, which forwards it
        # once (a second SIGINT would make uvicorn skip the graceful shutdown).
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillc.server.worker"], env=env, pass_fds=(write_fd,), start_new_session=True
        )
        os.close(write_fd)
        return _Worker(index, proc, read_fd, time.monotonic(), restarts=restarts)

    def _read_ready(self, worker: _Worker) -> None:
        try:
            chunk = os.read(worker.ready_fd, 64)
        except BlockingIOError:
            return
        worker.buffer += chunk
        if READY_LINE in worker.buffer and not worker.ready:
            worker.ready = True
            self.echo(f"worker {worker.index}/{self.count} ready pid {worker.proc.pid}")

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._stop_signal is None:
            self._stop_signal = signum
        elif self._stopping:
            for worker in self.workers:
                if worker.proc.poll() is None:
                    worker.proc.send_signal(signal.SIGTERM)

    def run(self, on_ready: Callable[[], object]) -> int:
        """Serve until SIGTERM / SIGINT; ``on_ready`` runs once every worker listens."""
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            return self._run(on_ready)
        finally:
            for worker in self.workers:
                os.close(worker.ready_fd)
            for s, handler in previous.items():
                signal.signal(s, handler)
            if self._own_metrics_dir:
                shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def _run(self, on_ready: Callable[[], object]) -> int:
        self.workers = [self._spawn(i + 1) for i in range(self.count)]
        announced = False
        while self._stop_signal is None:
            for worker in self.workers:
                if not worker.ready:
                    self._read_ready(worker)
                failure = self._check(worker)
                if failure is not None:
                    self.echo(f"skillc: error: {failure}")
                    self._stop()
                    return EXIT_FAILED
            if not announced and all(w.ready for w in self.workers):
                announced = True
                on_ready()
            time.sleep(_POLL_S)
        return self._stop()

    def _check(self, worker: _Worker) -> str | None:
        """Restart a worker that died while serving; the reason to give up, if it cannot start."""
        code = worker.proc.poll()
        name = f"worker {worker.index}/{self.count} (pid {worker.proc.pid})"
        if code is None:
            if not worker.ready and time.monotonic() - worker.started > self.startup_timeout_s:
                return f"{name} did not listen within {self.startup_timeout_s:g} s"
            return None
        if not worker.ready:
            self._read_ready(worker)  # it may have become ready and died since the last look
        if not worker.ready:
            return f"{name} exited with status {code} before it was ready"
        self.echo(f"{name} exited with status {code}; restarting")
        metrics.worker_exited(worker.proc.pid, self.metrics_dir)
        os.close(worker.ready_fd)
        self.workers[worker.index - 1] = self._spawn(worker.index, worker.restarts + 1)
        return None

    def _stop(self) -> int:
        """SIGTERM to every worker still running; wait (drain + graceful timeout + a margin), then SIGKILL."""
        live = [w for w in self.workers if w.proc.poll() is None]
        for worker in live:
            worker.proc.send_signal(signal.SIGTERM)
        self._stopping = True
        graceful = self.options.graceful_timeout_s
        stop_s = self.options.drain_s + (graceful if graceful is not None else 30.0)
        deadline = time.monotonic() + stop_s + KILL_MARGIN_S
        clean = True
        for worker in live:
            try:
                code = worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                code = worker.proc.wait()
            clean = clean and code == 0
            if self._stop_signal is not None:
                self.echo(f"worker {worker.index}/{self.count} (pid {worker.proc.pid}) stopped with status {code}")
        return EXIT_OK if clean else EXIT_FAILED
