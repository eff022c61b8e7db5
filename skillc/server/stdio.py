"""``skillc serve --stdio``: the same :class:`SkillServer` over stdin/stdout (the MCP stdio transport).

stdout carries JSON-RPC messages and nothing else, one per line; every human line (start-up
progress, diagnostics, the request log) goes to stderr. :func:`guard_stdio` makes sure of it at
the descriptor level for the whole process: it moves the wire to private descriptors and points
fd 1 at stderr (and fd 0 at the null device), so a stray ``print`` (ours, a library's, a native
extension's) can never tear a frame, and nothing else reads the client's messages.

The SDK's transport (``mcp.server.stdio.stdio_server``) reads stdin on an AnyIO worker thread,
which a signal cannot interrupt and which holds up the interpreter's exit; stdin is read here on a
daemon thread instead. Closing stdin ends the connection; the server is then closed (runtimes
stopped) and :func:`serve_stdio` returns None. SIGINT or SIGTERM stop it the same way and
return the signal's number.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from io import TextIOWrapper

import anyio
import anyio.abc
from mcp.server.stdio import stdio_server

from skillc.server.skill_server import SkillServer

STDIO_BANNER = "MCP endpoint: stdio (JSON-RPC on stdin/stdout; close stdin to stop)"


@dataclass(frozen=True)
class Wire:
    """The private descriptors of the client's stdin and stdout."""

    stdin: int
    stdout: int


def guard_stdio() -> Wire:
    """Move the wire to private descriptors; fd 1 then writes to stderr, fd 0 reads the null device.

    Call it first thing: from then on only :func:`serve_stdio` reads or writes the wire.
    """
    sys.stdout.flush()
    wire = Wire(stdin=os.dup(0), stdout=os.dup(1))
    for fd in (wire.stdin, wire.stdout):
        os.set_inheritable(fd, False)  # a child process (node, a browser) never gets the wire
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return wire


class _Lines:
    """The lines of a descriptor, read on a daemon thread (a blocked read never holds up exit)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def put(line: str | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the loop is gone: nobody listens any more
                raise SystemExit from None

        def pump() -> None:
            try:
                with open(self.fd, encoding="utf-8", errors="replace", closefd=False) as stream:
                    for line in stream:
                        put(line)
            except (OSError, ValueError):
                pass
            put(None)

        threading.Thread(target=pump, name="skillc-stdin", daemon=True).start()
        while (line := await queue.get()) is not None:
            yield line


async def _stop_on_signal(
    scope: anyio.CancelScope, stopped: list[int], *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()  # the handlers are in place: the banner may go out
        async for signum in signals:
            stopped.append(int(signum))
            scope.cancel()
            return


async def serve_stdio(
    server: SkillServer, wire: Wire | None = None, on_ready: Callable[[], object] | None = None
) -> int | None:
    """Serve one stdio connection until stdin closes (None) or a SIGINT/SIGTERM (its number),
    then close ``server``.

    ``wire`` is what :func:`guard_stdio` returned (None: the process's own stdin and stdout, which
    the SDK diverts while it serves). ``on_ready`` runs once the transport reads stdin.
    """
    stdin = stdout = None
    if wire is not None:
        stdin = _Lines(wire.stdin)
        raw = os.fdopen(wire.stdout, "wb", closefd=False)
        stdout = anyio.wrap_file(TextIOWrapper(raw, encoding="utf-8", newline="\n"))
    stopped: list[int] = []
    # One process, one connection: a client that never sends _meta["skillc/session"] keeps one
    # fresh session for the life of the process (a new process mints a new one).
    server.sessions.one_connection()
    try:
        async with anyio.create_task_group() as group:
            await group.start(_stop_on_signal, group.cancel_scope, stopped)
            # The SDK only iterates its stdin (``async for line in stdin``), which _Lines does.
            async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
                if on_ready is not None:
                    on_ready()
                lowlevel = server.server
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await server.close()
    return stopped[0] if stopped else None


def run_stdio(
    server: SkillServer, wire: Wire | None = None, on_ready: Callable[[], object] | None = None
) -> int | None:
    return anyio.run(serve_stdio, server, wire, on_ready)
