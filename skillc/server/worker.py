"""One ``skillc serve --workers N`` worker: a process of its own that rebuilds the server from
the options its supervisor (skillc.server.supervisor) passed as JSON, and serves on its own
SO_REUSEPORT socket.

Each worker has its own QuickJS runtimes, compiled components and in-memory caches; what workers
share is the state store (docs/deploy.md). A fresh interpreter per worker (not a fork of the
supervisor) keeps QuickJS, threads and the asyncio loop out of any inherited state.

    python -m skillc.server.worker   (with SKILLC_WORKER_OPTIONS and SKILLC_WORKER_READY_FD set)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillc.ir.viewport import Viewport
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state.store import StateError
from skillc.server.auth.config import AuthConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.events import EventLimits
from skillc.server.runner import ServeOptions, check_bind, prepare, serve_foreground

OPTIONS_ENV = "SKILLC_WORKER_OPTIONS"
READY_FD_ENV = "SKILLC_WORKER_READY_FD"
READY_LINE = b"ready\n"
_PR_SET_PDEATHSIG = 1


class WorkerOptions(BaseModel):
    """Everything a worker needs to rebuild the server the supervisor validated (JSON-safe)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paths: tuple[Path, ...]
    host: str
    port: int = Field(ge=1, le=65535)
    runtime: RuntimeConfig  # carries state_dir and state_url unchanged: every worker opens the same store
    approve_all: bool = False
    approve: tuple[str, ...] = ()
    elicit: bool = True
    viewport: Viewport = Field(default_factory=Viewport)
    dns_rebinding_protection: bool = True
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    strict_output: bool = False
    inline_document_bytes: int = 256 * 1024
    ui_control: bool = True
    events: EventLimits = Field(default_factory=EventLimits)
    graceful_timeout_s: float | None = None
    drain_s: float = Field(default=0.0, ge=0)
    log_format: Literal["text", "json"] = "text"
    # The introspection secret is not here: each worker reads it from the environment it inherits.
    auth: AuthConfig | None = None
    insecure_no_auth: bool = False


def worker_options(options: ServeOptions, log_format: Literal["text", "json"]) -> WorkerOptions:
    """The JSON-safe form of the options ``skillc serve`` built."""
    consent = options.consent or ConsentPolicy()
    return WorkerOptions(
        paths=tuple(p.resolve() for p in options.paths),
        host=options.host,
        port=options.port,
        runtime=options.runtime or RuntimeConfig(),
        approve_all=consent.approve_all,
        approve=tuple(sorted(consent.approve)),
        elicit=consent.elicit,
        viewport=options.viewport or Viewport(),
        dns_rebinding_protection=options.dns_rebinding_protection,
        allowed_hosts=options.allowed_hosts,
        allowed_origins=options.allowed_origins,
        strict_output=options.strict_output,
        inline_document_bytes=options.inline_document_bytes,
        ui_control=options.ui_control,
        events=options.events or EventLimits(),
        graceful_timeout_s=options.graceful_timeout_s,
        drain_s=options.drain_s,
        log_format=log_format,
        auth=options.auth,
        insecure_no_auth=options.insecure_no_auth,
    )


def reuseport_socket(host: str, port: int) -> socket.socket:
    """A listening socket that shares ``host:port`` with the other workers; the kernel spreads new
    connections over them by a hash of the connection, so keep-alive clients spread too.

    IPPROTO_TCP is named on purpose: asyncio sets TCP_NODELAY only on sockets whose proto says
    TCP, and without it every response waits ~40 ms for a delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def _die_with_parent() -> None:
    # A supervisor killed with SIGKILL cannot stop its workers; the kernel does it for it.
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def main() -> None:
    _die_with_parent()
    options = WorkerOptions.model_validate_json(os.environ[OPTIONS_ENV])
    ready_fd = int(os.environ[READY_FD_ENV])

    from skillc.server import log_setup

    log_setup.install(options.log_format, sys.stderr)
    serve = ServeOptions(
        paths=options.paths,
        host=options.host,
        port=options.port,
        runtime=options.runtime,
        consent=ConsentPolicy(
            approve_all=options.approve_all,
            approve=frozenset(options.approve),
            elicit=options.elicit,
        ),
        viewport=options.viewport,
        dns_rebinding_protection=options.dns_rebinding_protection,
        allowed_hosts=options.allowed_hosts,
        allowed_origins=options.allowed_origins,
        strict_output=options.strict_output,
        inline_document_bytes=options.inline_document_bytes,
        ui_control=options.ui_control,
        events=options.events,
        graceful_timeout_s=options.graceful_timeout_s,
        drain_s=options.drain_s,
        auth=options.auth,
        insecure_no_auth=options.insecure_no_auth,
    )
    check_bind(serve.host, serve.auth, serve.insecure_no_auth)  # the supervisor checked; so does each worker
    try:
        prepared = prepare(serve)
    except StateError as err:  # one line the supervisor's log can show, not a traceback
        sys.stderr.write(f"skillc: error: {err}\n")
        sys.exit(1)
    try:
        sock = reuseport_socket(options.host, options.port)
    except OSError as err:
        sys.stderr.write(f"skillc: error: a worker cannot listen on {options.host}:{options.port}: {err.strerror}\n")
        sys.exit(1)

    def listening(_host: str, _port: int) -> None:
        os.write(ready_fd, READY_LINE)
        os.close(ready_fd)

    serve_foreground(prepared, options.host, options.port, listening, sockets=[sock])


if __name__ == "__main__":
    main()
