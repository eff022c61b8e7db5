"""The per-user cache directory and the digest sets kept in it: safe to lose, never trusted blindly.

``$XDG_CACHE_HOME/skillc`` (or ``~/.cache/skillc``), created 0700. A directory or file that is not
ours (another owner, a symbolic link, writable by group or others) is never read: a shared or
planted cache could otherwise tell ``skillc check`` that a file is clean when it is not. The
files are JSON (no pickle: reading one runs no code), written to a private temporary file and
renamed into place, so a reader never sees half a file. Whatever goes wrong (no home, a read-only
disk, a corrupted file) the cache is skipped and the work is done again: it only saves time.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

# Bumped when the file layout changes: a file of another format is ignored and rewritten.
FORMAT = 1


def cache_dir() -> Path | None:
    """The skillc cache directory, created 0700 if missing; None when it cannot be used safely."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    path = root / "skillc"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return None
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)  # ours, but left open to others: close it before use
    except (OSError, RuntimeError):  # RuntimeError: Path.home() without a home
        return None
    return path


def is_ours(path: Path) -> bool:
    """A regular file of this user that nobody else may write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


class DigestSet:
    """A bounded set of content digests in one JSON file, valid for one ``fingerprint`` (the
    version of whatever produced the verdicts): a file for another fingerprint starts empty."""

    def __init__(self, path: Path | None, fingerprint: str, limit: int = 4096) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.limit = limit
        self._digests: dict[str, None] = {}  # insertion order: the oldest are dropped first
        self._dirty = False
        if path is not None and is_ours(path):
            self._digests = dict.fromkeys(self._read(path))

    def _read(self, path: Path) -> list[str]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("fingerprint") != self.fingerprint:
            return []
        digests = data.get("digests")
        if not isinstance(digests, list) or not all(isinstance(d, str) for d in digests):
            return []
        return digests[-self.limit :]

    def __contains__(self, digest: str) -> bool:
        return digest in self._digests

    def add(self, digest: str) -> None:
        if digest in self._digests:
            return
        self._digests[digest] = None
        while len(self._digests) > self.limit:
            del self._digests[next(iter(self._digests))]
        self._dirty = True

    def save(self) -> None:
        """Write the set if it changed; a failure leaves the old file (or none) and says nothing."""
        if not self._dirty or self.path is None:
            return
        body = json.dumps({"format": FORMAT, "fingerprint": self.fingerprint, "digests": list(self._digests)})
        if write_private(self.path, body):
            self._dirty = False


def write_private(path: Path, body: str) -> bool:
    """Write ``body`` to ``path`` through a private temporary file renamed into place (a reader
    never sees half a file); False, and the old file (or none) left, when that fails."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(tmp, path)  # replaces a foreign or corrupted file too: the directory is ours
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
