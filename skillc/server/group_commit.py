"""A writer thread that commits what many callers hand it together: group commit.

Callers on the event loop hand over an item and await its future; the thread takes every item
waiting at that moment (up to ``max_group``) and writes them with one call of ``write`` (one
transaction), so under load N concurrent calls cost one commit instead of N, and the event loop
never waits on the database. The queue is bounded: a caller past ``max_pending`` waits (in its
own thread, or as an awaited future) instead of growing memory without limit. ``close`` writes
what is still queued before the thread ends, so nothing a caller was told is written is lost.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Generic, TypeVar

from skillc.threadnames import named

T = TypeVar("T")
R = TypeVar("R")

# ``write`` answers each item: its result, or the exception that item alone failed with.
Write = Callable[[Sequence[T]], Sequence["R | BaseException"]]


class WriterClosed(RuntimeError):
    """An item handed to a writer that has been closed."""


class GroupWriter(Generic[T, R]):
    def __init__(self, write: Write[T, R], *, name: str, max_group: int = 64, max_pending: int = 4096) -> None:
        self._write = write
        self._name = name
        self._max_group = max_group
        self._max_pending = max_pending
        self._queue: deque[tuple[T, Future[R]]] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, item: T) -> Future[R]:
        """The item's future; it resolves once the item is committed (or failed)."""
        future: Future[R] = Future()
        with self._cond:
            while len(self._queue) >= self._max_pending and not self._closed:
                self._cond.wait()
            if self._closed:
                raise WriterClosed(f"{self._name} is closed")
            self._queue.append((item, future))
            if self._thread is None:
                # Started on first use: a forked worker gets its own thread, never its parent's.
                self._thread = threading.Thread(target=named(self._run), name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return future

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return  # closed and drained
                group = [self._queue.popleft() for _ in range(min(len(self._queue), self._max_group))]
                self._cond.notify_all()  # room for submitters waiting on the bound
            self._commit(group)

    def _commit(self, group: list[tuple[T, Future[R]]]) -> None:
        try:
            answers = list(self._write([item for item, _ in group]))
        except BaseException as err:  # the whole group failed: each caller hears why
            answers = [err] * len(group)
        for (_, future), answer in zip(group, answers, strict=True):
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)

    def close(self, timeout_s: float | None = 30.0) -> None:
        """Write what is queued, then stop the thread (later submits raise :class:`WriterClosed`)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
