"""Whole ``skillc check`` outcomes in the user cache: a check of an unchanged skill replays the
previous check's output without loading the compiler (the way ruff or mypy skip unchanged work).

What a check depends on is observed, not declared. While a check runs, an audit hook (PEP 578)
records every file it opens (a failed open too: the file did not exist) and every folder it lists.
The entry keeps:

- a digest of each such file's content, or that it was missing;
- the names in each folder listed, in every folder holding a file the check opened, and in every
  folder of the checked tree (``.git``, ``node_modules`` and ``__pycache__`` aside): a file created where the check
  only asked whether one exists (``is_file``) changes a listing;
- the size and time of every Python module loaded and every file of skillc or its libraries read
  (the compiler itself: an upgrade or an edited rule invalidates every entry);
- the interpreter, skillc's version, the path as typed, the format, ``--quiet`` and the colour
  decisions.

A later check replays the entry (stdout, stderr, exit status) only when all of it still holds; any
doubt is a miss and the check runs. A check that saw a file change while it ran (a time within
``_SETTLE_NS`` of its start or later) is not stored. Entries live under ``<cache>/check/``, at most
``_MAX_ENTRIES`` (the oldest go first), with the same rules as every file of the user cache
(skillc/user_cache.py): ours, private, JSON, written atomically, safe to delete.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import sys
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skillc.user_cache import cache_dir, is_ours, write_private

# Bumped when an entry's layout changes: an entry of another format is a miss.
FORMAT = 1
_MAX_ENTRIES = 256
# A file changed this close to the check's start may have been read in another state than the one
# digested afterwards: such a check is not stored.
_SETTLE_NS = 2_000_000_000
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class Write:
    """One click.echo of the outcome, replayed with the same arguments."""

    text: str
    err: bool = False
    nl: bool = True
    color: bool | None = None


@dataclass
class Outcome:
    """What a check printed and how it exited."""

    writes: list[Write] = field(default_factory=list)
    status: int = 0


@dataclass
class _Reads:
    """What the running check opened and listed (absolute, normalised paths). Python's own
    machinery (imports, package metadata) reads on the check's behalf: its files are the
    compiler's, judged by size and time, and the folders it scans are not the check's inputs."""

    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    machinery: set[str] = field(default_factory=set)


_recording: contextvars.ContextVar[_Reads | None] = contextvars.ContextVar("skillc_check_reads", default=None)
_hook_installed = False
_MACHINERY = ("<frozen importlib", "<frozen zipimport", os.path.join(os.path.dirname(os.__file__), "importlib", ""))


def _audit(event: str, args: tuple[object, ...]) -> None:
    # Runs for every audited event of the process: the common case returns on the first test.
    if event != "open" and event != "os.listdir" and event != "os.scandir":
        return
    reads = _recording.get()
    if reads is None or not args:
        return
    target = args[0]
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if not isinstance(target, str):
        return  # a file descriptor: the path was recorded when it was opened
    path = os.path.abspath(target or ".")
    if _by_machinery():
        if event == "open":
            reads.machinery.add(path)
    elif event == "open":
        reads.opened.add(path)
    else:
        reads.listed.add(path)


def _by_machinery() -> bool:
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(_MACHINERY):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def recording() -> Iterator[_Reads]:
    """Record what the code run inside opens and lists (this thread and context only)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)  # an audit hook cannot be removed: it stays, idle, for the process
        _hook_installed = True
    reads = _Reads()
    token = _recording.set(reads)
    try:
        yield reads
    finally:
        _recording.reset(token)


def entry_key(root: Path, parts: list[object]) -> str:
    """The entry's name: the interpreter, skillc, the checked folder and the options."""
    from skillc import __version__

    ident = [FORMAT, sys.executable, sys.version, __version__, os.path.abspath(root), *parts]
    return hashlib.sha256(json.dumps(ident, ensure_ascii=True).encode()).hexdigest()[:40]


