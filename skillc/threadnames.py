"""skillc's threads named for the operating system too, not only for Python.

Python 3.11 keeps a thread's name to itself: ``top -H``, ``ps -L``, a profiler and
``/proc/<pid>/task/<tid>/comm`` see every thread of ``skillc serve`` as ``python``. Each thread
skillc starts (the API VM and card threads, the events writer, the host loop, ...) gives the kernel
its Python name once it runs, so what each one costs can be read from outside the process
(bench/callpath.py ``--threads``). Linux only (``prctl(PR_SET_NAME)``, 15 bytes at most, so
skillc's names fit: ``skillc-js_0``, ``skillc-card-1_0``, ``skillc-events``, ``skillc-host``);
elsewhere, and whenever the call fails, nothing happens: a name is never worth a thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

_PR_SET_NAME = 15
_NAME_BYTES = 15  # the kernel keeps 16 bytes, the last one a NUL


@cache
def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def name_os_thread() -> None:
    """Give the calling thread's Python name to the OS (cut to 15 bytes). A ThreadPoolExecutor's
    ``initializer``; a Thread's target goes through :func:`named`."""
    prctl = _prctl()
    if prctl is None:
        return
    name = threading.current_thread().name.encode("utf-8", "replace")[:_NAME_BYTES]
    with contextlib.suppress(OSError, ctypes.ArgumentError):
        prctl(_PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)


def named(target: Callable[[], object]) -> Callable[[], None]:
    """``target`` as a Thread's target that first names its OS thread (:func:`name_os_thread`)."""

    def run() -> None:
        name_os_thread()
        target()

    return run
