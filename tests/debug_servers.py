"""A `skillc debug` server run in-process on a free loopback port, for the debugger tests."""

from __future__ import annotations

import asyncio
import socket
import threading

from skillc.server.debugger.console_page import DebugServer
from tests.waiting import PATIENCE_S


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Running:
    """``debug`` served by uvicorn on a thread of its own (call ``thread.start()``)."""

    def __init__(self, debug: DebugServer, port: int) -> None:
        self.debug = debug
        self.port = port
        self.server = debug.uvicorn_server("127.0.0.1", port)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/__wsd_mcp"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=PATIENCE_S)
