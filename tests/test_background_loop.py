"""The loop async host calls run on (sandbox/engine.py BackgroundLoop) is running once it has been
made, so closing it at once, as a runtime that fails early does, stops and closes it cleanly."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from skillc.runtime.sandbox import engine
from skillc.runtime.sandbox.engine import BackgroundLoop


def test_a_loop_closed_as_soon_as_it_is_made_stops_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    # A thread slow to reach run_forever (a busy machine) is what opened the window: close() saw a
    # loop not yet running, closed it, and the thread then ran a closed loop or the close raised.
    def slow_start(target: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            time.sleep(0.05)
            return target()

        return run

    monkeypatch.setattr(engine, "named", slow_start)
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    for _ in range(3):
        background = BackgroundLoop()
        assert background.loop.is_running()
        background.close()
        background._thread.join(30)
        assert (background.loop.is_closed(), background._thread.is_alive()) == (True, False)
    assert failures == []


def test_the_loop_runs_what_is_sent_to_it_until_closed() -> None:
    background = BackgroundLoop()
    try:

        async def where() -> int:
            return threading.get_ident()

        ident = asyncio.run_coroutine_threadsafe(where(), background.loop).result(30)
        assert ident == background._thread.ident != threading.get_ident()
    finally:
        background.close()
    assert background.loop.is_closed()


def test_a_loop_whose_thread_never_runs_it_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "named", lambda target: lambda: None)  # the thread ends at once
    monkeypatch.setattr(BackgroundLoop, "START_TIMEOUT_S", 0.2)
    with pytest.raises(RuntimeError) as caught:
        BackgroundLoop()
    assert str(caught.value) == "the loop for async host calls did not start within 0.2 s"
