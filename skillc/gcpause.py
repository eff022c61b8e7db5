"""The cycle collector held off while a big acyclic structure is built.

Every stage builds some: the JSON tree of a 3 MB mcp.json, the rules of a stylesheet, a card's
render trees. Each allocates many small containers that all survive it. With the collector
running, every few thousand allocations it walks the young ones, and each time the surviving
heap has grown by a quarter it walks the whole heap: a 10 000-item list paid for several full
walks of everything alive in the process, most of the render's time, and a 3 MB mcp.json took
2.5 times as long to read. These structures are acyclic (render instances point down only), so
nothing they hold needs the collector to be freed; holding it off until the build returns lets
the new objects be walked once, by the next ordinary collection, instead of once per threshold
crossed while they were being built.

The pause is process-wide (Python has one collector), counted across threads so that two
renders on two threads end it only when both are done, and it never re-enables a collector
that was already disabled when the first pause began. Collections only wait: cyclic garbage
made by other threads meanwhile is collected afterwards, nothing is lost.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

__all__ = ["collector_paused"]


class _Pause:
    """A re-entrant, thread-counted pause; a class rather than a generator context manager
    because a one-field setData costs tens of microseconds and this runs around each one."""

    __slots__ = ("_depth", "_lock", "_resume")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._resume = False  # whether the collector was enabled when the outermost pause began

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._depth += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._resume:
                gc.enable()


collector_paused = _Pause()
"""``with collector_paused:`` holds the cycle collector off for the block."""
