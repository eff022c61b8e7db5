"""stderr of a serving process, whole: under ``--log-format json`` every line is one JSON object.

The request log (skillc.server.request_log) is one source of lines among several: the banner and
progress lines the command prints, uvicorn's and psycopg_pool's log records, Python warnings,
tracebacks (an exception in the ASGI application, an uncaught one in a thread), and whatever a
library writes to ``sys.stderr`` itself. :func:`install` routes them all:

- log records of any logger go through the root logger's handler, as JSON (request_log.json_line:
  a traceback stays one record, in ``exc``); uvicorn is told not to configure its own handlers
  (:func:`uvicorn_log_config`), so its records reach that handler too;
- warnings become log records (``logging.captureWarnings``);
- uncaught exceptions (main thread, other threads, "exception ignored" ones) are logged as one
  record each;
- ``sys.stderr`` itself is replaced by :class:`JsonLines`, which passes a JSON line through and
  wraps any other line in a record (``{"level": "info", "logger": "stderr", "message": ...}``);
  a traceback written there line by line (``traceback.print_exc``) is gathered into one record.

What a native library writes to file descriptor 2 directly bypasses Python and stays as it is.
Text mode (the default) changes nothing but the request log's handler.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from types import TracebackType
from typing import IO, Any

from skillc.server import request_log

_ROOT_HANDLER = "skillc-json-root"
# Lines that continue a traceback written line by line: its frames (indented), the chained
# exception headers, and blank lines between them.
_TRACEBACK_START = "Traceback (most recent call last):"
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")

_installed_json = False


class JsonLines:
    """A text stream standing in for ``sys.stderr``: each complete line reaches ``raw`` as JSON.

    It has no ``buffer`` on purpose: click (``click.echo(err=True)``) then writes through it
    instead of around it to the binary stream underneath."""

    encoding = "utf-8"
    errors = "backslashreplace"

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw
        self._pending = ""
        self._traceback: list[str] | None = None
        self._lock = threading.RLock()

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            while "\n" in self._pending:
                line, self._pending = self._pending.split("\n", 1)
                self._line(line)
        return len(text)

    def _line(self, line: str) -> None:
        if self._traceback is not None:
            self._traceback.append(line)
            continues = line.startswith((" ", "\t")) or not line.strip() or line.startswith(_CHAIN)
            if not continues and line != _TRACEBACK_START:
                self._out(self._record("error", self._traceback[-1], exc="\n".join(self._traceback)))
                self._traceback = None
            return
        if line == _TRACEBACK_START:
            self._traceback = [line]
            return
        stripped = line.strip()
        if not stripped:
            return
        if stripped.startswith("{") and stripped.endswith("}"):
            try:
                json.loads(stripped)
            except ValueError:
                pass
            else:
                self._out(stripped)
                return
        self._out(self._record("info", line))

    def _record(self, level: str, message: str, **extra: str) -> str:
        record = logging.LogRecord("stderr", logging.INFO, "", 0, message, None, None)
        record.levelname = level.upper()
        line = request_log.json_line(record)
        if extra:
            body = json.loads(line)
            body.update(extra)
            line = json.dumps(body, ensure_ascii=False, sort_keys=True)
        return line

    def _out(self, line: str) -> None:
        self.raw.write(line + "\n")
        self.raw.flush()

    def flush(self) -> None:
        self.raw.flush()

    def close_pending(self) -> None:
        """Write what is left: a last line without its newline, a traceback cut short."""
        with self._lock:
            if self._traceback is not None:
                lines, self._traceback = self._traceback, None
                self._out(self._record("error", lines[-1], exc="\n".join(lines)))
            if self._pending:
                line, self._pending = self._pending, ""
                self._line(line)

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.raw.fileno()


def _log_uncaught(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None, *, where: str = "uncaught"
) -> None:
    logging.getLogger("skillc").critical("%s: %s", where, value, exc_info=(kind, value, tb))


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    _log_uncaught(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback, where=f"uncaught in {name}")


def _unraisable_hook(unraisable: Any) -> None:
    value = unraisable.exc_value or unraisable.exc_type()
    where = unraisable.err_msg or "Exception ignored"
    _log_uncaught(unraisable.exc_type, value, unraisable.exc_traceback, where=where)


def install(fmt: request_log.LogFormat, stream: IO[str] | None = None) -> None:
    """Set up the logs of a serving process (``skillc serve``, each of its workers), and the name
    its PostgreSQL connections show (request_log.name_connections)."""
    global _installed_json
    raw = stream or sys.stderr
    if isinstance(raw, JsonLines):
        raw = raw.raw
    request_log.configure(fmt, raw)
    request_log.name_connections()
    if fmt != "json":
        return
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _ROOT_HANDLER]:
        root.removeHandler(old)
    handler = logging.StreamHandler(raw)
    handler.set_name(_ROOT_HANDLER)
    handler.setFormatter(request_log.JsonFormatter())
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught
    threading.excepthook = _thread_hook
    sys.unraisablehook = _unraisable_hook
    sys.stderr = JsonLines(raw)
    _installed_json = True


def uvicorn_log_config() -> dict[str, Any] | None:
    """What uvicorn.Config gets as ``log_config``: None under JSON (its records then reach the root
    handler above), else uvicorn's own default."""
    if _installed_json:
        return None
    from uvicorn.config import LOGGING_CONFIG

    return LOGGING_CONFIG


def flush() -> None:
    """Before the process ends: what the stderr stand-in still holds."""
    if isinstance(sys.stderr, JsonLines):
        sys.stderr.close_pending()
