"""``/healthz`` (liveness) and ``/readyz`` (the state store answers) for load balancers.

Both sit outside the MCP layer and outside the DNS-rebinding guard: a load balancer or an
orchestrator probes a backend by its address (Host is whatever it connects to), sends no Origin,
and must not need an MCP handshake. They say nothing about skills, users or data, so serving them
to any Host leaks nothing (docs/deploy.md, "Health endpoints").
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import StateError, connect_state, open_state, state_url_of
from skillc.server.drain import Drain

HEALTHZ_PATH, READYZ_PATH = "/healthz", "/readyz"
# A store that takes longer than this to answer SELECT 1 is not ready, whatever it says later.
READY_TIMEOUT_S = 5.0
DRAINING_REASON = "draining: the server is stopping (SIGTERM); send new requests elsewhere"
_NO_CACHE = {"cache-control": "no-store"}


class Health(BaseModel):
    """The body of both endpoints; ``pid`` names the worker that answered (``serve --workers``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["ok", "unavailable"]
    pid: int
    reason: str | None = None


def store_reason(config: RuntimeConfig) -> str | None:
    """Why the configured state store cannot serve (None: it answers ``SELECT 1``).

    SQLite: a fresh connection, not migrated, so a probe changes no schema. PostgreSQL: the
    process's pool (what the server's calls use), so a probe opens no connection of its own."""
    try:
        url = state_url_of(config)
        store = connect_state(url) if url.kind == "sqlite" else open_state(url)
    except (StateError, ValueError, OSError) as err:
        return str(err)
    try:
        store.ping()
    except StateError as err:
        return str(err)
    finally:
        if url.kind == "sqlite":
            store.close()
    return None


class HealthEndpoints:
    """The two handlers, bound to the runtime configuration that names the store."""

    def __init__(self, config: RuntimeConfig, drain: Drain | None = None) -> None:
        self.config = config
        self.drain = drain or Drain()

    def ping(self) -> str | None:
        """Why the store cannot serve, or None (the metrics' store latency times this)."""
        return store_reason(self.config)

    async def healthz(self, _request: Request) -> Response:
        return _answer(Health(status="ok", pid=os.getpid()), 200)

    async def readyz(self, _request: Request) -> Response:
        if self.drain.draining:  # at once, whatever the store says: the load balancer must look elsewhere
            return _answer(Health(status="unavailable", pid=os.getpid(), reason=DRAINING_REASON), 503)
        try:
            reason = await asyncio.wait_for(asyncio.to_thread(store_reason, self.config), READY_TIMEOUT_S)
        except TimeoutError:
            reason = f"the state store did not answer within {READY_TIMEOUT_S:g} s"
        if reason is None:
            return _answer(Health(status="ok", pid=os.getpid()), 200)
        return _answer(Health(status="unavailable", pid=os.getpid(), reason=reason), 503)


def _answer(health: Health, status: int) -> Response:
    return JSONResponse(health.model_dump(exclude_none=True), status_code=status, headers=_NO_CACHE)
