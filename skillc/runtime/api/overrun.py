"""Calls whose VM ran past its deadline where no interrupt reaches, and what the runtime does then.

The interrupt handler runs between bytecode instructions; a long native built-in
(``Array(2**32 - 1).join('')``, a sort of a huge sparse array) runs in C and never reaches it. Such a
call is answered at its deadline plus a grace (``RUN012``) while its worker thread runs on, and
until every such thread has come back, the skill's later calls run in guard processes (killed at
their deadline) on a pool of their own, so one stuck skill holds neither its callers nor its
other calls. Other skills have their own runtimes and pools and never wait for it.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from skillc.threadnames import name_os_thread

# How long past its deadline a call may take before it is answered without its worker.
GRACE_S = 0.5


class Overruns:
    """The worker threads of one runtime that are still running past their deadline."""

    def __init__(self, workers: int) -> None:
        self._running = 0
        self._lock = threading.Lock()
        self.guard_pool = ThreadPoolExecutor(
            max_workers=max(workers, 1), thread_name_prefix="skillc-guard", initializer=name_os_thread
        )

    @property
    def active(self) -> bool:
        return self._running > 0

    def track(self, work: Future[Any] | asyncio.Future[Any]) -> None:
        """Count ``work`` as stuck until it finishes on its own."""
        with self._lock:
            self._running += 1
        work.add_done_callback(self._finished)

    def _finished(self, _work: Future[Any] | asyncio.Future[Any]) -> None:
        with self._lock:
            self._running -= 1

    def close(self) -> None:
        self.guard_pool.shutdown(wait=False, cancel_futures=True)
