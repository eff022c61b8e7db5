"""The timers of one dynamic card (``permissions["scope.dynamic"]``): a schedule Python owns.

A card's ``setTimeout`` / ``setInterval`` do not sleep in JavaScript: they register the timer here
(host call ``timer.set``) and the card host fires it later, when the clock says it is due, in a
slice of its own with the same deadline and memory limit as an event. So a timer outlives the
event or mount that set it, and the clock can be real (``skillc serve``: asyncio) or virtual
(``skillc run``: a flow's ``wait`` step moves it).

Each card keeps its own local time, which stands still while the host reports the card hidden:
a hidden card's timers are paused, not skipped, and resume with the time they had left. Bounds
(docs/runtime.md, "Dynamic cards"): at most ``card_max_timers`` live timers, and an interval of at
least ``card_timer_min_interval_ms`` for ``setInterval`` and for a ``setTimeout`` set while a timer
callback runs (a polling loop written with setTimeout), so no card can spin its thread.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

# A timer further out than a day is kept at a day (what the API VM's timers allow too).
MAX_DELAY_MS = 24 * 3600 * 1000


class TimerClock(Protocol):
    """Where the card host's time comes from, in milliseconds. ``real``: asyncio fires the
    timers as the time passes; otherwise someone moves the clock (:class:`VirtualClock`)."""

    real: bool

    def now_ms(self) -> float: ...


class RealClock:
    real = True

    def now_ms(self) -> float:
        return time.monotonic() * 1000


class VirtualClock:
    """Time that moves only when told: ``skillc run``'s ``wait`` steps, from 0 ms."""

    real = False

    def __init__(self) -> None:
        self.now = 0.0

    def now_ms(self) -> float:
        return self.now


@dataclass(frozen=True)
class TimerSetup:
    """What the card host gives each card's schedule: the clock, the order timers were set in
    across all its cards (equal due times fire in that order), the name of the card's update
    stream, and whether the card starts hidden."""

    clock: TimerClock
    order: Callable[[], int] = field(default_factory=lambda: itertools.count(1).__next__)
    stream: str = "s"
    hidden: bool = False


@dataclass
class Timer:
    id: int
    due: float  # card-local ms
    interval: float | None  # set for setInterval
    order: int


@dataclass(frozen=True)
class TimerSet:
    """What ``timer.set`` did: ``accepted`` false when the card already has its maximum of live
    timers; ``clamped`` when the delay was raised to the minimum interval."""

    accepted: bool
    delay_ms: float
    clamped: bool


class CardTimers:
    """The live timers of one card. Thread-safe: the card's thread sets and fires them, the
    event loop reads when the next one is due."""

    def __init__(
        self,
        clock: TimerClock,
        *,
        min_interval_ms: float,
        max_timers: int,
        order: Callable[[], int] | None = None,
        hidden: bool = False,
    ) -> None:
        self.clock = clock
        self.min_interval_ms = min_interval_ms
        self.max_timers = max_timers
        self._order = order or itertools.count(1).__next__
        self._lock = threading.Lock()
        self._live: dict[int, Timer] = {}
        self._hidden_total = 0.0
        self._hidden_since: float | None = clock.now_ms() if hidden else None
        # True while a timer callback runs: a setTimeout set then re-arms a loop (clamped).
        self.firing = False

    # -- time ------------------------------------------------------------------------------------

    def _local(self, now: float) -> float:
        paused = now - self._hidden_since if self._hidden_since is not None else 0.0
        return now - self._hidden_total - paused

    @property
    def hidden(self) -> bool:
        return self._hidden_since is not None

    def hide(self) -> None:
        with self._lock:
            if self._hidden_since is None:
                self._hidden_since = self.clock.now_ms()

    def show(self) -> None:
        with self._lock:
            if self._hidden_since is not None:
                self._hidden_total += self.clock.now_ms() - self._hidden_since
                self._hidden_since = None

    # -- setting and clearing --------------------------------------------------------------------

    def set(self, timer_id: int, ms: float, repeat: bool) -> TimerSet:
        delay = ms if math.isfinite(ms) and ms > 0 else 0.0
        delay = min(delay, MAX_DELAY_MS)
        clamped = (repeat or self.firing) and delay < self.min_interval_ms
        if clamped:
            delay = self.min_interval_ms
        with self._lock:
            if timer_id not in self._live and len(self._live) >= self.max_timers:
                return TimerSet(False, delay, clamped)
            due = self._local(self.clock.now_ms()) + delay
            self._live[timer_id] = Timer(timer_id, due, delay if repeat else None, self._order())
        return TimerSet(True, delay, clamped)

    def clear(self, timer_id: int) -> None:
        with self._lock:
            self._live.pop(timer_id, None)

    def clear_all(self) -> None:
        with self._lock:
            self._live.clear()

    @property
    def count(self) -> int:
        return len(self._live)

    # -- firing ----------------------------------------------------------------------------------

    def mark(self) -> int:
        """A point in the set order: a pass fires only timers set before it (one set by a callback
        of this pass waits for the next), so one pass always ends."""
        return self._order()

    def due(self, mark: int) -> list[Timer]:
        """The timers due now and set before ``mark``, in the order they fire: due time, then set order."""
        with self._lock:
            if self._hidden_since is not None:
                return []
            local = self._local(self.clock.now_ms())
            hits = [t for t in self._live.values() if t.due <= local and t.order < mark]
        return sorted(hits, key=lambda t: (t.due, t.order))

    def take(self, timer: Timer) -> bool:
        """Before its callback runs: a timeout is removed, an interval moves to its next time
        (missed beats are not made up). False when the timer was cleared meanwhile."""
        with self._lock:
            if self._live.get(timer.id) is not timer:
                return False
            if timer.interval is None:
                del self._live[timer.id]
                return True
            local = self._local(self.clock.now_ms())
            nxt = timer.due + timer.interval
            timer.due = nxt if nxt > local else local + timer.interval
            timer.order = self._order()
            return True

    def skip_due(self) -> None:
        """Take the timers due now without running them (another instance drove the card since
        this copy's last write, so these beats were its)."""
        for timer in self.due(self.mark()):
            self.take(timer)

    def next_due(self) -> tuple[float, int] | None:
        """When the next timer is due, on the host's clock, with its set order; None while the
        card is hidden or has no timers."""
        with self._lock:
            if self._hidden_since is not None or not self._live:
                return None
            now = self.clock.now_ms()
            first = min(self._live.values(), key=lambda t: (t.due, t.order))
            return first.due + (now - self._local(now)), first.order
