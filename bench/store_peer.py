"""PostgreSQL against SQLite as the state store of `skillc serve`, paired in the same run.

Two servers of the coffee skill run side by side (`skillc serve --workers 1`), one on a SQLite file
and one on PostgreSQL (``--state URL``, or a throwaway cluster from Debian's binaries as the tests
start one). Their rounds alternate, so noise from the shared machine falls on both alike:

- sequential: one client, ``--calls`` searchDrinks calls per round (a 2025-era request: the card
  is mounted); latency p50 and the server's CPU per call (utime + stime from /proc);
- concurrent: ``--clients`` keep-alive clients (bench/http_load.py), calls/s and server CPU per call.

PostgreSQL's own CPU (its backends) is printed beside the server's for the PostgreSQL rounds: it
is the database's share, which SQLite spends inside the server process. Every answer is checked
(HTTP 200, no isError, the three drinks, a card).

    .venv/bin/python bench/store_peer.py [--rounds 5] [--calls 100] [--clients 20] [--load-calls 600]
        [--state postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import http_load, serve_load  # noqa: E402
from bench.scorecard import tree_cpu_s  # noqa: E402
from tests import postgres_cluster  # noqa: E402

COFFEE = ROOT / "examples" / "coffee-skill"


@dataclass
class Figures:
    latencies_ms: list[float] = field(default_factory=list)
    cpu_ms_per_call: list[float] = field(default_factory=list)
    db_cpu_ms_per_call: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    commits_per_call: list[float] = field(default_factory=list)
    load_cpu_ms_per_call: list[float] = field(default_factory=list)


@dataclass
class Served:
    name: str
    url: str
    proc: subprocess.Popen[str]
    db_pid: int | None  # the postmaster whose backends serve this server (PostgreSQL only)
    db_url: str | None
    figures: Figures = field(default_factory=Figures)


@contextlib.contextmanager
def postgres(given: str | None) -> Iterator[tuple[str, int | None]]:
    """The URL to run on and the postmaster's pid (None for a server we did not start)."""
    if given:
        yield given, None
        return
    bindir = postgres_cluster.find_bin()
    if bindir is None:
        sys.exit("no PostgreSQL: install postgresql (initdb, pg_ctl) or pass --state postgresql://...")
    cluster = postgres_cluster.Cluster(bindir)
    try:
        url = cluster.start()
        pid = int((cluster.data / "postmaster.pid").read_text().split()[0])
        yield url, pid
    finally:
        cluster.stop()


