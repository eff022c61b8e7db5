"""What ``GET /metrics`` shows, in the Prometheus text format (the ``prometheus_client`` library).

The instruments live here, at module level, so a hook elsewhere is one cheap call (a counter's
``inc`` or a histogram's ``observe``: no allocation per call beyond the library's own). Labels are
bounded: a tool label is a served tool's name or ``other`` (a client may call any name), a method
label one of the MCP methods the server answers.

Several workers (``serve --workers N``): each is a process with its own counters. The supervisor
gives every worker the same empty folder in ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's
multiprocess mode, read when the library is first imported, so before anything here runs); each
worker writes its values to files there, and whichever worker answers a scrape sums every worker's
files, including those of workers that died (counters never go backwards across a restart). The
pool gauges are summed over the live workers only. One process (no supervisor) uses the library's
default registry, with its process and platform collectors (CPU seconds, resident memory).
See docs/deploy.md, "Metrics".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as _multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from skillc.runtime.state.store import observe_store
from skillc.threadnames import named

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
OTHER = "other"
# Tool calls run from about a millisecond (a cached read) to the API timeout (300 s by default).
_CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
# One statement or transaction: sub-millisecond on SQLite, a few ms on a PostgreSQL nearby.
_STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
_METHODS = frozenset(
    {
        "tools/call",
        "tools/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "logging/setLevel",
    }
)

REQUESTS = Counter(
    "skillc_requests",
    "MCP requests answered, by method, tool (tools/call only) and outcome",
    ("method", "tool", "outcome"),
)
REQUEST_SECONDS = Histogram(
    "skillc_request_duration_seconds",
    "Time in the MCP request handler, by method and tool (tools/call only)",
    ("method", "tool"),
    buckets=_CALL_BUCKETS,
)
CARD_MOUNTS = Counter(
    "skillc_card_mounts",
    "Cards a tool call drew, by tool and result: mounted, or fallback (the card failed; a plain card instead)",
    ("tool", "result"),
)
CONSENT = Counter(
    "skillc_consent",
    "Consent decisions for L3/L4 calls: asked, given, declined (in the card) or refused",
    ("decision",),
)
EVENTS_DROPPED = Counter(
    "skillc_events_dropped",
    "Session events dropped, by reason: overflow (the oldest, past --max-events), lost (a store fault kept "
    "them out after the call ran)",
    ("reason",),
)
STORE_PING_SECONDS = Histogram(
    "skillc_store_ping_seconds",
    "Round trips of SELECT 1 to the state store, one per worker every few seconds (a failed one counts too)",
    buckets=_STORE_BUCKETS,
)
STORE_SECONDS = Histogram(
    "skillc_store_operation_seconds",
    "State-store operations as the server's code waits for them, by engine and operation: read / write "
    "(one statement in its own transaction, pool wait included) or transaction",
    ("engine", "operation"),
    buckets=_STORE_BUCKETS,
)
STORE_PING_FAILURES = Counter("skillc_store_ping_failures", "Store pings that failed or timed out")
POOL_WAIT_SECONDS = Counter(
    "skillc_store_pool_wait_seconds", "Time calls waited for a PostgreSQL pool connection (psycopg_pool)"
)
POOL_USAGE_SECONDS = Counter(
    "skillc_store_pool_usage_seconds", "Time PostgreSQL pool connections were lent out (psycopg_pool)"
)
POOL_REQUESTS = Counter("skillc_store_pool_requests", "Connections asked of the PostgreSQL pool (psycopg_pool)")
POOL = Gauge(
    "skillc_store_pool_connections",
    "PostgreSQL pool connections of the live workers: size (open), available (idle), max, waiting (requests queued)",
    ("state",),
    multiprocess_mode="livesum",
)
HTTP_REQUESTS = Counter(
    "skillc_http_requests",
    "HTTP requests other than MCP POSTs (probes, scrapes, pages), by method, path and status",
    ("method", "path", "status"),
)

_tools: frozenset[str] = frozenset()
STORE_WATCH_S = 5.0


def serve_tools(names: Iterable[str]) -> None:
    """The tool names the server lists: the only values of the ``tool`` label besides ``other``.
    Also where a server starts timing its store operations."""
    global _tools
    _tools = _tools | frozenset(names)
    observe_store(_store_operation)


def _store_operation(engine: str, operation: str, seconds: float) -> None:
    STORE_SECONDS.labels(engine, operation).observe(seconds)


def tool_label(name: str | None) -> str:
    if name is None:
        return ""
    return name if name in _tools else OTHER


def observe_request(method: str, tool: str | None, outcome: str, ms: float) -> None:
    """One MCP request answered (the request log's line, skillc.server.request_log)."""
    method = method if method in _METHODS else OTHER
    label = tool_label(tool)
    REQUESTS.labels(method, label, outcome).inc()
    REQUEST_SECONDS.labels(method, label).observe(ms / 1000)


_pool_seen: dict[str, float] = {"requests_wait_ms": 0.0, "usage_ms": 0.0, "requests_num": 0.0}
_pool_lock = threading.Lock()


def refresh_pool() -> None:
    """Read this process's PostgreSQL pools into the pool gauges and counters (psycopg_pool's own
    figures: its gauges as they are, its running totals as what they grew by since the last look)."""
    totals = {"size": 0, "available": 0, "max": 0, "waiting": 0}
    sums = dict.fromkeys(_pool_seen, 0.0)
    for stats in _pool_stats():
        totals["size"] += stats.get("pool_size", 0)
        totals["available"] += stats.get("pool_available", 0)
        totals["max"] += stats.get("pool_max", 0)
        totals["waiting"] += stats.get("requests_waiting", 0)
        for key in sums:
            sums[key] += stats.get(key, 0)
    for state, value in totals.items():
        POOL.labels(state).set(value)
    with _pool_lock:
        grown = {k: max(0.0, v - _pool_seen[k]) for k, v in sums.items()}
        _pool_seen.update(sums)
    POOL_WAIT_SECONDS.inc(grown["requests_wait_ms"] / 1000)
    POOL_USAGE_SECONDS.inc(grown["usage_ms"] / 1000)
    POOL_REQUESTS.inc(grown["requests_num"])


def ping_store(ping: Callable[[], object]) -> None:
    """Time one ``ping`` (it returns None when the store answered, else why not)."""
    started = time.perf_counter()
    try:
        failed = ping() is not None
    except Exception:
        failed = True
    STORE_PING_SECONDS.observe(time.perf_counter() - started)
    if failed:
        STORE_PING_FAILURES.inc()


def _pool_stats() -> list[dict[str, int]]:
    """psycopg_pool's counters of each PostgreSQL pool this process opened (SQLite has none)."""
    from skillc.runtime import state

    with state._pools_lock:
        stores = [store for (_url, pid), store in state._pools.items() if pid == os.getpid()]
    out = []
    for store in stores:
        pool = getattr(store, "_pool", None)  # PostgresStore's psycopg_pool.ConnectionPool
        if pool is not None and hasattr(pool, "get_stats"):
            out.append(dict(pool.get_stats()))
    return out


class StoreWatch:
    """Every few seconds while the server runs, in each worker: ping the store and read the pool.
    A scrape reaches one worker, and the others' figures must be current in the shared folder too."""

    def __init__(self, ping: Callable[[], object], every_s: float = STORE_WATCH_S) -> None:
        self._ping = ping
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=named(self._loop), name="skillc-metrics", daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            ping_store(self._ping)
            refresh_pool()
            self._stop.wait(self._every_s)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._every_s + 5.0)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def exposition() -> bytes:
    """The text a scrape gets: every worker's values (multiprocess mode), else this process's."""
    refresh_pool()
    folder = multiprocess_dir()
    if folder is None:
        from prometheus_client import REGISTRY

        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    _multiprocess.MultiProcessCollector(registry, path=folder)  # type: ignore[no-untyped-call]
    return generate_latest(registry)


def worker_exited(pid: int, folder: str) -> None:
    """A worker is gone: its live gauges leave the sums (its counters stay)."""
    _multiprocess.mark_process_dead(pid, folder)  # type: ignore[no-untyped-call]
