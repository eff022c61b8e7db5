"""Stopping running API calls from outside their chain, through each call's own :class:`Deadline`.

A call's deadline is the one way into a running VM: tripping it makes the interrupt handler stop
JavaScript at its next check and ends host waits within their 50 ms slice, and the chain answers
RUN012 as for any timeout. :meth:`ApiRuntime.call` registers its deadlines here while it runs:

- in the :class:`CallGroup` bound to the running context (:func:`calls_in`), so whoever started a
  piece of work (the debugger's chat turn, through the request it makes) can stop the calls that
  work caused, and nothing else;
- in the process-wide set :func:`interrupt_all` trips, for a server that shuts down.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from skillc.runtime.sandbox.native import Deadline


class CallGroup:
    """The API calls of one piece of work. Once cancelled, a call that joins is stopped at once."""

    def __init__(self) -> None:
        self._deadlines: dict[int, Deadline] = {}  # by id(): a Deadline is a dataclass, unhashable
        self._lock = threading.Lock()
        self.cancelled = False

    def add(self, deadline: Deadline) -> None:
        with self._lock:
            if self.cancelled:
                deadline.trip()
                return
            self._deadlines[id(deadline)] = deadline

    def discard(self, deadline: Deadline) -> None:
        with self._lock:
            self._deadlines.pop(id(deadline), None)

    def cancel(self) -> int:
        """Trip every running call of the group (and every later one); the number tripped."""
        with self._lock:
            self.cancelled = True
            running = list(self._deadlines.values())
            self._deadlines.clear()
        for deadline in running:
            deadline.trip()
        return len(running)

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._deadlines)


_group: ContextVar[CallGroup | None] = ContextVar("skillc_call_group", default=None)
_all: dict[int, Deadline] = {}
_all_lock = threading.Lock()


@contextmanager
def calls_in(group: CallGroup | None) -> Iterator[None]:
    """API calls started in the body (and in tasks it starts) belong to ``group``."""
    token = _group.set(group)
    try:
        yield
    finally:
        _group.reset(token)


@contextmanager
def tracked(deadline: Deadline) -> Iterator[None]:
    """Register a running call's deadline with the current group and the process while the body runs."""
    group = _group.get()
    if group is not None:
        group.add(deadline)
    with _all_lock:
        _all[id(deadline)] = deadline
    try:
        yield
    finally:
        with _all_lock:
            _all.pop(id(deadline), None)
        if group is not None:
            group.discard(deadline)


def interrupt_all() -> int:
    """Trip the deadline of every API call running in this process (a server shutting down)."""
    with _all_lock:
        running = list(_all.values())
    for deadline in running:
        deadline.trip()
    return len(running)


def running_calls() -> int:
    """How many API calls are running in this process now."""
    with _all_lock:
        return len(_all)
