"""Loopback load test of `skillc serve`: 2000 tools/call (searchDrinks) from 20 concurrent clients.

The server runs as its own process (`python -m skillc serve`, state in a tmp folder) on a free
127.0.0.1 port; the clients are 20 asyncio tasks, each with its own keep-alive HTTP connection,
posting stateless JSON-RPC `tools/call` requests. Every answer is checked (HTTP 200, a result,
isError false, the expected total); the run fails if any call is lost or fails.

    .venv/bin/python bench/serve_load.py [--calls 2000] [--clients 20]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
COFFEE = ROOT / "examples" / "coffee-skill"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TARGET_RATE, TARGET_P99_MS = 400.0, 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    body = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited with {proc.returncode}")
        try:
            if httpx.post(url, json=body, headers=HEADERS, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    sys.exit("the server did not come up")


async def client(url: str, calls: int, latencies: list[float], failures: list[str]) -> None:
    args = {"keyword": "latte"}
    async with httpx.AsyncClient(headers=HEADERS, timeout=30) as http:
        for i in range(calls):
            body = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "searchDrinks", "arguments": args},
            }
            started = time.perf_counter()
            try:
                reply = await http.post(url, json=body)
                data = reply.json()
                result = data.get("result") or {}
                ok = reply.status_code == 200 and result.get("isError") is False
                ok = ok and result.get("structuredContent", {}).get("total") == 3
                if not ok:
                    failures.append(f"{reply.status_code}: {str(data)[:200]}")
            except Exception as err:
                failures.append(f"{type(err).__name__}: {err}")
            latencies.append((time.perf_counter() - started) * 1000)


async def load(url: str, calls: int, clients: int) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    failures: list[str] = []
    per = [calls // clients + (1 if i < calls % clients else 0) for i in range(clients)]
    started = time.perf_counter()
    await asyncio.gather(*(client(url, n, latencies, failures) for n in per))
    return latencies, failures, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=20)
    opts = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with tempfile.TemporaryDirectory() as state:
        command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--port", str(port), "--state-dir", state]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(url, proc)
            asyncio.run(load(url, 100, opts.clients))  # warm-up: compiled code, connections, sqlite pages
            latencies, failures, elapsed = asyncio.run(load(url, opts.calls, opts.clients))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    rate = len(latencies) / elapsed
    print(f"skillc serve, loopback: {len(latencies)} tools/call searchDrinks from {opts.clients} clients")
    print(f"  completed {len(latencies) - len(failures)}, failed {len(failures)}, lost {opts.calls - len(latencies)}")
    worst = latencies[-1]
    print(f"  {rate:.0f} calls/s over {elapsed:.2f} s; latency p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms")
    rate_ratio, p99_ratio = rate / TARGET_RATE, p99 / TARGET_P99_MS
    print(
        f"  vs target: {rate_ratio:.2f}x of {TARGET_RATE:.0f} calls/s; p99 {p99_ratio:.2f}x of {TARGET_P99_MS:.0f} ms"
    )
    for failure in failures[:5]:
        print("  failure:", failure)
    sys.exit(1 if failures or len(latencies) != opts.calls else 0)


if __name__ == "__main__":
    main()
