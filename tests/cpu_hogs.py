"""``--cpu-hogs N``: run the session on a machine kept busy by N processes that burn CPU.

A test that passes only on an idle machine has a hidden wall-clock assumption; running the suite
next to N busy loops (N about the number of cores) shows it. The hogs start before the first test
and stop at the end of the session, on failure and on Ctrl-C too. Each hog also watches its parent
and exits when the parent is gone, so even a killed pytest leaves no hog behind.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys

import pytest

OPTION = "--cpu-hogs"

# Burns CPU, looking up every 0.1 s whether the process that started it is still there: once the
# parent is gone, the hog is re-parented and getppid() changes. The parent's pid comes as an
# argument: read at start-up, it could already be the re-parented one.
HOG = """\
import os, sys, time
parent = int(sys.argv[1])
while os.getppid() == parent:
    until = time.monotonic() + 0.1
    while time.monotonic() < until:
        pass
"""

_KEY = pytest.StashKey[list["subprocess.Popen[bytes]"]]()


def start_hogs(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` child processes, each busy-looping on one core until stopped or orphaned."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            hogs.append(
                subprocess.Popen(
                    [sys.executable, "-c", HOG, str(os.getpid())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
    except BaseException:
        stop_hogs(hogs)
        raise
    return hogs


def stop_hogs(hogs: list[subprocess.Popen[bytes]]) -> None:
    """Kill every hog and reap it (idempotent)."""
    for hog in hogs:
        if hog.poll() is None:
            hog.kill()
    for hog in hogs:
        hog.wait()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        type=int,
        default=0,
        metavar="N",
        help="run N CPU-burning processes for the whole session, to show tests that depend on an idle machine",
    )


def pytest_configure(config: pytest.Config) -> None:
    n = config.getoption(OPTION)
    if n < 0:
        raise pytest.UsageError(f"{OPTION} must be 0 or more, not {n}")
    if n == 0:
        return
    hogs = start_hogs(n)
    config.stash[_KEY] = hogs
    # pytest_unconfigure runs on failure and on Ctrl-C; atexit covers an interpreter that ends
    # without it (an internal error in another plugin's configure).
    atexit.register(stop_hogs, hogs)


def pytest_unconfigure(config: pytest.Config) -> None:
    hogs = config.stash.get(_KEY, None)
    if hogs is not None:
        stop_hogs(hogs)


def pytest_report_header(config: pytest.Config) -> str | None:
    hogs = config.stash.get(_KEY, None)
    if not hogs:
        return None
    return _said(hogs)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # Said again at the end: -q prints no header, and a loaded run's log should say it was loaded.
    hogs = config.stash.get(_KEY, None)
    if hogs:
        terminalreporter.write_line(_said(hogs))


def _said(hogs: list[subprocess.Popen[bytes]]) -> str:
    pids = " ".join(str(h.pid) for h in hogs)
    return f"cpu hogs: {len(hogs)} CPU-burning processes for the whole session (pids {pids})"
