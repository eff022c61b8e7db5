"""Real time for dynamic cards: asyncio wakes the card host when a card's next timer is due.

One ``call_later`` handle per card, re-armed after everything that may change the card's timers
(mount, event, timer, expiry, visibility, rebuild) and cancelled when the card has none left, is
hidden, expired, closed or evicted. The firing itself is the card host's (``fire``): a job on the
card's thread, so a timer callback never runs beside another slice of the same card.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from skillc.runtime.cards.card_timers import TimerClock

log = logging.getLogger("skillc.runtime")


class TimerDriver:
    def __init__(self, clock: TimerClock, fire: Callable[[str], Awaitable[None]]) -> None:
        self.clock = clock
        self._fire = fire
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def arm(self, card_id: str, due_ms: float | None) -> None:
        """Wake at ``due_ms`` (the clock's time) for ``card_id``; None: no wake-up. Call on the loop."""
        self.cancel(card_id)
        if due_ms is None or self._closed or not self.clock.real:
            return
        delay = max(0.0, (due_ms - self.clock.now_ms()) / 1000)
        self._handles[card_id] = asyncio.get_running_loop().call_later(delay, self._start, card_id)

    def cancel(self, card_id: str) -> None:
        handle = self._handles.pop(card_id, None)
        if handle is not None:
            handle.cancel()

    @property
    def armed(self) -> int:
        return len(self._handles)

    def _start(self, card_id: str) -> None:
        self._handles.pop(card_id, None)
        task = asyncio.ensure_future(self._run(card_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, card_id: str) -> None:
        try:
            await self._fire(card_id)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug of ours must not end the card host's timers for every card
            log.exception("the timers of card %s failed", card_id)

    async def close(self) -> None:
        self._closed = True
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
