"""Loopback load test of `skillc serve`: 2000 tools/call (searchDrinks, card taps) from 20 concurrent clients.

The server runs as its own process (`python -m skillc serve`, state in a tmp folder) on a free
127.0.0.1 port; the clients are 20 asyncio tasks, each with its own keep-alive HTTP connection,
posting stateless JSON-RPC `tools/call` requests. Every answer is checked (HTTP 200, a result,
isError false; for searchDrinks the expected total and a card exactly when the client can show
one); the run fails if any call is lost or fails.

Each kind of client is one run against the same server:
- ``legacy``: 2025-era requests (no capabilities declared): the card is mounted;
- ``apps``: 2026-07-28 requests from an MCP Apps host: the card is mounted;
- ``plain``: 2026-07-28 requests from a client without MCP Apps: no card is mounted;
- ``taps``: the per-event cost of cards on the shared store. Each client first mounts a card of
  its own (one legacy searchDrinks call, not timed), then its calls are `skillc_card_event` taps
  on that card, alternating between the first two drinks of the drink-list (nodes with a tap
  handler, read from the card's Render IR): each tap's onSelect moves ``selectedId`` to the other
  drink, so every tap changes the card's data and is written back (card lock, version read,
  versioned write). Each answer must also name onSelect as handled and carry patches. A client's
  taps ride the connection it mounted on, so with several workers they mostly reach the worker
  that holds the card; the lock and the version read happen on every tap all the same.

Each run is repeated for every worker count (``--workers 1,2``: `skillc serve --workers N`, one
port) and every state store: SQLite always, PostgreSQL too when ``--state`` or $SKILLC_STATE_URL
names one; the summary gives the calls/s of N workers against 1, and each worker's RSS after the
run. ``--quick`` is a small smoke run (200 legacy calls, 8 clients) that tests run.

    .venv/bin/python bench/serve_load.py [--calls 2000] [--clients 20] [--kinds legacy,apps,plain,taps]
        [--workers 1,2] [--state postgresql://...] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
COFFEE = ROOT / "examples" / "coffee-skill"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TARGET_RATE, TARGET_P99_MS = 400.0, 20.0
MODERN = "2026-07-28"
APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
KINDS = ("legacy", "apps", "plain", "taps")
CARD_EVENT_TOOL = "skillc_card_event"


def request_for(kind: str, request_id: int) -> tuple[dict[str, object], dict[str, str]]:
    """The JSON-RPC body and the extra headers of one searchDrinks call by a ``kind`` client."""
    params: dict[str, object] = {"name": "searchDrinks", "arguments": {"keyword": "latte"}}
    headers: dict[str, str] = {}
    if kind != "legacy":
        caps = {"extensions": APPS} if kind == "apps" else {}
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps,
        }
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "searchDrinks"}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, headers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(proc: subprocess.Popen[str], timeout_s: float = 120.0) -> list[int]:
    """Wait for the "MCP endpoint" line (every worker listens); the pids that serve (the workers',
    or the server's own). stderr keeps being drained so the request log never blocks the server."""
    lines: list[str] = []
    up = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if not up.is_set():
                lines.append(line)
                if line.startswith("MCP endpoint:"):
                    up.set()
        up.set()

    threading.Thread(target=drain, daemon=True).start()
    if not up.wait(timeout_s) or proc.poll() is not None:
        sys.exit(f"the server did not come up:\n{''.join(lines)}")
    workers = [int(m.group(1)) for line in lines if (m := re.match(r"worker \d+/\d+ ready pid (\d+)", line))]
    return workers or [proc.pid]


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` (Linux /proc); 0 where there is none."""
    try:
        status = open(f"/proc/{pid}/status", encoding="ascii").read()  # noqa: SIM115 - read at once
    except OSError:
        return 0.0
    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) / 1024 if m else 0.0


def tap_request(card_id: str, node_id: str, request_id: int) -> tuple[dict[str, object], dict[str, str]]:
    """The JSON-RPC body and the extra headers (none: a 2025-era request, as the card view's host
    sends) of one tap on ``node_id`` of the card ``card_id``."""
    arguments = {"cardId": card_id, "nodeId": node_id, "event": "tap"}
    params = {"name": CARD_EVENT_TOOL, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, {}


def tappable(node: dict[str, object]) -> list[str]:
    """The ids of the Render IR nodes under (and including) ``node`` that have a tap handler, in order."""
    found: list[str] = []
    events = node.get("events")
    if isinstance(events, dict) and "tap" in events:
        found.append(str(node["id"]))
    children = node.get("children")
    for child in children if isinstance(children, list) else []:
        if isinstance(child, dict):
            found += tappable(child)
    return found


async def mount(http: httpx.AsyncClient, url: str, failures: list[str]) -> tuple[str, list[str]] | None:
    """A card of the client's own (one legacy searchDrinks call): its id and the two nodes its taps
    alternate between (the first two drinks); None, with the reason in ``failures``, when it fails."""
    body, headers = request_for("legacy", 0)
    try:
        reply = await http.post(url, json=body, headers=headers)
        data = reply.json()
        card = ((data.get("result") or {}).get("_meta") or {}).get("skillc/card") or {}
        nodes = tappable((card.get("document") or {}).get("root") or {})
        if reply.status_code == 200 and card.get("cardId") and len(nodes) >= 2:
            return str(card["cardId"]), nodes[:2]
        failures.append(f"mount {reply.status_code}: {str(data)[:200]}")
    except Exception as err:
        failures.append(f"mount {type(err).__name__}: {err}")
    return None


def answered(kind: str, status: int, data: dict[str, object]) -> bool:
    """Whether a ``kind`` client's call was answered as it should be."""
    result = data.get("result") or {}
    if not isinstance(result, dict) or status != 200 or result.get("isError") is not False:
        return False
    content = result.get("structuredContent") or {}
    if kind == "taps":  # onSelect ran and moved the selection: the card's data changed
        return content.get("handled") == ["onSelect"] and bool(content.get("patches"))
    return content.get("total") == 3 and ("skillc/card" in (result.get("_meta") or {})) == (kind != "plain")


async def client(
    kind: str,
    http: httpx.AsyncClient,
    url: str,
    calls: int,
    card: tuple[str, list[str]] | None,
    latencies: list[float],
    failures: list[str],
) -> None:
    for i in range(calls):
        if kind == "taps":
            if card is None:  # the mount failed (counted): its taps are lost
                return
            body, headers = tap_request(card[0], card[1][i % 2], i + 1)
        else:
            body, headers = request_for(kind, i + 1)
        started = time.perf_counter()
        try:
            reply = await http.post(url, json=body, headers=headers)
            data = reply.json()
            if not answered(kind, reply.status_code, data):
                failures.append(f"{reply.status_code}: {str(data)[:200]}")
        except Exception as err:
            failures.append(f"{type(err).__name__}: {err}")
        latencies.append((time.perf_counter() - started) * 1000)


async def load(kind: str, url: str, calls: int, clients: int) -> tuple[list[float], list[str], float]:
    """``calls`` calls of a ``kind`` shared by ``clients`` clients; ``taps`` clients mount their
    cards first, outside the time measured."""
    latencies: list[float] = []
    failures: list[str] = []
    per = [calls // clients + (1 if i < calls % clients else 0) for i in range(clients)]
    async with contextlib.AsyncExitStack() as stack:
        https = [await stack.enter_async_context(httpx.AsyncClient(headers=HEADERS, timeout=30)) for _ in per]
        cards: list[tuple[str, list[str]] | None] = [None] * clients
        if kind == "taps":
            cards = list(await asyncio.gather(*(mount(http, url, failures) for http in https)))
        started = time.perf_counter()
        runs = zip(https, per, cards, strict=True)
        await asyncio.gather(*(client(kind, http, url, n, card, latencies, failures) for http, n, card in runs))
        return latencies, failures, time.perf_counter() - started


def report(kind: str, clients: int, calls: int, latencies: list[float], failures: list[str], elapsed: float) -> float:
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    rate = len(latencies) / elapsed
    what = f"{CARD_EVENT_TOOL} (tap) on their own cards" if kind == "taps" else "searchDrinks"
    print(f"skillc serve, loopback, {kind} clients: {len(latencies)} tools/call {what} from {clients} clients")
    print(f"  completed {len(latencies) - len(failures)}, failed {len(failures)}, lost {calls - len(latencies)}")
    worst = latencies[-1]
    print(f"  {rate:.0f} calls/s over {elapsed:.2f} s; latency p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms")
    rate_ratio, p99_ratio = rate / TARGET_RATE, p99 / TARGET_P99_MS
    print(
        f"  vs target: {rate_ratio:.2f}x of {TARGET_RATE:.0f} calls/s; p99 {p99_ratio:.2f}x of {TARGET_P99_MS:.0f} ms"
    )
    for failure in failures[:5]:
        print("  failure:", failure)
    return rate


def run_server(
    kinds: list[str], calls: int, clients: int, warmup: int, workers: int, state_args: list[str]
) -> tuple[dict[str, float], bool]:
    """One `skillc serve --workers N` under load for each kind: the calls/s by kind, and whether any failed."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    bad = False
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as state:
        command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--port", str(port), "--state-dir", state]
        command += ["--workers", str(workers), *state_args]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            pids = wait_ready(proc)
            for kind in kinds:
                asyncio.run(load(kind, url, warmup, clients))  # warm-up: compiled code, connections, sqlite pages
                latencies, failures, elapsed = asyncio.run(load(kind, url, calls, clients))
                rates[kind] = report(kind, clients, calls, latencies, failures, elapsed)
                bad = bad or bool(failures) or len(latencies) != calls
            print(f"  RSS per worker after the run: {', '.join(f'{rss_mb(p):.0f} MB' for p in pids)}")
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    if "plain" in rates and "apps" in rates:
        print(f"  no card vs card (plain / apps): {rates['plain'] / rates['apps']:.2f}x the calls/s")
    if "taps" in rates and "legacy" in rates:
        print(f"  tap vs mount (taps / legacy): {rates['taps'] / rates['legacy']:.2f}x the calls/s")
    return rates, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated: {', '.join(KINDS)}")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (serve --workers)")
    parser.add_argument(
        "--state", default=os.environ.get("SKILLC_STATE_URL") or None, help="a PostgreSQL URL: run on it too"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 legacy calls from 8 clients")
    opts = parser.parse_args()
    if opts.quick:
        opts.calls, opts.clients, opts.kinds = 200, 8, "legacy"
    kinds = [k.strip() for k in opts.kinds.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)} (choose from {', '.join(KINDS)})")
    try:
        counts = [int(n) for n in opts.workers.split(",") if n.strip()]
    except ValueError:
        parser.error(f"--workers {opts.workers}: comma-separated numbers, e.g. 1,2")
    if not counts or min(counts) < 1:
        parser.error(f"--workers {opts.workers}: comma-separated numbers from 1, e.g. 1,2")
    stores: list[tuple[str, list[str]]] = [("sqlite", [])]
    if opts.state and not opts.state.startswith("sqlite"):
        stores.append(("postgresql", ["--state", opts.state]))
    warmup = 20 if opts.quick else 100
    bad = False
    summary: list[str] = []
    for store, state_args in stores:
        by_workers: dict[int, dict[str, float]] = {}
        for n in counts:
            print(f"== {store} store, {n} worker{'s' if n > 1 else ''}")
            by_workers[n], failed = run_server(kinds, opts.calls, opts.clients, warmup, n, state_args)
            bad = bad or failed
        first = counts[0]
        for n in counts[1:]:
            for kind in kinds:
                one, many = by_workers[first][kind], by_workers[n][kind]
                summary.append(
                    f"{store}, {kind}: {n} workers {many:.0f} calls/s vs {first} worker {one:.0f} calls/s:"
                    f" {many / one:.2f}x"
                )
    if summary:
        print("== workers")
        for line in summary:
            print("  " + line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