def _entry_path(key: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    entries = folder / "check"
    try:
        entries.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    if entries.is_symlink() or not entries.is_dir():
        return None
    return entries / f"{key}.json"


def lookup(key: str) -> Outcome | None:
    """The stored outcome when everything it was computed from still holds, else None."""
    path = _entry_path(key)
    if path is None or not is_ours(path):
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        if not _still_holds(entry):
            return None
        writes = [Write(str(t), bool(e), bool(n), c if c is None else bool(c)) for t, e, n, c in entry["writes"]]
        return Outcome(writes, int(entry["status"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable, another layout, a corrupted file: a miss


def _still_holds(entry: dict[str, object]) -> bool:
    tools = entry["tools"]
    files = entry["files"]
    listings = entry["listings"]
    assert isinstance(tools, list) and isinstance(files, list) and isinstance(listings, list)
    for name, size, mtime in tools:
        if _stat_of(name) != ((size, mtime) if size is not None else None):
            return False
    for name, digest in files:
        if _digest_of(name) != digest:
            return False
    return all(_listing_of(name) == names for name, names in listings)


def store(key: str, root: Path, reads: _Reads, started_ns: int, outcome: Outcome) -> None:
    """Keep ``outcome`` for ``key``; nothing is stored when an input moved during the check or
    the cache cannot be used."""
    path = _entry_path(key)
    if path is None:
        return
    tool_roots = _tool_roots()
    cache_root = str(path.parent.parent)
    tools: set[str] = set(reads.machinery)
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str):
            tools.add(os.path.abspath(name))
    inputs: set[str] = set()
    for name in reads.opened:
        if name.startswith(cache_root + os.sep):
            continue
        if name.startswith(tool_roots):
            tools.add(name)
        else:
            inputs.add(name)
    folders = {os.path.dirname(name) for name in inputs} | {n for n in reads.listed if not n.startswith(tool_roots)}
    folders |= set(_tree(os.path.abspath(root)))
    settled = started_ns - _SETTLE_NS
    tool_rows: list[list[object]] = []
    for name in sorted(tools):
        st = _stat_of(name)
        tool_rows.append([name, *(st if st is not None else (None, None))])
    if any(_moved_since(name, settled) for name in inputs | folders):
        return
    file_rows = [[name, _digest_of(name)] for name in sorted(inputs)]
    listing_rows = [[name, _listing_of(name)] for name in sorted(folders)]
    entry = {
        "format": FORMAT,
        "tools": tool_rows,
        "files": file_rows,
        "listings": listing_rows,
        "writes": [[w.text, w.err, w.nl, w.color] for w in outcome.writes],
        "status": outcome.status,
    }
    if write_private(path, json.dumps(entry, ensure_ascii=False)):
        _prune(path.parent)


def _tool_roots() -> tuple[str, ...]:
    """Where the compiler and its libraries live: files there are judged by size and time."""
    import skillc

    roots = {os.path.dirname(os.path.abspath(skillc.__file__)), sys.prefix, sys.base_prefix, sys.exec_prefix}
    return tuple(os.path.join(os.path.abspath(r), "") for r in roots)


def _tree(root: str) -> Iterator[str]:
    """Every folder of the checked tree, without version control and package folders."""
    if not os.path.isdir(root):
        yield os.path.dirname(root)  # a missing path: its parent says whether it appears
        return
    for folder, dirs, _files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        yield folder


def _moved_since(name: str, settled_ns: int) -> bool:
    """Changed at or after ``settled_ns``; a missing path (a failed open) has not moved."""
    try:
        return os.stat(name).st_mtime_ns >= settled_ns
    except OSError:
        return False


def _stat_of(name: str) -> tuple[int, int] | None:
    try:
        st = os.stat(name)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _digest_of(name: str) -> str | None:
    try:
        with open(name, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except IsADirectoryError:
        return "dir"
    except OSError:
        return None


def _listing_of(name: str) -> list[str] | None:
    try:
        return sorted(os.listdir(name))
    except OSError:
        return None


def _prune(folder: Path) -> None:
    """Keep the newest ``_MAX_ENTRIES`` entries."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
        if len(entries) <= _MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for old in entries[: len(entries) - _MAX_ENTRIES]:
            with contextlib.suppress(OSError):
                os.unlink(old.path)
    except OSError:
        return


def now_ns() -> int:
    return time.time_ns()
