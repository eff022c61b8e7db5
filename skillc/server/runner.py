"""Run the server with uvicorn: in the foreground (``skillc serve``) or on a thread (tests, benchmarks).

Binding port 0 picks a free port; :attr:`ServeHandle.url` tells which one.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from skillc.diagnostics import Diagnostic
from skillc.ir.viewport import Viewport
from skillc.runtime.config import RuntimeConfig
from skillc.server.catalog import build_catalogue, load_paths
from skillc.server.consent import ConsentPolicy
from skillc.server.http_app import MCP_PATH, build_app, security_settings
from skillc.server.skill_server import SkillServer


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


@dataclass
class Prepared:
    server: SkillServer
    security: TransportSecuritySettings
    diagnostics: list[Diagnostic]


def prepare(options: ServeOptions) -> Prepared:
    """Load the skills and build the server (nothing listens yet)."""
    skills, diagnostics = load_paths(list(options.paths))
    config = options.runtime or RuntimeConfig()
    catalogue = build_catalogue(skills, config)
    server = SkillServer(catalogue, config, consent=options.consent, viewport=options.viewport)
    security = security_settings(options.dns_rebinding_protection, options.allowed_hosts, options.allowed_origins)
    return Prepared(server, security, diagnostics + catalogue.diagnostics)


def uvicorn_config(prepared: Prepared, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        build_app(prepared.server, prepared.security),
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        access_log=False,
    )


class ServeHandle:
    """A server on a background thread. ``with ServeHandle.start(options) as h: h.url``."""

    def __init__(self, prepared: Prepared, host: str, port: int) -> None:
        self.prepared = prepared
        self._server = uvicorn.Server(uvicorn_config(prepared, host, port))
        self._thread = threading.Thread(target=self._run, name="skillc-serve", daemon=True)
        self.host = host
        self.port = port

    @classmethod
    def start(cls, options: ServeOptions, *, timeout_s: float = 30.0) -> ServeHandle:
        handle = cls(prepare(options), options.host, options.port)
        handle._thread.start()
        deadline = time.monotonic() + timeout_s
        while not handle._server.started:
            if not handle._thread.is_alive() or time.monotonic() > deadline:
                handle.stop()
                raise RuntimeError(f"the server did not start on {options.host}:{options.port}")
            time.sleep(0.01)
        sockets = [s for srv in handle._server.servers for s in srv.sockets]
        handle.port = int(sockets[0].getsockname()[1])
        return handle

    def _run(self) -> None:
        asyncio.run(self._server.serve())

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> ServeHandle:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
