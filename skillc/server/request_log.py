"""One structured line per request on stderr: what an operator greps and a log shipper parses.

Every MCP request the server answers (over HTTP or stdio) is one :class:`RequestRecord` on the
``skillc.server.requests`` logger, and so is every other HTTP request (a probe, a scrape, a page,
an MCP POST that never reached a handler: :class:`HttpRecord`, skillc.server.http_log).
:func:`configure` puts a handler on it that writes either a readable line or one JSON object per
line (``skillc serve --log-format json``). Nothing here knows about tools or skills: the server
fills the record, this module only writes it (and counts it, skillc.server.metrics).

Each line names where it came from and what it belongs to: the ``request_id`` of its HTTP request
(the client's ``X-Request-Id`` when it is a plain token, else a fresh one, sent back in the
response), the W3C trace context of the MCP request (``_meta.traceparent``: ``trace_id``,
``span_id``, ``trace_flags``, the names OpenTelemetry's log data model gives them), and the
``instance`` (``$SKILLC_INSTANCE``, else the host name), ``worker`` (1..N under ``--workers``,
0 for a single process) and ``pid`` of the process.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import socket
import sys
import traceback
from contextvars import ContextVar, Token
from dataclasses import asdict, dataclass, replace
from typing import IO, Literal

from skillc.server import metrics

REQUEST_LOGGER = "skillc.server.requests"
INSTANCE_ENV = "SKILLC_INSTANCE"
WORKER_ENV = "SKILLC_WORKER"
LogFormat = Literal["text", "json"]
# ok: answered; error: an isError result; refused: L3/L4 without consent; input_required: consent
# asked by elicitation; protocol_error: a JSON-RPC error (unknown resource, bad params).
Outcome = Literal["ok", "error", "refused", "input_required", "protocol_error"]

_log = logging.getLogger(REQUEST_LOGGER)
_HANDLER_NAME = "skillc-request-log"

# W3C Trace Context, version 00 exactly (a later version may add fields after a dash). Lower-case
# hex only; all-zero ids and version ff are invalid (https://www.w3.org/TR/trace-context/).
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[0-9a-zA-Z._~-]*)?")
_TRACEPARENT_MAX = 256
# A client's X-Request-Id is kept only as a short plain token: it lands in every line of the request.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
TRACEPARENT_META = "traceparent"
_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"})


@dataclass(frozen=True)
class TraceContext:
    trace_id: str
    span_id: str
    trace_flags: str


def parse_traceparent(value: object) -> TraceContext | None:
    """The trace context of a ``traceparent`` value, or None when it is not a valid one."""
    if not isinstance(value, str) or len(value) > _TRACEPARENT_MAX:
        return None
    m = _TRACEPARENT.fullmatch(value.strip())
    if m is None:
        return None
    version, trace_id, span_id, flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest) or set(trace_id) == {"0"} or set(span_id) == {"0"}:
        return None
    return TraceContext(trace_id, span_id, flags)


@dataclass
class RequestContext:
    """What every line of one request carries; one per HTTP request (stdio: per MCP request).
    Mutable on purpose: the SDK runs the handler in a task of its own, which sees this same object
    through a copy of the context, so the trace it binds and the lines it writes reach the HTTP
    layer's record too."""

    request_id: str | None = None
    trace: TraceContext | None = None
    lines: int = 0  # request lines written for it (an MCP POST with none gets an HTTP line)


_context: ContextVar[RequestContext | None] = ContextVar("skillc_request_context", default=None)


def request_id_of(header: str | None) -> str:
    """The client's id when it is a plain token, else a fresh one."""
    if header is not None and _REQUEST_ID.fullmatch(header):
        return header
    return secrets.token_hex(8)


def bind_request(request_id: str) -> tuple[RequestContext, Token[RequestContext | None]]:
    context = RequestContext(request_id=request_id)
    return context, _context.set(context)


def unbind(token: Token[RequestContext | None]) -> None:
    _context.reset(token)


def bind_trace(meta: object) -> None:
    """Carry the request's ``_meta.traceparent`` (when valid) into the lines written for it; a
    request without one carries none (over stdio, not the previous request's)."""
    value = meta.get(TRACEPARENT_META) if isinstance(meta, dict) else None
    trace = parse_traceparent(value) if value is not None else None
    context = _context.get()
    if context is not None:
        context.trace = trace
    elif trace is not None:
        _context.set(RequestContext(trace=trace))


def current() -> RequestContext | None:
    return _context.get()


@dataclass(frozen=True)
class _Process:
    instance: str
    worker: int
    pid: int


def _process() -> _Process:
    try:
        worker = int(os.environ.get(WORKER_ENV, "0"))
    except ValueError:
        worker = 0
    return _Process(os.environ.get(INSTANCE_ENV) or socket.gethostname(), worker, os.getpid())


_here = _process()
APPNAME_ENV = "PGAPPNAME"
_APPNAME_PREFIX = "skillc "


