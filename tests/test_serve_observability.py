"""What an operator watches (docs/deploy.md, "Metrics" and "Logs"): ``GET /metrics`` in the
Prometheus text format, summed over every worker; request lines with a request id, the W3C trace
context of the request's ``_meta.traceparent``, and the worker and instance; and under
``--log-format json`` every line a real ``skillc serve`` writes on stderr is one JSON object,
a traceback included."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from skillc.runtime.config import RuntimeConfig
from skillc.server.events import EventLimits
from skillc.server.request_log import HttpRecord, RequestRecord, parse_traceparent
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, ROOT, request_records
from tests.waiting import PATIENCE_S, wait_until

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SLOW = ROOT / "tests" / "fixtures" / "serve-workers" / "slow-skill"


def call(url: str, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None, **headers: str) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return httpx.post(url, json=body, headers={**HEADERS, **headers}, timeout=60)


def samples(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``GET /metrics``, parsed by prometheus_client's own parser."""
    reply = httpx.get(f"{base}/metrics", timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/plain; version=")
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(reply.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(parsed: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return parsed.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def coffee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("obs")))
    with ServeHandle.start(options) as handle:
        yield handle


def base_of(handle: ServeHandle) -> str:
    return f"http://127.0.0.1:{handle.port}"


def test_metrics_parse_and_count_the_calls_this_test_made(coffee: ServeHandle) -> None:
    before = samples(base_of(coffee))
    for _ in range(3):
        reply = call(coffee.url, "searchDrinks", {"keyword": "latte"})
        assert reply.status_code == 200 and reply.json()["result"]["isError"] is False
    bad = call(coffee.url, "searchDrinks", {"limit": 99})  # breaks the input schema: an isError result
    assert bad.json()["result"]["isError"] is True
    call(coffee.url, "no-such-tool-" + os.urandom(4).hex(), {})  # counted as "other"
    assert httpx.get(f"{base_of(coffee)}/healthz", timeout=30).status_code == 200
    after = samples(base_of(coffee))

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    ok = {"method": "tools/call", "tool": "searchDrinks", "outcome": "ok"}
    assert grew("skillc_requests_total", **ok) == 3
    assert grew("skillc_requests_total", method="tools/call", tool="searchDrinks", outcome="error") == 1
    assert (
        sum(
            grew("skillc_requests_total", method="tools/call", tool="other", outcome=o)
            for o in ("error", "protocol_error")
        )
        == 1
    )
    assert grew("skillc_request_duration_seconds_count", method="tools/call", tool="searchDrinks") == 4
    assert grew("skillc_request_duration_seconds_sum", method="tools/call", tool="searchDrinks") > 0
    assert grew("skillc_http_requests_total", method="GET", path="/healthz", status="200") == 1
    # A made-up tool name never becomes a label: the label set stays the served tools (and "other").
    tools = {dict(labels).get("tool", "") for (name, labels) in after if name == "skillc_requests_total"}
    assert not [t for t in tools if t.startswith("no-such-tool")], tools
    # Each call's events are one store transaction at least, timed on the engine the suite half uses
    # (on PostgreSQL one statement in its own transaction, timed as a write).
    config = coffee.prepared.config
    engine = "postgresql" if config is not None and (config.state_url or "").startswith("postgresql") else "sqlite"
    operation = "write" if engine == "postgresql" else "transaction"
    assert grew("skillc_store_operation_seconds_count", engine=engine, operation=operation) >= 3
    assert grew("skillc_store_operation_seconds_sum", engine=engine, operation=operation) > 0


def test_a_card_mount_and_consent_are_counted(coffee: ServeHandle) -> None:
    before = samples(base_of(coffee))
    apps = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    meta = {"io.modelcontextprotocol/clientCapabilities": {"extensions": apps}}
    # A host that shows cards: the search draws its card. confirmOrder is L3: a host that cannot
    # elicit but shows cards is asked in the card.
    call(coffee.url, "searchDrinks", {"keyword": "latte"}, meta)
    call(coffee.url, "confirmOrder", {"drinkId": "d02", "size": "grande"}, meta)
    after = samples(base_of(coffee))
    mounted = sum(
        value(after, "skillc_card_mounts_total", tool=t, result="mounted")
        - value(before, "skillc_card_mounts_total", tool=t, result="mounted")
        for t in ("searchDrinks", "confirmOrder")
    )
    consent = {
        d: value(after, "skillc_consent_total", decision=d) - value(before, "skillc_consent_total", decision=d)
        for d in ("asked", "given", "refused")
    }
    assert mounted >= 1, after
    assert consent["asked"] + consent["refused"] == 1, consent


def test_request_lines_carry_the_request_id_and_the_trace_context(coffee: ServeHandle) -> None:
    with request_records(http=True) as lines:
        traced = call(coffee.url, "searchDrinks", {}, {"traceparent": TRACEPARENT}, **{"x-request-id": "req-42"})
        untraced = call(coffee.url, "searchDrinks", {}, {"traceparent": TRACEPARENT.upper()})
        probe = httpx.get(f"{base_of(coffee)}/healthz", timeout=30)
    assert traced.headers["x-request-id"] == "req-42"
    fresh = untraced.headers["x-request-id"]
    assert len(fresh) == 16 and fresh != "req-42"
    calls = [r for r in lines if isinstance(r, RequestRecord)]
    assert [(r.request_id, r.trace_id, r.span_id, r.trace_flags) for r in calls] == [
        ("req-42", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "01"),
        (fresh, None, None, None),  # upper-case hex is not a valid traceparent
    ]
    gets = [r for r in lines if isinstance(r, HttpRecord)]
    assert [(r.http_method, r.path, r.status, r.request_id) for r in gets] == [
        ("GET", "/healthz", 200, probe.headers["x-request-id"])
    ]


@pytest.mark.parametrize(
    "value",
    [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero parent id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # version ff
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  # version 00 has 4 fields
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  # short trace id
        42,
        "x" * 300,
    ],
)
def test_an_invalid_traceparent_is_ignored(value: object) -> None:
    assert parse_traceparent(value) is None


def test_a_later_traceparent_version_keeps_its_first_four_fields() -> None:
    parsed = parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future")
    assert parsed is not None and parsed.trace_flags == "00"


# -- real `skillc serve` processes ------------------------------------------------------------

# A real `skillc serve`, with /readyz made to fail once as a bug would: a warning, a line printed
# straight to stderr, and an exception out of the ASGI application (uvicorn logs its traceback).
_FAULTY = """
import sys, warnings
import skillc.server.health as health

async def readyz(self, request):
    warnings.warn("a forced warning", RuntimeWarning)
    print("a line printed to stderr", file=sys.stderr)
    raise RuntimeError("a forced failure")

health.HealthEndpoints.readyz = readyz
from skillc.cli import main
sys.argv = ["skillc", *sys.argv[1:]]
main()
"""


@dataclass
class Process:
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    fresh: queue.Queue[str] = field(default_factory=queue.Queue)

    def wait_json(self, key: str, contains: str) -> dict[str, Any]:
        while True:
            try:
                line = self.fresh.get(timeout=PATIENCE_S)
            except queue.Empty:
                raise AssertionError("no such line in:\n" + "\n".join(self.lines)) from None
            try:
                body = json.loads(line)
            except ValueError:
                continue
            if contains in str(body.get(key, "")):
                return dict(body)


@contextmanager
def running(command: list[str], env: dict[str, str] | None = None) -> Iterator[Process]:
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    served = Process(proc)

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            served.lines.append(line.rstrip("\n"))
            served.fresh.put(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        reader.join(timeout=30)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLC_STATE_URL", "PROMETHEUS_MULTIPROC_DIR")}
    return {**env, **extra}


def endpoint(served: Process) -> str:
    banner = served.wait_json("message", "MCP endpoint: ")
    return str(banner["message"]).split("MCP endpoint: ")[1].split(" ")[0]


def test_every_stderr_line_of_serve_json_is_one_json_object(tmp_path: Path) -> None:
    command = [sys.executable, "-c", _FAULTY, "serve", str(COFFEE), "--port", "0", "--log-format", "json"]
    with running([*command, "--state-dir", str(tmp_path)], _env(SKILLC_INSTANCE="box-7")) as served:
        url = endpoint(served)
        base = url.removesuffix("/mcp")
        assert call(url, "searchDrinks", {}, {"traceparent": TRACEPARENT}).status_code == 200
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200
        assert httpx.get(f"{base}/readyz", timeout=30).status_code == 500
        failure = served.wait_json("exc", "RuntimeError: a forced failure")
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=PATIENCE_S) == 0
    records = [json.loads(line) for line in served.lines]  # every line parses, or this fails
    assert all(isinstance(r, dict) for r in records)
    assert all(r["instance"] == "box-7" and r["worker"] == 0 and r["pid"] == served.proc.pid for r in records)
    # The traceback is one record: its frames are in it, and no other line holds a piece of it.
    assert failure["level"] == "error" and "Traceback (most recent call last)" in failure["exc"]
    # uvicorn's own record (its logger, level and message), not its text re-read from stderr.
    assert (failure["logger"], failure["message"]) == ("uvicorn.error", "Exception in ASGI application")
    assert sum("a forced failure" in line for line in served.lines) == 1
    messages = [str(r.get("message", "")) for r in records]
    assert any("a forced warning" in m for m in messages)
    assert "a line printed to stderr" in messages
    assert any(m.startswith("serving coffee-skill") for m in messages)
    tool_lines = [r for r in records if r.get("method") == "tools/call"]
    assert len(tool_lines) == 1 and tool_lines[0]["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert tool_lines[0]["request_id"]
    gets = {(r.get("http_method"), r.get("path"), r.get("status")) for r in records}
    assert {("GET", "/healthz", 200), ("GET", "/readyz", 500)} <= gets


def test_metrics_sum_every_worker(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "skillc", "serve", str(SLOW), "--port", "0", "--workers", "2"]
    command += ["--state-dir", str(tmp_path), "--log-format", "json"]
    with running(command, _env()) as served:
        url = endpoint(served)
        base = url.removesuffix("/mcp")
        pids: set[int] = set()
        made = 0

        def both_workers_called() -> bool:
            nonlocal made
            # A fresh connection each time: the kernel spreads connections over the workers.
            with httpx.Client() as client:
                pids.add(client.get(f"{base}/healthz", timeout=30).json()["pid"])
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
                params = {"name": "napThenAnswer", "arguments": {"ms": 0, "token": f"t{made}"}}
                reply = client.post(url, json={**body, "params": params}, headers=HEADERS, timeout=60)
                assert reply.status_code == 200, reply.text
                made += 1
            return len(pids) == 2

        wait_until(both_workers_called, PATIENCE_S, "calls on both workers", every_s=0)
        parsed = samples(base)
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=PATIENCE_S) == 0
    nap = ("tool", "napThenAnswer")
    counted = sum(v for (name, labels), v in parsed.items() if name == "skillc_requests_total" and nap in labels)
    assert counted == made, (counted, made, pids)
    # The supervisor's lines and both workers' are JSON too, each naming its worker.
    records = [json.loads(line) for line in served.lines]
    assert {r["worker"] for r in records} == {0, 1, 2}
    assert value(parsed, "skillc_http_requests_total", method="GET", path="/healthz", status="200") == made


def test_events_dropped_past_the_session_bound_are_counted(tmp_path: Path) -> None:
    runtime = RuntimeConfig(state_dir=tmp_path)
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=runtime, events=EventLimits(max_events=1))
    with ServeHandle.start(options) as served:
        before = value(samples(base_of(served)), "skillc_events_dropped_total", reason="overflow")
        # One call writes two events at least (started, finished): the bound of one drops the first.
        reply = call(served.url, "searchDrinks", {})
        session = reply.json()["result"]["_meta"]["skillc/session"]
        call(served.url, "searchDrinks", {}, {"skillc/session": session})
        after = value(samples(base_of(served)), "skillc_events_dropped_total", reason="overflow")
    assert after - before >= 2


def test_store_ping_and_the_postgresql_pool_are_measured(tmp_path: Path, postgres_url: str) -> None:
    runtime = RuntimeConfig(state_dir=tmp_path, state_url=postgres_url)
    with ServeHandle.start(ServeOptions(paths=(COFFEE,), port=0, runtime=runtime)) as served:
        base = base_of(served)
        wait_until(lambda: value(samples(base), "skillc_store_ping_seconds_count") >= 1, PATIENCE_S, "a store ping")
        before = samples(base)
        for _ in range(3):
            assert call(served.url, "searchDrinks", {}).status_code == 200
        after = samples(base)
    # The pool of this process (every server of the test process shares it): open, and lent out.
    assert value(after, "skillc_store_pool_connections", state="max") >= 1
    assert value(after, "skillc_store_pool_connections", state="size") >= 1
    assert value(after, "skillc_store_pool_requests_total") > value(before, "skillc_store_pool_requests_total")
    assert value(after, "skillc_store_ping_seconds_sum") > 0
