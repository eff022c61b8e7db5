"""The MCP Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): ``skills/list`` and
``skills/get`` over the served skills, whose files are read with ``resources/read``, and
``resources/directory/read`` (``directoryRead``) over each skill's folders.

The methods are request handlers on the SDK's low-level server (``Server.add_request_handler``:
the supported way to serve a method the core protocol does not define) and the extension is
declared in ``Server.extensions``, which the SDK advertises under ``capabilities.extensions`` of
``server/discover`` (2026-07-28). A 2025-era ``initialize`` result has no such field in the SDK's
schema, but hosts of that era read it there too (the MCP Inspector does), so a server middleware
(the SDK's way to wrap the handshake) adds the declared extensions to it. Every caller is served
the same skills, so results are ``public`` to caches.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, unquote

from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams, RequestParams

from skillc.server.skill_files import SkillEntry, SkillFile, same_uri

EXTENSION_ID = "io.modelcontextprotocol/skills"
LIST_METHOD = "skills/list"
GET_METHOD = "skills/get"
DIRECTORY_METHOD = "resources/directory/read"
DIRECTORY_MIME = "inode/directory"
PAGE_SIZE = 50
# The files are a snapshot taken at start-up: a listing stays true until the server restarts.
TTL_MS = 5 * 60 * 1000
_CURSOR_PREFIX = "skills:"

Handler = Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]


class GetSkillParams(RequestParams):
    uri: str


class DirectoryReadParams(PaginatedRequestParams):
    uri: str


class SkillsExtension:
    """``entries``: every served skill, listed or not (``SkillEntry.refusal``)."""

    def __init__(self, entries: list[SkillEntry], *, page_size: int = PAGE_SIZE) -> None:
        self.entries = entries
        self.page_size = page_size

    @property
    def listed(self) -> list[SkillEntry]:
        return [e for e in self.entries if e.refusal is None]

    def file(self, uri: str) -> SkillFile | None:
        """The served file at ``uri`` (any skill's, listed or not)."""
        return next((f for e in self.entries for f in e.files if same_uri(f.uri, uri)), None)

    def install(self, server: Server[Any], wrap: Callable[[str, Handler], Handler]) -> None:
        """Declare the extension on ``server`` and serve its methods (``wrap`` logs each request)."""
        server.extensions[EXTENSION_ID] = {"directoryRead": True}
        server.middleware.append(_ExtensionsOnInitialize(server))
        server.add_request_handler(LIST_METHOD, PaginatedRequestParams, wrap(LIST_METHOD, self.list_skills))
        server.add_request_handler(GET_METHOD, GetSkillParams, wrap(GET_METHOD, self.get_skill))
        server.add_request_handler(DIRECTORY_METHOD, DirectoryReadParams, wrap(DIRECTORY_METHOD, self.read_directory))

    async def list_skills(self, _ctx: ServerRequestContext[Any], params: PaginatedRequestParams) -> dict[str, Any]:
        listed = self.listed
        start = _offset(params.cursor, len(listed))
        page = listed[start : start + self.page_size]
        result: dict[str, Any] = {"resultType": "complete", "skills": [e.wire() for e in page]}
        if start + self.page_size < len(listed):
            result["nextCursor"] = _cursor(start + self.page_size)
        return result | _cache()

    async def get_skill(self, _ctx: ServerRequestContext[Any], params: GetSkillParams) -> dict[str, Any]:
        found = next((e for e in self.entries if same_uri(e.uri, params.uri)), None)
        if found is None:
            known = ", ".join(e.uri for e in self.listed) or "none"
            raise MCPError(INVALID_PARAMS, f"Unknown skill: {params.uri} (skills: {known})", {"uri": params.uri})
        if found.refusal is not None:
            why = f"{found.skill} is not served as a skill: {found.refusal}"
            raise MCPError(INVALID_PARAMS, why, {"uri": params.uri})
        return {"resultType": "complete", "skill": found.wire()} | _cache()

    async def read_directory(self, _ctx: ServerRequestContext[Any], params: DirectoryReadParams) -> dict[str, Any]:
        """The direct children of a skill's folder: ``skill://<skill>`` (its root, no trailing
        slash) or ``skill://<skill>/<folder>``; files with their resource metadata, folders as
        ``inode/directory``."""
        children = self._children(params.uri)
        if children is None:
            why = f"{params.uri} is not a directory resource (a skill's root is skill://<skill>, no trailing slash)"
            raise MCPError(INVALID_PARAMS, why, {"uri": params.uri})
        start = _offset(params.cursor, len(children))
        page_size = self.page_size * 2
        result: dict[str, Any] = {"resultType": "complete", "resources": children[start : start + page_size]}
        if start + page_size < len(children):
            result["nextCursor"] = _cursor(start + page_size)
        return result | _cache()

    def _children(self, uri: str) -> list[dict[str, Any]] | None:
        for entry in self.entries:
            root = entry.uri.removesuffix("/SKILL.md")
            if not (same_uri(uri, root) or unquote(uri).startswith(unquote(root) + "/")):
                continue
            folder = unquote(uri)[len(unquote(root)) :].strip("/")
            prefix = f"{folder}/" if folder else ""
            files: dict[str, dict[str, Any]] = {}
            folders: dict[str, dict[str, Any]] = {}
            for file in entry.files:
                if not file.path.startswith(prefix):
                    continue
                head, _, rest = file.path[len(prefix) :].partition("/")
                child = f"{root}/{quote(prefix + head, safe='/')}"
                if rest:
                    folders[head] = {"uri": child, "name": head, "mimeType": DIRECTORY_MIME}
                else:
                    files[head] = {"uri": file.uri, "name": head, "mimeType": file.mime_type, "size": len(file.data)}
            if not files and not folders:
                return None  # not a folder of this skill (a file, or nothing)
            return [v for _, v in sorted((folders | files).items())]
        return None


class _ExtensionsOnInitialize:
    def __init__(self, server: Server[Any]) -> None:
        self._server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict) and self._server.extensions:
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict) and "extensions" not in capabilities:
                capabilities["extensions"] = {k: dict(v) for k, v in self._server.extensions.items()}
        return result


def _cache() -> dict[str, Any]:
    return {"ttlMs": TTL_MS, "cacheScope": "public"}


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode()


def _offset(cursor: str | None, total: int) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        offset = int(text.removeprefix(_CURSOR_PREFIX)) if text.startswith(_CURSOR_PREFIX) else -1
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
    if not 0 <= offset <= total:
        raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor}", {"cursor": cursor})
    return offset
