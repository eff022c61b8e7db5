"""``wx.request`` through httpx: only to allow-listed hosts, with a timeout and a response size cap.

Allow-list entries (from configuration):

- ``api.example.com``: https only, default port; ``*.example.com`` matches any subdomain.
- ``https://api.example.com:8443`` or ``http://127.0.0.1:8765``: exactly that scheme, host and port.

Redirects are not followed (a 3xx reaches the skill as is), so a listed host cannot bounce the
request elsewhere, nor the caller's identity headers with it. Those headers (host/identity.py)
are the host's alone: a skill's own ``X-Skillc-*`` headers are dropped before they are added.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict

METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT", "PATCH"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_HEADERS = "x-skillc-"  # the prefix of the identity headers only the host may set


class RequestArgs(BaseModel):
    """The options of wx.request that reach the host."""

    model_config = ConfigDict(extra="ignore")

    url: str
    method: str | None = None
    data: Any = None
    header: dict[str, Any] | None = None
    timeout: float | None = None  # ms
    dataType: str | None = None
    responseType: str | None = None


class RequestResult(BaseModel):
    data: Any
    statusCode: int
    header: dict[str, str]
    cookies: list[str]


class RequestRefused(Exception):
    """The request may not be sent; the message becomes the wx ``fail`` reason."""


def host_allowed(url: str, allowed: Sequence[str]) -> bool:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return False
    host = parts.hostname.lower()
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        return False
    for entry in allowed:
        entry = entry.strip().lower()
        if "://" in entry:
            e = urlsplit(entry)
            if e.scheme == scheme and e.hostname == host and (e.port or _DEFAULT_PORTS.get(e.scheme)) == port:
                return True
            continue
        name, _, entry_port = entry.partition(":")
        wanted_port = int(entry_port) if entry_port.isdigit() else 443
        if scheme != "https" or port != wanted_port:
            continue
        if name == host or (name.startswith("*.") and host.endswith(name[1:])):
            return True
    return False


def _prepare(
    args: RequestArgs, identity: Mapping[str, str] | None = None
) -> tuple[str, str, dict[str, str], bytes | None]:
    method = (args.method or "GET").upper()
    if method not in METHODS:
        raise RequestRefused(f"invalid method {args.method!r}")
    headers = {str(k): str(v) for k, v in (args.header or {}).items() if not str(k).lower().startswith(_HOST_HEADERS)}
    headers.update(identity or {})
    url = args.url
    body: bytes | None = None
    if args.data is not None:
        if method == "GET":
            query = urlencode({k: _scalar(v) for k, v in args.data.items()}) if isinstance(args.data, dict) else None
            query = query if query is not None else str(args.data)
            if query:
                url += ("&" if "?" in url else "?") + query
        elif isinstance(args.data, str):
            body = args.data.encode("utf-8")
        else:
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "application/json")
            if "x-www-form-urlencoded" in ctype and isinstance(args.data, dict):
                body = urlencode({k: _scalar(v) for k, v in args.data.items()}).encode()
            else:
                body = json.dumps(args.data, ensure_ascii=False).encode("utf-8")
            headers.setdefault("content-type", ctype)
    return method, url, headers, body


def _scalar(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


async def perform(
    args: RequestArgs,
    allowed: Sequence[str],
    *,
    timeout_s: float,
    max_bytes: int,
    identity: Mapping[str, str] | None = None,
) -> RequestResult:
    """Send one wx.request; raises :class:`RequestRefused` with the wx fail reason. ``identity``:
    the caller's identity headers, sent only because the host is on the allow list."""
    if not host_allowed(args.url, allowed):
        raise RequestRefused(f"url not in domain list: {args.url}")
    if args.responseType not in (None, "text"):
        raise RequestRefused(f"responseType {args.responseType!r} is not supported")
    method, url, headers, body = _prepare(args, identity)
    limit = min(args.timeout / 1000 if args.timeout and args.timeout > 0 else timeout_s, timeout_s)
    try:
        return await asyncio.wait_for(_send(method, url, headers, body, args, max_bytes), timeout=limit)
    except TimeoutError:
        raise RequestRefused("timeout") from None
    except httpx.HTTPError as err:
        raise RequestRefused(type(err).__name__) from None


async def _send(
    method: str, url: str, headers: dict[str, str], body: bytes | None, args: RequestArgs, max_bytes: int
) -> RequestResult:
    async with (
        httpx.AsyncClient(follow_redirects=False, trust_env=False) as client,
        client.stream(method, url, headers=headers, content=body) as resp,
    ):
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise RequestRefused(f"response larger than {max_bytes} bytes")
            chunks.append(chunk)
        text = b"".join(chunks).decode(resp.encoding or "utf-8", "replace")
    data: Any = text
    if (args.dataType or "json") == "json":
        try:
            data = json.loads(text)
        except ValueError:
            data = text
    return RequestResult(
        data=data,
        statusCode=resp.status_code,
        header=dict(resp.headers.items()),
        cookies=resp.headers.get_list("set-cookie"),
    )