def name_connections() -> None:
    """Name this process's PostgreSQL connections (``application_name`` in pg_stat_activity:
    ``skillc INSTANCE/WORKER``) through libpq's ``PGAPPNAME``, which an ``application_name`` in the
    --state URL overrides. An operator's own ``PGAPPNAME`` is kept; one a supervisor set is
    replaced by the worker's."""
    current = os.environ.get(APPNAME_ENV)
    if current is not None and not current.startswith(_APPNAME_PREFIX):
        return
    here = _process()
    os.environ[APPNAME_ENV] = f"{_APPNAME_PREFIX}{here.instance}/{here.worker}"[:63]  # PostgreSQL keeps 63 bytes


@dataclass(frozen=True)
class RequestRecord:
    method: str
    ms: float
    outcome: Outcome
    tool: str | None = None
    skill: str | None = None
    protocol: str | None = None  # the negotiated protocol version of the request
    detail: str | None = None  # the first line of an error, a resource uri, a prompt name
    request_id: str | None = None  # filled in by emit, from the request's context
    trace_id: str | None = None
    span_id: str | None = None
    trace_flags: str | None = None

    def wire(self) -> dict[str, object]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["ms"] = round(self.ms, 2)
        return out

    def text(self) -> str:
        target = self.tool or self.detail or ""
        where = f" {self.skill}" if self.skill else ""
        extra = f" ({self.detail})" if self.detail and self.tool else ""
        line = f"{self.method} {target}{where} {self.outcome} {self.ms:.1f}ms{extra}".replace("  ", " ")
        return line + _ids_text(self.request_id, self.trace_id)


@dataclass(frozen=True)
class HttpRecord:
    """An HTTP request without an MCP request line: a probe, a scrape, a page, a refused POST."""

    http_method: str
    path: str
    status: int
    ms: float
    request_id: str | None = None

    def wire(self) -> dict[str, object]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["ms"] = round(self.ms, 2)
        return out

    def text(self) -> str:
        return f"{self.http_method} {self.path} {self.status} {self.ms:.1f}ms" + _ids_text(self.request_id, None)


def _ids_text(request_id: str | None, trace_id: str | None) -> str:
    return (f" req={request_id}" if request_id else "") + (f" trace={trace_id}" if trace_id else "")


def emit(record: RequestRecord) -> None:
    context = _context.get()
    if context is not None:
        context.lines += 1
        trace = context.trace
        record = replace(
            record,
            request_id=context.request_id,
            trace_id=trace.trace_id if trace else None,
            span_id=trace.span_id if trace else None,
            trace_flags=trace.trace_flags if trace else None,
        )
    metrics.observe_request(record.method, record.tool, record.outcome, record.ms)
    _log.info("%s", record.text(), extra={"skillc_request": record})


def emit_http(record: HttpRecord, metric_path: str) -> None:
    """``metric_path``: the path as the metric's label, a served path or ``other`` (bounded)."""
    method = record.http_method if record.http_method in _HTTP_METHODS else "other"
    metrics.HTTP_REQUESTS.labels(method, metric_path, str(record.status)).inc()
    _log.info("%s", record.text(), extra={"skillc_request": record})


def json_line(record: logging.LogRecord) -> str:
    """Any log record as one JSON object: a request line's fields, or the message with the logger's
    name; a traceback stays in the one record (``exc``); the process and the request's ids on each."""
    body: dict[str, object] = {"ts": round(record.created, 3), "level": record.levelname.lower()}
    request = getattr(record, "skillc_request", None)
    if isinstance(request, RequestRecord | HttpRecord):
        body.update(request.wire())
    else:
        body["logger"] = record.name
        body["message"] = record.getMessage().rstrip("\n")
        context = _context.get()
        if context is not None:
            if context.request_id is not None:
                body["request_id"] = context.request_id
            if context.trace is not None:
                body["trace_id"], body["span_id"] = context.trace.trace_id, context.trace.span_id
    if record.exc_info and record.exc_info[0] is not None:
        body["exc"] = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    elif record.exc_text:
        body["exc"] = record.exc_text
    if record.stack_info:
        body["stack"] = record.stack_info
    body.update(instance=_here.instance, worker=_here.worker, pid=_here.pid)
    return json.dumps(body, ensure_ascii=False, sort_keys=True, default=str)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json_line(record)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"skillc: {record.getMessage()}"


def configure(fmt: LogFormat = "text", stream: IO[str] | None = None) -> logging.Handler:
    """Write request lines to ``stream`` (stderr) in ``fmt``; replaces an earlier handler of ours."""
    global _here
    _here = _process()  # a worker sets its number in the environment before it configures
    for old in [h for h in _log.handlers if h.get_name() == _HANDLER_NAME]:
        _log.removeHandler(old)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(JsonFormatter() if fmt == "json" else _TextFormatter())
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False  # one line per request, not a second one from the root logger
    return handler
