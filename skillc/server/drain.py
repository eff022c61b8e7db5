"""The drain before a stop (``skillc serve --drain-seconds``): after SIGTERM the server says it is
not ready (``/readyz`` 503), goes on serving every connection for the drain period, and asks each
client to close its connection after the response (``Connection: close``); then it stops
accepting and the running calls finish (docs/deploy.md, "Graceful shutdown").

Why: a load balancer sends a backend traffic until it notices the backend going; a proxy with
connections kept open to the backend (nginx ``keepalive``) may write a request on one the
backend is closing at that moment, and a POST it already sent it cannot retry elsewhere. During
the drain every such connection is closed by the proxy after an answer it got, or idles out on
the proxy's side (its upstream keep-alive timeout, shorter than the drain), so at the end no proxy
holds a connection to this server, and a new connection is refused, which a proxy does retry.

At the end of the drain, connections the kernel completed but the server did not accept yet
would be reset by closing the listener after the client wrote its request. So the listener first
drops new handshakes (a socket filter: the client's SYN goes unanswered and is retried, then
refused once the listener is closed), the server accepts what is queued, and only then closes it.
"""

from __future__ import annotations

import ctypes
import socket
import struct
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}: BPF_RET | BPF_K with k = 0, "keep no byte",
# so every packet for the listener (a new connection's SYN, a handshake's last ACK) is dropped.
_DROP_ALL = struct.pack("HBBI", 0x06, 0, 0, 0)
_SO_ATTACH_FILTER = 26  # Linux
_TCP_INFO_UNACKED = 24  # offset of tcpi_unacked: for a listener, the connections waiting in accept
_TCP_INFO_SIZE = 104


class Drain:
    """Whether the server is draining; set once, by the stop signal."""

    def __init__(self) -> None:
        self.draining = False
        self.since: float | None = None

    def start(self) -> None:
        if not self.draining:
            self.draining, self.since = True, time.monotonic()


class CloseWhileDraining:
    """Adds ``Connection: close`` to every response sent while draining: the client (a proxy's
    pooled connection included) opens a new connection for its next request, which after the
    drain goes to a server that still listens."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start" and self.drain.draining:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing)


def refuse_handshakes(sock: socket.socket) -> bool:
    """Make a listening socket drop every new connection's packets (Linux; False elsewhere, where
    closing the listener is all there is)."""
    code = ctypes.create_string_buffer(_DROP_ALL)
    program = struct.pack("HxxxxxxP", 1, ctypes.addressof(code))  # struct sock_fprog {len; filter*}
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, program)
    except OSError:
        return False
    return True


def waiting_to_be_accepted(sock: socket.socket) -> int:
    """How many connections the kernel completed that the server has not accepted (0 if unknown)."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_SIZE)
    except (OSError, AttributeError):
        return 0
    if len(info) < _TCP_INFO_UNACKED + 4:
        return 0
    return int(struct.unpack_from("I", info, _TCP_INFO_UNACKED)[0])
