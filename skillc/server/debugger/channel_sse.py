"""The control channel between the Debugger MCP and the debug console page: Server-Sent Events.

The console page subscribes with ``GET /__debug/events`` (one SSE stream per open console;
commands go to the server's own headless console when it is connected, ``?primary=1``, else to
the newest one) and answers each command with
``POST /__debug/answer`` ``{"consoleId", "id", "ok", "result" | "error": {"code", "message"}}``.
A render command's answer is posted only after the page rendered the target and posted a DOM
snapshot carrying the command id to ``/__agent_trace``; the snapshot store may also hand such a
snapshot to :meth:`SseConsoleChannel.snapshot_posted`, which answers the command from the
snapshot's ``commandResult`` (whichever arrives first wins).

:meth:`SseConsoleChannel.command` is the ``ConsoleChannel`` the browser tools call. Commands of
one console run one at a time; the timeout (15 s, 120 s for ``submit_chat_query``, or the
caller's ``timeout_s``) counts from the call, queueing included, and ends in ``TimeoutError``
(the tools turn it into ``RENDER_TIMEOUT`` / ``CHAT_TIMEOUT`` / ``COMMAND_TIMEOUT``); when the
console's SSE stream drops, the running command and every queued one end at once with
``DEBUGGER_DISCONNECTED``. The result is the page's ``result`` object; a failure the page reports
raises :class:`DebuggerError` with its code.

Each console's outbox holds at most :data:`OUTBOX_MAX` frames (a console that stops reading, or many
idle ones, cannot grow the server's memory): when it is full the oldest frame is dropped and
counted, and the stream then sends ``event: dropped`` ``{"dropped": N}`` (N: the drops so far on
this stream) before the next frame. A dropped command frame ends in its timeout.

``take_screenshot`` is the one command the page cannot finish alone: it answers with the scene
(the target's document, device size and scroll positions) and the server captures it in its own
headless Chromium (:mod:`.screenshot`), so screenshots are exact at any device size and work with
the console in any browser.

A command that runs past its timeout is cancelled everywhere it runs: the page gets ``event:
cancel`` ``{"id"}`` and drops it (aborting its requests) so the next command runs at once, and the
hooks in :attr:`SseConsoleChannel.on_timeout` end the server's side (the chat turn, and through
its call group the API calls it started). ``submit_chat_query`` while a chat runs (this channel's,
or one :attr:`SseConsoleChannel.chat_busy` reports) is ``CHAT_BUSY`` at once, never queued.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import struct
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from skillc.server.debugger.browser import HeadlessConsole as HeadlessConsole  # where it used to live
from skillc.server.debugger.errors import ERROR_CODES, DebuggerError, ErrorCode
from skillc.server.debugger.guard import BadJson, read_json

EVENTS_PATH = "/__debug/events"
ANSWER_PATH = "/__debug/answer"
DEFAULT_TIMEOUT_S = 15.0
CHAT_TIMEOUT_S = 120.0
MAX_SCREENSHOT_B64 = 8 * 1024 * 1024
KEEPALIVE_S = 15.0
OUTBOX_MAX = 256
# Open consoles at once: each holds an outbox and a stream; a new one past this closes the oldest
# (a reloaded page's old stream may linger until the server notices it is gone).
MAX_CONSOLES = 16

# Screenshots: (the console's scene, format, quality) -> {"data": base64 image}.
Screenshotter = Callable[[dict[str, Any], str, int | None], Awaitable[dict[str, Any]]]


def _frame(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _code(value: object) -> ErrorCode:
    return cast(ErrorCode, value) if value in ERROR_CODES else "INSPECTION_FAILED"


@dataclass(eq=False)
class _Console:
    id: str
    outbox: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(OUTBOX_MAX))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    connected_at_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    primary: bool = False  # the server's own headless console
    dropped: int = 0  # frames dropped from a full outbox
    reported: int = 0  # drops the stream has told the page about

    def push(self, frame: str | None) -> None:
        """Queue ``frame``, dropping (and counting) the oldest one when the outbox is full."""
        while self.outbox.full():
            self.outbox.get_nowait()
            self.dropped += 1
        self.outbox.put_nowait(frame)


class SseConsoleChannel:
    """The ``ConsoleChannel`` over SSE. Mount :meth:`routes` in the debug server's app."""

    def __init__(self, screenshotter: Screenshotter | None = None) -> None:
        self.screenshotter = screenshotter
        self._consoles: dict[str, _Console] = {}
        self._order: list[str] = []  # connection order; the last one is current
        self._ids = itertools.count(1)
        self.on_change: Callable[[], None] | None = None  # connect / disconnect hook (descriptor state)
        self.on_timeout: list[Callable[[str], None]] = []  # a command timed out: end its server side too
        self.chat_busy: Callable[[], bool] | None = None  # a chat turn runs outside this channel
        self._chats = 0  # submit_chat_query commands queued or running

    # -- state --------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return bool(self._order)

    def _current(self) -> _Console | None:
        for cid in reversed(self._order):
            if self._consoles[cid].primary:
                return self._consoles[cid]
        return self._consoles[self._order[-1]] if self._order else None

    # -- the ConsoleChannel --------------------------------------------------------------------

    async def command(self, name: str, params: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        console = self._current()
        if console is None:
            raise DebuggerError(
                "DEBUGGER_NOT_CONNECTED", f"no debug console is connected, so {name} cannot run (open the console page)"
            )
        if timeout_s is None:
            timeout_s = CHAT_TIMEOUT_S if name == "submit_chat_query" else DEFAULT_TIMEOUT_S
        chat = name == "submit_chat_query"
        if chat and (self._chats or (self.chat_busy is not None and self.chat_busy())):
            raise DebuggerError("CHAT_BUSY", "a chat turn is still running; wait for it to end, then submit again")
        self._chats += chat
        try:
            deadline = asyncio.get_running_loop().time() + timeout_s
            await self._race(console, console.lock.acquire(), deadline)
            try:
                if name == "take_screenshot":
                    return await self._screenshot(console, params, deadline)
                return await self._send(console, name, params, deadline)
            finally:
                console.lock.release()
        except TimeoutError:
            for hook in list(self.on_timeout):
                hook(name)
            raise
        finally:
            self._chats -= chat

    async def _send(self, console: _Console, name: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        command_id = f"cmd-{next(self._ids)}-{uuid.uuid4().hex[:8]}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        console.pending[command_id] = future
        try:
            console.push(_frame("command", {"id": command_id, "name": name, "params": params}))
            answer: dict[str, Any] = await self._race(console, future, deadline)
        except TimeoutError:
            console.push(_frame("cancel", {"id": command_id}))  # the page drops it and runs the next one
            raise
        finally:
            console.pending.pop(command_id, None)
        if "error" in answer:
            err = answer["error"] if isinstance(answer["error"], dict) else {}
            raise DebuggerError(_code(err.get("code")), str(err.get("message") or f"{name} failed in the console"))
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    async def _race(self, console: _Console, awaitable: Awaitable[Any], deadline: float) -> Any:
        """``awaitable``'s result; ``DEBUGGER_DISCONNECTED`` once the console goes; ``TimeoutError`` at the deadline."""
        task = asyncio.ensure_future(awaitable)
        gone = asyncio.ensure_future(console.gone.wait())
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        try:
            done, _ = await asyncio.wait({task, gone}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if task in done:
            return task.result()
        task.cancel()
        if gone in done or console.gone.is_set():
            raise DebuggerError("DEBUGGER_DISCONNECTED", "the debug console disconnected before the command finished")
        raise TimeoutError

    async def _screenshot(self, console: _Console, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        fmt = str(params.get("format") or "png")
        quality = params.get("quality")
        answer = await self._send(console, "take_screenshot", {"uid": params.get("uid")}, deadline)
        if self.screenshotter is None:
            raise DebuggerError("SCREENSHOT_FAILED", "this debug server takes no screenshots (no browser of its own)")
        scene = answer.get("scene")
        if not isinstance(scene, dict):
            raise DebuggerError("SCREENSHOT_FAILED", "the console answered no scene to capture")
        try:
            shot = await self._race(
                console, self.screenshotter(scene, fmt, int(quality) if quality is not None else None), deadline
            )
        except (DebuggerError, TimeoutError):
            raise
        except Exception as err:  # the browser's own failure, reported with the protocol's code
            raise DebuggerError("SCREENSHOT_FAILED", f"the browser could not capture: {err}") from err
        data = str(shot.get("data") or "")
        if len(data) > MAX_SCREENSHOT_B64:
            raise DebuggerError(
                "SCREENSHOT_FAILED", "the image is over 8 MiB of base64; capture one element or a smaller viewport"
            )
        size = image_size(base64.b64decode(data), fmt)
        if size is None:
            raise DebuggerError("SCREENSHOT_FAILED", f"the browser returned no readable {fmt} image")
        result: dict[str, Any] = {
            "data": data,
            "format": fmt,
            "mimeType": f"image/{fmt}",
            "width": size[0],
            "height": size[1],
        }
        if params.get("uid"):
            result["uid"] = params["uid"]
        return result

    # -- the page's side -----------------------------------------------------------------------

    def answer(self, console_id: str | None, command_id: str, body: dict[str, Any]) -> bool:
        consoles = [self._consoles[console_id]] if console_id in self._consoles else list(self._consoles.values())
        for console in consoles:
            future = console.pending.get(command_id)
            if future is not None and not future.done():
                if body.get("ok") is False or "error" in body:
                    err = body.get("error") if isinstance(body.get("error"), dict) else {}
                    future.set_result({"error": err})
                else:
                    future.set_result({"result": body.get("result")})
                return True
        return False

    def snapshot_posted(self, snapshot: dict[str, Any]) -> bool:
        """A DOM snapshot arrived at /__agent_trace: if it carries a running command's id and its
        ``commandResult``, that answers the command."""
        command_id = snapshot.get("commandId")
        if not isinstance(command_id, str) or "commandResult" not in snapshot:
            return False
        return self.answer(snapshot.get("consoleId"), command_id, {"ok": True, "result": snapshot["commandResult"]})

    def _connect(self, primary: bool = False) -> _Console:
        while len(self._order) >= MAX_CONSOLES:
            oldest = self._consoles[self._order[0]]
            self._disconnect(oldest)
            oldest.push(None)  # its stream ends at once, not at the next keepalive
        console = _Console(id=uuid.uuid4().hex[:12], primary=primary)
        self._consoles[console.id] = console
        self._order.append(console.id)
        if self.on_change:
            self.on_change()
        return console

    def _disconnect(self, console: _Console) -> None:
        console.gone.set()
        for future in console.pending.values():
            if not future.done():
                future.set_result(
                    {"error": {"code": "DEBUGGER_DISCONNECTED", "message": "the debug console disconnected"}}
                )
        self._consoles.pop(console.id, None)
        with contextlib.suppress(ValueError):
            self._order.remove(console.id)
        if self.on_change:
            self.on_change()

    def broadcast(self, event: str, data: Any) -> None:
        """Send an event (not a command: nothing answers it) to every open console."""
        frame = _frame(event, data)
        for console in self._consoles.values():
            console.push(frame)

    def close(self) -> None:
        for console in list(self._consoles.values()):
            console.push(None)
            self._disconnect(console)

    async def _stream(self, request: Request, console: _Console) -> AsyncIterator[str]:
        try:
            yield f"event: hello\ndata: {json.dumps({'consoleId': console.id})}\n\n"
            while not console.gone.is_set():
                try:
                    item = await asyncio.wait_for(console.outbox.get(), KEEPALIVE_S)
                except TimeoutError:
                    if await request.is_disconnected():
                        break
                    yield ": keepalive\n\n"
                    continue
                if item is None:
                    break
                if console.dropped != console.reported:
                    console.reported = console.dropped
                    yield _frame("dropped", {"dropped": console.dropped})
                yield item
        finally:
            self._disconnect(console)

    async def events(self, request: Request) -> Response:
        console = self._connect(primary=request.query_params.get("primary") == "1")
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(self._stream(request, console), media_type="text/event-stream", headers=headers)

    async def answer_endpoint(self, request: Request) -> Response:
        try:
            body = await read_json(request)
        except BadJson as err:
            return JSONResponse({"accepted": False, "reason": str(err)}, status_code=400)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            return JSONResponse({"accepted": False, "reason": "needs an id"}, status_code=400)
        accepted = self.answer(body.get("consoleId"), body["id"], body)
        return JSONResponse({"accepted": accepted})

    def routes(self) -> list[Route]:
        return [
            Route(EVENTS_PATH, self.events, methods=["GET"]),
            Route(ANSWER_PATH, self.answer_endpoint, methods=["POST"]),
        ]


def with_query(url: str, **params: str) -> str:
    """``url`` with ``params`` added to its query (the console URL may carry its token already)."""
    from urllib.parse import urlencode

    return url + ("&" if "?" in url else "?") + urlencode(params)


def image_size(data: bytes, fmt: str) -> tuple[int, int] | None:
    """Width and height from a PNG, JPEG or WebP header; None when it cannot tell."""
    if fmt == "png" and data[:8] == b"\x89PNG\r\n\x1a\n":
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if fmt == "jpeg" and data[:2] == b"\xff\xd8":
        pos = 2
        while pos + 9 < len(data):
            if data[pos] != 0xFF:
                return None
            marker = data[pos + 1]
            (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
            if marker in (0xC0, 0xC1, 0xC2):
                h, w = struct.unpack(">HH", data[pos + 5 : pos + 9])
                return int(w), int(h)
            pos += 2 + length
        return None
    if fmt == "webp" and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        kind = data[12:16]
        if kind == b"VP8X":
            w = int.from_bytes(data[24:27], "little") + 1
            h = int.from_bytes(data[27:30], "little") + 1
            return w, h
        if kind == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if kind == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return int(w) & 0x3FFF, int(h) & 0x3FFF
    return None
