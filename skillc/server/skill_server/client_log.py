"""A call's console lines as MCP log notifications, for a client that asked for them: the
2026-07-28 per-request ``_meta`` level (the SDK applies it), or a 2025-era connection's
``logging/setLevel``."""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from typing import Any, get_args

from mcp.server.context import ServerRequestContext
from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams

from skillc.runtime.contracts import ConsoleEntry
from skillc.server.consent import MODERN_VERSION
from skillc.server.events import console_level

log = logging.getLogger("skillc.server")

# MCP's logging levels, least severe first (the order the SDK's literal declares).
_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)


class ClientLog:
    def __init__(self) -> None:
        # Log levels asked for with logging/setLevel, by the connection's initialize params (only a
        # stateful connection, stdio, has them; stateless HTTP asks per request in _meta).
        self._levels: OrderedDict[int, tuple[object, LoggingLevel]] = OrderedDict()

    async def set_level(self, ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
        client = ctx.session.client_params
        if client is not None:
            self._levels[id(client)] = (client, params.level)  # the params object keeps its id unique
            self._levels.move_to_end(id(client))
            while len(self._levels) > 64:
                self._levels.popitem(last=False)
        return EmptyResult()

    async def send(
        self, ctx: ServerRequestContext[Any], skill: str, sources: list[tuple[str, list[ConsoleEntry]]]
    ) -> None:
        if not any(lines for _source, lines in sources):
            return
        floor: LoggingLevel | None = "debug"
        if ctx.protocol_version != MODERN_VERSION:
            client = ctx.session.client_params
            known = self._levels.get(id(client)) if client is not None else None
            floor = known[1] if known is not None and known[0] is client else None
        if floor is None:
            return
        lowest = _LEVELS.index(floor)
        for source, lines in sources:
            for line in lines:
                level = console_level(line.level)  # the same mapping as the session events
                if _LEVELS.index(level) < lowest:
                    continue
                data = {
                    "text": line.text,
                    "source": source,
                    **({"file": line.file, "line": line.line} if line.file else {}),
                }
                try:
                    with warnings.catch_warnings():
                        # Deprecated by 2026-07-28 (SEP-2577) but the only log channel hosts show.
                        warnings.simplefilter("ignore")
                        await ctx.session.send_log_message(level, data, logger=f"{skill}/{source}")
                except Exception:  # a client gone mid-call must not fail the call
                    log.debug("a log notification could not be sent", exc_info=True)
                    return
