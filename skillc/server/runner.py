"""Run the server with uvicorn: in the foreground (``skillc serve``) or on a thread (tests, benchmarks).

Binding port 0 picks a free port; :attr:`ServeHandle.url` tells which one. ``skillc serve
--stdio`` serves the same :class:`SkillServer` over stdin/stdout instead (skillc.server.stdio).

Without auth the server has one user, so it listens on loopback only: a server reachable from the
network would let anyone act as that user. :func:`check_bind` refuses any other address unless the
options say ``insecure_no_auth`` (``skillc serve --insecure-no-auth``); ``skillc serve``, its
workers and :meth:`ServeHandle.start` check.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from skillc.diagnostics import Diagnostic
from skillc.ir.viewport import Viewport
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import close_pools
from skillc.server import log_setup
from skillc.server.auth.config import AuthConfig
from skillc.server.catalog import LoadedSkill, build_catalogue, load_paths
from skillc.server.consent import ConsentPolicy
from skillc.server.drain import CloseWhileDraining, Drain, refuse_handshakes, waiting_to_be_accepted
from skillc.server.events import EventLimits
from skillc.server.health import HealthEndpoints
from skillc.server.http_app import MCP_PATH, build_app, security_settings
from skillc.server.skill_server import SkillServer
from skillc.threadnames import named

# After --graceful-timeout, the moment the lifespan's cleanup gets before the process exits anyway.
HARD_STOP_MARGIN_S = 1.0
YOUNG_GC_THRESHOLD = 10_000  # see freeze_heap
# At the end of a drain: how long the server waits for the connections the kernel had already
# completed to be accepted and to send their request (normally a turn of the event loop; a client
# that connected and says nothing is closed after it).
ACCEPT_QUEUED_S = 5.0


@dataclass(frozen=True)
class ServeOptions:
    paths: tuple[Path, ...]
    host: str = "127.0.0.1"
    port: int = 8765
    runtime: RuntimeConfig | None = None
    consent: ConsentPolicy | None = None
    viewport: Viewport | None = None
    dns_rebinding_protection: bool = True
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    # Advertise each tool's outputSchema and turn a result that breaks it into an isError result.
    strict_output: bool = False
    # A card whose Render IR is larger than this (JSON bytes) goes by artefact reference.
    inline_document_bytes: int = 256 * 1024
    # Serve the ui_control__* tools (agents operating cards); False lists them as disabled_by_policy.
    ui_control: bool = True
    events: EventLimits | None = None  # bounds of the events://session buffers
    # After SIGTERM / Ctrl-C: how long running calls may take to finish before they are cancelled.
    graceful_timeout_s: float | None = None
    # After SIGTERM, before the listener closes: /readyz 503, every response Connection: close.
    drain_s: float = 0.0
    # Bearer tokens for every MCP request, each request run as its caller (skillc.server.auth).
    auth: AuthConfig | None = None
    # Without auth, listen on a non-loopback address anyway: every caller is the one configured user.
    insecure_no_auth: bool = False


@dataclass
class Prepared:
    server: SkillServer
    security: TransportSecuritySettings
    diagnostics: list[Diagnostic]
    config: RuntimeConfig | None = None  # names the state store /readyz probes
    graceful_timeout_s: float | None = None
    auth: AuthConfig | None = None
    drain_s: float = 0.0
    drain: Drain = field(default_factory=Drain)  # /readyz and the responses read it


class UnsafeBind(ValueError):
    """A non-loopback address without auth, and no ``insecure_no_auth``."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (a name other than ``localhost`` may resolve anywhere)."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, auth: AuthConfig | None, insecure_no_auth: bool) -> None:
    if auth is None and not insecure_no_auth and not is_loopback(host):
        raise UnsafeBind(
            f"refusing to listen on {host} without auth: every caller would act as the one configured user. "
            "Configure --auth-issuer with --auth-jwks or --auth-introspect, listen on 127.0.0.1, "
            "or pass --insecure-no-auth to serve the network as a single user anyway (docs/serve.md, Authentication)"
        )


def banner(endpoint: str, options: ServeOptions, workers: int = 1) -> str:
    """The line that says where the server listens, and who its callers are."""
    notes = [f"{workers} workers"] if workers > 1 else []
    if options.auth is not None:
        notes.append(f"OAuth bearer tokens from {options.auth.issuer}")
    else:
        user = (options.runtime or RuntimeConfig()).identity.user_did
        notes.append(f"single user {user}, no auth")
    return f"MCP endpoint: {endpoint} ({', '.join(notes)})"