@contextlib.contextmanager
def serve(name: str, state_args: list[str], db_pid: int | None) -> Iterator[Served]:
    port = serve_load.free_port()
    with tempfile.TemporaryDirectory() as state:
        command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--port", str(port), "--state-dir", state]
        proc = subprocess.Popen([*command, *state_args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            serve_load.wait_ready(proc)
            db_url = state_args[state_args.index("--state") + 1] if "--state" in state_args else None
            yield Served(name, f"http://127.0.0.1:{port}/mcp", proc, db_pid, db_url)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def db_cpu_s(served: Served) -> float:
    return tree_cpu_s(served.db_pid) if served.db_pid is not None else 0.0


def commits(served: Served) -> int:
    """Transactions committed in the server's database so far (PostgreSQL's statistics)."""
    if served.db_url is None:
        return 0
    import psycopg

    with psycopg.connect(served.db_url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").fetchone()
    return int(row[0]) if row else 0


def check(status: int, data: object) -> str | None:
    result = (data.get("result") or {}) if isinstance(data, dict) else {}
    ok = status == 200 and result.get("isError") is False
    ok = (
        ok
        and (result.get("structuredContent") or {}).get("total") == 3
        and "skillc/card" in (result.get("_meta") or {})
    )
    return None if ok else f"{status}: {str(data)[:300]}"


def sequential_round(served: Served, calls: int) -> None:
    with httpx.Client(headers=serve_load.HEADERS, timeout=30) as http:
        x0 = commits(served)
        c0, d0 = tree_cpu_s(served.proc.pid), db_cpu_s(served)
        for i in range(calls):
            body, headers = serve_load.request_for("legacy", i + 1)
            t0 = time.perf_counter()
            reply = http.post(served.url, json=body, headers=headers)
            served.figures.latencies_ms.append((time.perf_counter() - t0) * 1000)
            failure = check(reply.status_code, reply.json())
            if failure:
                sys.exit(f"{served.name}: {failure}")
        served.figures.cpu_ms_per_call.append((tree_cpu_s(served.proc.pid) - c0) * 1000 / calls)
        served.figures.db_cpu_ms_per_call.append((db_cpu_s(served) - d0) * 1000 / calls)
    if served.db_url is not None:
        # Each count's own connection commits twice (the flush, the read): not the server's.
        served.figures.commits_per_call.append((commits(served) - x0 - 2) / calls)


def load_round(served: Served, calls: int, clients: int) -> None:
    requests = [http_load.encode(served.url, *serve_load.request_for("legacy", i + 1)) for i in range(calls)]
    c0 = tree_cpu_s(served.proc.pid)
    result = asyncio.run(http_load.load(served.url, requests, clients, check))
    if result.failures or len(result.latencies_ms) != calls:
        sys.exit(f"{served.name}: {len(result.failures)} failed: {result.failures[:1]}")
    served.figures.rates.append(calls / result.elapsed_s)
    served.figures.load_cpu_ms_per_call.append((tree_cpu_s(served.proc.pid) - c0) * 1000 / calls)


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100, help="sequential calls per round")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--load-calls", type=int, default=600, help="concurrent calls per round (0: none)")
    parser.add_argument("--state", default=None, help="a PostgreSQL URL (default: a throwaway cluster)")
    parser.add_argument("--serve-arg", action="append", default=[], help="an extra `skillc serve` argument")
    opts = parser.parse_args()
    with postgres(opts.state) as (pg_url, pg_pid), contextlib.ExitStack() as stack:
        lite = stack.enter_context(serve("sqlite", opts.serve_arg, None))
        pg = stack.enter_context(serve("postgresql", ["--state", pg_url, *opts.serve_arg], pg_pid))
        for served in (lite, pg):  # warm-up: compiled code, pool, pages
            sequential_round(served, 30)
            served.figures = Figures()
        for r in range(opts.rounds):
            pair = (lite, pg) if r % 2 == 0 else (pg, lite)
            for served in pair:
                sequential_round(served, opts.calls)
            if opts.load_calls:
                for served in pair:
                    load_round(served, opts.load_calls, opts.clients)
        print(
            f"state store peer, coffee searchDrinks with a card, {opts.rounds} interleaved rounds (pid {os.getpid()})"
        )
        for served in (lite, pg):
            f = served.figures
            db = f" (+ PostgreSQL backends {med(f.db_cpu_ms_per_call):.2f} ms)" if served.db_pid else ""
            if f.commits_per_call:
                db += f", {med(f.commits_per_call):.1f} transactions/call"
            print(
                f"  {served.name:10} sequential p50 {med(f.latencies_ms):.2f} ms,"
                f" server CPU {med(f.cpu_ms_per_call):.2f} ms/call{db}"
            )
            if f.rates:
                print(
                    f"  {'':10} {opts.clients} clients {med(f.rates):.0f} calls/s, server CPU"
                    f" {med(f.load_cpu_ms_per_call):.2f} ms/call"
                )
        a, b = lite.figures, pg.figures
        print("  postgresql / sqlite (goal <= 1.2x):")
        print(f"    p50 {med(b.latencies_ms) / med(a.latencies_ms):.2f}x")
        print(f"    server CPU per call {med(b.cpu_ms_per_call) / med(a.cpu_ms_per_call):.2f}x")
        if a.rates:
            print(f"    calls/s at {opts.clients} clients {med(b.rates) / med(a.rates):.2f}x (higher is better)")
            load_ratio = med(b.load_cpu_ms_per_call) / med(a.load_cpu_ms_per_call)
            print(f"    server CPU per call at {opts.clients} clients {load_ratio:.2f}x")


if __name__ == "__main__":
    main()
