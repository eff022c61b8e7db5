"""skillc's threads carry their names to the OS (skillc/threadnames.py), so that what each
one costs can be read from outside the process: bench/callpath.py --threads groups /proc's readings
by them."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.config import RuntimeConfig
from skillc.threadnames import name_os_thread, named

from .conftest import COFFEE
from .test_bench_scripts import load_bench

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread names reach the OS on Linux only")


def comm(tid: int) -> str:
    return Path(f"/proc/self/task/{tid}/comm").read_text().strip()


def on_named_thread(name: str, work: Callable[[], object]) -> str:
    """Run ``work`` on a thread started through :func:`named`; the OS name it had meanwhile."""
    seen: list[str] = []

    def target() -> None:
        work()
        seen.append(comm(threading.get_native_id()))

    thread = threading.Thread(target=named(target), name=name)
    thread.start()
    thread.join(30)
    return seen[0]


def test_a_thread_started_through_named_has_its_python_name_in_the_os() -> None:
    assert on_named_thread("skillc-events", lambda: None) == "skillc-events"
    # The kernel keeps 15 bytes: the name is cut, not refused.
    assert on_named_thread("skillc-a-name-longer-than-fifteen", lambda: None) == "skillc-a-name-l"
    # A thread started without it has the process's name, as every thread had before.
    seen: list[str] = []
    plain = threading.Thread(target=lambda: seen.append(comm(threading.get_native_id())), name="skillc-unnamed")
    plain.start()
    plain.join(30)
    assert seen == [comm(os.getpid())] != ["skillc-unnamed"]


def test_executor_threads_name_themselves_and_so_do_the_api_vm_threads(tmp_path: Path) -> None:
    with ThreadPoolExecutor(1, thread_name_prefix="skillc-pool", initializer=name_os_thread) as pool:
        assert pool.submit(lambda: comm(threading.get_native_id())).result(30) == "skillc-pool_0"
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    try:
        outcome = runtime.call_blocking("searchDrinks", {"keyword": "latte"})
        assert not outcome.result.is_error, outcome.result.text
        # The thread that ran the call's VM, and the loop its async host calls run on.
        vm_thread = runtime._pool().submit(lambda: comm(threading.get_native_id())).result(30)
        host_thread = runtime._host_loop._thread.native_id
        assert (vm_thread, comm(host_thread or 0)) == ("skillc-js_0", "skillc-host")
    finally:
        runtime.close()


def test_callpath_groups_cpu_by_thread_name() -> None:
    callpath = load_bench("callpath")
    stop = threading.Event()
    burned = [threading.Event(), threading.Event()]

    def burn(done: threading.Event) -> None:
        # CPU, not wall time: each thread runs until it has used 100 ms of its own (10 clock ticks,
        # of which the kernel's rounding of user and system time may drop two), then stays alive (a
        # thread that has ended is gone from /proc) until the reading is taken.
        until = time.thread_time() + 0.1
        while time.thread_time() < until:
            pass
        done.set()
        stop.wait(30)

    threads = [
        threading.Thread(target=named(lambda e=e: burn(e)), name=f"skillc-card-{i}_0") for i, e in enumerate(burned)
    ]
    for t in threads:
        t.start()
    try:
        assert all(e.wait(30) for e in burned)
        ticks = callpath.thread_ticks(os.getpid())
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    # Both card threads count under one name (200 ms between them); the process's first thread is
    # the "event loop".
    assert ticks["skillc-card"] >= 10, ticks
    assert not any(name.startswith("skillc-card-") for name in ticks), ticks
    assert "event loop" in ticks