def prepare(options: ServeOptions, progress: Callable[[LoadedSkill], object] | None = None) -> Prepared:
    """Load the skills and build the server (nothing listens yet).

    ``progress`` hears of each skill about to be served before the slow part (each skill's
    QuickJS runtime boots and loads its index.js), so a command line can say what it waits for.
    """
    skills, diagnostics = load_paths(list(options.paths))
    config = options.runtime or RuntimeConfig()
    catalogue = build_catalogue(skills, config)
    server = SkillServer(
        catalogue,
        config,
        consent=options.consent,
        viewport=options.viewport,
        strict_output=options.strict_output,
        inline_document_bytes=options.inline_document_bytes,
        ui_control=options.ui_control,
        events=options.events,
        progress=progress,
    )
    hosts = options.allowed_hosts
    if options.auth is not None:
        # The public URL's Host is the one its clients send: accepted without naming it twice.
        public = urlsplit(options.auth.resource_url).netloc
        hosts = (*hosts, public) if public and public not in hosts else hosts
    security = security_settings(options.dns_rebinding_protection, hosts, options.allowed_origins)
    return Prepared(
        server,
        security,
        diagnostics + catalogue.diagnostics,
        config,
        options.graceful_timeout_s,
        options.auth,
        options.drain_s,
    )


def uvicorn_config(prepared: Prepared, host: str, port: int) -> uvicorn.Config:
    health = HealthEndpoints(prepared.config or RuntimeConfig(), drain=prepared.drain)
    return uvicorn.Config(
        CloseWhileDraining(build_app(prepared.server, prepared.security, health, prepared.auth), prepared.drain),
        host=host,
        port=port,
        log_level="warning",
        log_config=log_setup.uvicorn_log_config(),  # None under --log-format json: records reach our handler
        lifespan="on",
        access_log=False,
        # uvicorn says int, but hands it to asyncio.timeout, which takes any seconds.
        timeout_graceful_shutdown=prepared.graceful_timeout_s,  # type: ignore[arg-type]
    )


class ListeningServer(uvicorn.Server):
    """uvicorn's server, telling ``on_listening`` once it listens (lifespan done, sockets bound),
    and draining for ``drain_s`` after SIGTERM before uvicorn's own shutdown (skillc.server.drain)."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_listening: Callable[[str, int], object] | None,
        *,
        hard_stop: bool = False,
        freeze_heap: bool = False,
        drain: Drain | None = None,
        drain_s: float = 0.0,
    ) -> None:
        super().__init__(config)
        self._on_listening = on_listening
        self._hard_stop = hard_stop
        self._freeze_heap = freeze_heap
        self.drain = drain or Drain()
        self.drain_s = drain_s
        self._drain_over = False  # a second SIGTERM: end the drain at the next tick
        self.interrupted = False  # stopped by SIGINT (Ctrl-C), not SIGTERM

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # SIGTERM starts the drain, and a second one ends it now; Ctrl-C (someone at a terminal)
        # or no drain period goes on to uvicorn's shutdown at once.
        if sig == signal.SIGTERM and self.drain_s > 0 and not self.should_exit:
            self._captured_signals.append(sig)
            if self.drain.draining:
                self._drain_over = True
            self.drain.start()
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        since = self.drain.since
        over = since is not None and (self._drain_over or time.monotonic() - since >= self.drain_s)
        if over and not self.should_exit:
            await self._stop_accepting()
            self.should_exit = True
        return await super().on_tick(counter)

    async def _stop_accepting(self) -> None:
        """Drop new handshakes, let the event loop accept those the kernel already completed, and
        wait for each accepted connection to read its request: uvicorn's shutdown closes every
        connection without one, which would lose a request a proxy already wrote (and cannot
        retry when it is a POST)."""
        deadline = time.monotonic() + ACCEPT_QUEUED_S
        listeners = [s for srv in self.servers for s in srv.sockets]
        if all(refuse_handshakes(s) for s in listeners):
            while any(waiting_to_be_accepted(s) for s in listeners) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        quiet = 0  # checks in a row with no connection before its first request (an accept's
        # connection_made runs a loop turn after the accept)
        while quiet < 2 and time.monotonic() < deadline:
            fresh = any(getattr(c, "cycle", False) is None for c in self.server_state.connections)
            quiet = 0 if fresh else quiet + 1
            await asyncio.sleep(0.01)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self._freeze_heap and self.started:
            freeze_heap()
        if self.started and not self.should_exit and self._on_listening is not None:
            self._on_listening(self.config.host, bound_port(self))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        timeout = self.config.timeout_graceful_shutdown
        if self._hard_stop and timeout is not None:
            # uvicorn cancels the request past the timeout, but the API call it waited for runs
            # on a runtime thread that closing the runtime waits for; past the timeout (and a
            # moment for the cleanup), the process ends without it.
            timer = threading.Timer(timeout + HARD_STOP_MARGIN_S, _hard_exit, (timeout,))
            timer.daemon = True  # a clean exit does not wait for it
            timer.start()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # uvicorn raises the signal again once it has shut down, so the process would die of the
        # SIGTERM it just handled; a graceful shutdown is a clean exit (status 0) here.
        # Ctrl-C is the user's interrupt, though: the command exits 130 for it (skillc.cli).
        with super().capture_signals():
            yield
            self.interrupted = signal.SIGINT in self._captured_signals
            self._captured_signals.clear()


def freeze_heap() -> None:
    """Tune the cyclic collector for serving, once the server listens.

    Everything built to serve (the skills, their compiled components, the SDK's models: ~140 000
    objects) lives as long as the process, yet every full collection walked all of it again, ~60 ms
    once every hundred calls or so: it is frozen out of the collector's reach (garbage first).
    A call leaves a few hundred container objects behind for a while (the live cards), so the
    default young-generation threshold (700) ran a collection on nearly every call; at 10 000 it
    runs every few dozen calls, and most of what it would have walked is freed by then.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GC_THRESHOLD, older, oldest)


