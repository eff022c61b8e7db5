"""A lean HTTP/1.1 load client for bench/scorecard.py's 20-client row.

httpx's async client costs ~2.3 ms of CPU per call on the 2-core dev machine, as much as the bare
mcp SDK server spends answering it, so with it the client, not the server, set the calls/s. This
one writes each POST by hand on a keep-alive asyncio stream and reads the answer by its
Content-Length (or chunks), so the client's share of the two cores stays small. Every answer is
still checked, by the caller's ``check``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

Check = Callable[[int, Any], str | None]  # (HTTP status, decoded body) -> failure, or None when fine


@dataclass
class LoadResult:
    latencies_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0


def encode(url: str, body: dict[str, object], headers: dict[str, str]) -> bytes:
    parts = urlsplit(url)
    payload = json.dumps(body).encode()
    lines = [
        f"POST {parts.path or '/'} HTTP/1.1",
        f"host: {parts.netloc}",
        "content-type: application/json",
        "accept: application/json, text/event-stream",
        f"content-length: {len(payload)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)}
    if "content-length" in fields:
        return status, await reader.readexactly(int(fields["content-length"]))
    if fields.get("transfer-encoding", "").lower() != "chunked":
        raise ValueError(f"no length in the answer's headers: {fields}")
    chunks = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)
    await reader.readuntil(b"\r\n")  # the empty trailer
    return status, b"".join(chunks)


async def client(url: str, requests: list[bytes], check: Check, out: LoadResult) -> None:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
    try:
        for request in requests:
            started = time.perf_counter()
            try:
                writer.write(request)
                status, body = await read_answer(reader)
                failure = check(status, json.loads(body))
            except (OSError, ValueError, asyncio.IncompleteReadError) as err:
                failure = f"{type(err).__name__}: {err}"
            out.latencies_ms.append((time.perf_counter() - started) * 1000)
            if failure is not None:
                out.failures.append(failure)
    finally:
        writer.close()


async def load(url: str, requests: list[bytes], clients: int, check: Check) -> LoadResult:
    """``requests`` (encoded by ``encode``) spread over ``clients`` keep-alive connections, all at once."""
    out = LoadResult()
    shares = [requests[i::clients] for i in range(clients)]
    started = time.perf_counter()
    await asyncio.gather(*(client(url, share, check, out) for share in shares if share))
    out.elapsed_s = time.perf_counter() - started
    return out
