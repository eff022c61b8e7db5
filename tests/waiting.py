"""Waiting for a state instead of sleeping for a time: a sleep that is long enough on an idle
machine is too short on a loaded one, and a poll costs only as long as the state takes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

# For waits whose state comes in milliseconds on an idle machine: generous enough for a loaded
# one, and still a bound, so a state that never comes fails the test instead of hanging it.
PATIENCE_S = 60.0


def wait_until(predicate: Callable[[], bool], timeout_s: float, what: str, *, every_s: float = 0.02) -> None:
    """Return once ``predicate()`` is true; fail naming ``what`` if it is not within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(every_s)


def bound_for(timeout_s: float) -> float:
    """How long a call with a ``timeout_s`` deadline may take, answer included, on a loaded machine:
    the deadline five times over plus ten seconds. Far below what the unbounded calls of these
    tests run for (minutes), so a deadline that never fires still fails the test."""
    return timeout_s * 5 + 10


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used so far (user + system, all its threads). Unlike wall
    time, it does not grow when other processes take the cores."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