def _hard_exit(timeout: float) -> None:
    sys.stderr.write(f"skillc: calls still running {timeout:g} s after the stop signal (--graceful-timeout): exiting\n")
    sys.stderr.flush()
    os._exit(0)


def bound_port(server: uvicorn.Server) -> int:
    """The port a started uvicorn server listens on (what ``--port 0`` picked)."""
    sockets = [s for srv in server.servers for s in srv.sockets]
    return int(sockets[0].getsockname()[1]) if sockets else int(server.config.port)


def endpoint_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def serve_foreground(
    prepared: Prepared,
    host: str,
    port: int,
    on_listening: Callable[[str, int], object],
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve until Ctrl-C / SIGTERM, then finish running calls and return; ``on_listening(host,
    port)`` runs once the socket listens.

    A port uvicorn cannot bind ends the process with uvicorn's error (exit 1) before
    ``on_listening``; ``skillc serve`` probes the port first to say so as a usage error.
    ``sockets``: listen on these instead (a ``serve --workers`` worker's SO_REUSEPORT socket).
    """
    config = uvicorn_config(prepared, host, port)
    server = ListeningServer(
        config, on_listening, hard_stop=True, freeze_heap=True, drain=prepared.drain, drain_s=prepared.drain_s
    )
    server.run(sockets=sockets)
    close_pools()  # give PostgreSQL connections back now rather than when the server notices they are gone
    if server.interrupted:
        raise KeyboardInterrupt


class ServeHandle:
    """A server on a background thread. ``with ServeHandle.start(options) as h: h.url``."""

    def __init__(self, prepared: Prepared, host: str, port: int) -> None:
        self.prepared = prepared
        config = uvicorn_config(prepared, host, port)
        self._server = ListeningServer(config, None, drain=prepared.drain, drain_s=prepared.drain_s)
        self._thread = threading.Thread(target=named(self._run), name="skillc-serve", daemon=True)
        self.host = host
        self.port = port

    @classmethod
    def start(cls, options: ServeOptions, *, timeout_s: float = 30.0) -> ServeHandle:
        check_bind(options.host, options.auth, options.insecure_no_auth)
        handle = cls(prepare(options), options.host, options.port)
        handle._thread.start()
        deadline = time.monotonic() + timeout_s
        while not handle._server.started:
            if not handle._thread.is_alive() or time.monotonic() > deadline:
                handle.stop()
                raise RuntimeError(f"the server did not start on {options.host}:{options.port}")
            time.sleep(0.01)
        handle.port = bound_port(handle._server)
        return handle

    def _run(self) -> None:
        asyncio.run(self._server.serve())

    @property
    def url(self) -> str:
        return endpoint_url(self.host, self.port)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> ServeHandle:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
