"""``wx.request`` through httpx: only to allow-listed hosts, with a timeout and a response size cap.

Allow-list entries (from configuration):

- ``api.example.com``: https only, default port; ``*.example.com`` matches any subdomain.
- ``https://api.example.com:8443`` or ``http://127.0.0.1:8765``: exactly that scheme, host and port.

Redirects are not followed (a 3xx reaches the skill as is), so a listed host cannot bounce the
request elsewhere, nor the caller's identity headers with it. Those headers (host/identity.py)
are the host's alone: a skill's own ``X-Skillc-*`` headers are dropped before they are added, the
name compared as a backend would read it (case-insensitive, ``_`` as ``-``, whitespace stripped).

Nothing a skill passes or a server answers raises past :func:`perform`: a URL, header or body the
request cannot carry is a :class:`RequestRefused` naming what is wrong, and a JSON body nested
deeper than :data:`JSON_MAX_DEPTH` reaches the skill as its text, as any body that does not parse.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict

METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT", "PATCH"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_HEADERS = "x-skillc-"  # the prefix of the identity headers only the host may set
# RFC 9110 token characters: what h11 would accept as a field name anyway, checked here so the
# refusal names the header instead of surfacing as a protocol error from the wire.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
# Characters no URL may contain raw: controls, space, DEL. httpx refuses some of them with an
# exception that is not an HTTPError, and others would be sent as they are.
_BAD_URL = re.compile(r"[\x00-\x20\x7f]")
JSON_MAX_DEPTH = 512  # a response body nested deeper reaches the skill as text


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


def host_header(name: str) -> bool:
    """Whether a header name is one only the host may set, read as a backend would read it: WSGI
    and CGI servers turn ``_`` into ``-`` and ignore case, so ``X-Skillc_User-DID`` is
    ``X-Skillc-User-DID`` to them."""
    return name.strip().lower().replace("_", "-").startswith(_HOST_HEADERS)


def check_url(url: str) -> None:
    """Refuses a URL that cannot be sent as it is (:class:`RequestRefused`, ``invalid url``)."""
    bad = _BAD_URL.search(url)
    if bad is not None:
        raise RequestRefused(f"invalid url: character {bad.group()!r} at position {bad.start()}")
    try:
        urlsplit(url).port  # noqa: B018 - a bad port or IPv6 literal raises here
        httpx.URL(url)
    except (ValueError, UnicodeError, httpx.InvalidURL) as err:
        raise RequestRefused(f"invalid url: {err}") from None


def _headers(given: Mapping[Any, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in given.items():
        name, text = str(key).strip(), str(value)
        if host_header(name):
            continue
        if not _TOKEN.fullmatch(name):
            raise RequestRefused(f"invalid header name {name!r}")
        if _BAD_VALUE.search(text):
            raise RequestRefused(f"invalid header value for {name!r}: CR, LF or NUL")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise RequestRefused(f"invalid header value for {name!r}: not UTF-8 text") from None
        headers[name] = text
    return headers


def host_allowed(url: str, allowed: Sequence[str]) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
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
    headers = _headers(args.header or {})
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
                text = json.dumps(args.data, ensure_ascii=False)
                try:
                    body = text.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: JSON can still carry it, escaped
                    body = json.dumps(args.data).encode("ascii")
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
    check_url(args.url)
    if not host_allowed(args.url, allowed):
        raise RequestRefused(f"url not in domain list: {args.url}")
    if args.responseType not in (None, "text"):
        raise RequestRefused(f"responseType {args.responseType!r} is not supported")
    try:
        method, url, headers, body = _prepare(args, identity)
    except UnicodeEncodeError as err:
        raise RequestRefused(f"invalid data: {err.reason} at position {err.start}") from None
    check_url(url)  # the query built from ``data`` is part of it now
    # Bytes, because httpx would encode a value as ASCII and raise on anything else; names are
    # tokens (ASCII) by now.
    send_headers = {k.encode("ascii"): v.encode("utf-8") for k, v in headers.items()}
    limit = min(args.timeout / 1000 if args.timeout and args.timeout > 0 else timeout_s, timeout_s)
    try:
        return await asyncio.wait_for(_send(method, url, send_headers, body, args, max_bytes), timeout=limit)
    except TimeoutError:
        raise RequestRefused("timeout") from None
    except httpx.HTTPError as err:
        raise RequestRefused(type(err).__name__) from None


async def _send(
    method: str, url: str, headers: dict[bytes, bytes], body: bytes | None, args: RequestArgs, max_bytes: int
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
    data: Any = _json_or_text(text) if (args.dataType or "json") == "json" else text
    return RequestResult(
        data=data,
        statusCode=resp.status_code,
        header=dict(resp.headers.items()),
        cookies=resp.headers.get_list("set-cookie"),
    )


def _json_or_text(text: str) -> Any:
    """The parsed body, or the text when it is not JSON or nests deeper than JSON_MAX_DEPTH (which
    the reply to JS, serialised again, could not cross without exhausting the stack)."""
    if text.count("[") + text.count("{") <= JSON_MAX_DEPTH:
        try:
            return json.loads(text)
        except ValueError:
            return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return data if _depth_within(data, JSON_MAX_DEPTH) else text


def _depth_within(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True
