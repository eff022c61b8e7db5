"""The skills' runtime console (API VM and card VM lines, with file:line) on its way to the debug
console page.

The skill server reports every call's console (:attr:`SkillServer.console_observers`), whoever
made the call: an MCP host, an agent, the chat simulator, a card preview. Each line gets a
``msgid`` here and is pushed to every open console over SSE (event ``console``); the endpoints
the page calls itself (render, chat) also return the lines their work produced, so the page has
them before it posts its next snapshot. The page keeps a line once per ``msgid``.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

from skillc.runtime.contracts import ConsoleEntry as RuntimeLine
from skillc.server.debugger.snapshot import ConsoleEntry, ConsoleTarget

MAX_LINES = 2000  # kept for consoles that connect later
TARGETS: dict[str, ConsoleTarget] = {"api-vm": "app", "card-vm": "widget", "page-vm": "page"}


class ConsoleFeed:
    def __init__(self, broadcast: Callable[[str, Any], None] | None = None) -> None:
        self.broadcast = broadcast
        self.lines: deque[dict[str, Any]] = deque(maxlen=MAX_LINES)
        self.total = 0  # lines ever added (the deque forgets the oldest)
        self._ids = itertools.count(1)

    def since(self, mark: int) -> list[dict[str, Any]]:
        """The lines added after ``total`` was ``mark`` (those still kept)."""
        fresh = min(self.total - mark, len(self.lines))
        return list(self.lines)[len(self.lines) - fresh :] if fresh > 0 else []

    def add(self, skill: str, source: str, lines: list[RuntimeLine]) -> list[dict[str, Any]]:
        """``source``: ``api-vm``, ``card-vm`` or ``page-vm``. Returns the lines as the page receives them."""
        wired = [self._entry(skill, source, line).wire() for line in lines]
        self.lines.extend(wired)
        self.total += len(wired)
        if wired and self.broadcast is not None:
            self.broadcast("console", wired)
        return wired

    def _entry(self, skill: str, source: str, line: RuntimeLine) -> ConsoleEntry:
        return ConsoleEntry(
            msgid=f"rt-{next(self._ids)}",
            target=TARGETS.get(source, "app"),
            level=line.level,
            source=source,
            timestamp=line.timestamp,
            text=line.text,
            # A page's files are the project's (pages/a/b.js), not under the skill's folder.
            url=(line.file if source == "page-vm" else f"{skill}/{line.file}") if line.file else None,
            line_number=line.line,
            column_number=line.column,
            args=line.args,
        )
