"""Server CPU per tools/call searchDrinks, skillc serve beside the bare mcp SDK tool, interleaved.

Two servers run side by side for the whole run: `skillc serve examples/coffee-skill` (one
worker unless ``--workers``, state in a tmp folder) and ``bench/bare_mcp_server.py`` (the official
``mcp`` SDK, one tool returning three drinks, same transport). Each round sends a batch of
sequential calls of every kind in turn (the order rotates from round to round, so that neither
side always runs first after a pause) and reads each server's CPU (utime + stime of the server
and its children, /proc) around its batch:

- ``card``: a 2025-era request (no capabilities): skillc mounts the card;
- ``apps``: a 2026-07-28 request from an MCP Apps host: the card is mounted;
- ``plain``: a 2026-07-28 request from a client without MCP Apps: no card;
- ``bare``: the same legacy request to the bare SDK server.

Every answer is checked (HTTP 200, no error, the three drinks, the card exactly when expected).
The table gives, per kind, the server CPU ms per call over all its rounds (the kernel counts CPU in
clock ticks of 10 ms: a sum over the rounds, not a median of rounds that each round to a tick; a
side below one tick over all its calls counts as one), the median latency,
the ratio to the bare tool, the calls/s that CPU allows on two cores (2000 / ms), the payload
and the server's context switches per call (all its threads, /proc/<pid>/task/*/status). With
``--clients N`` (default 20) a concurrent phase follows, also interleaved: N keep-alive clients
(bench/http_load.py) on each of card and bare, calls/s by wall and per server CPU-second, p99 and
context switches per call: what a call costs more under load than alone is mostly the interpreter
lock changing hands between the server's threads, which these count.

    .venv/bin/python bench/callpath.py [--rounds 7] [--calls 40] [--clients 20] [--load-calls 600]
        [--workers 1] [--kinds card,apps,plain] [--threads] [--quick]

``--threads`` adds where each kind's CPU goes, by server thread (skillc names its threads for the
OS: the event loop, ``skillc-js`` for the API VM, ``skillc-card``, ``skillc-events`` for the events
writer, ...), from the same /proc readings around each batch.

The two-core development machine is shared: figures are noisy (±30 %); the ratio, measured in the
same rounds, is steadier than either side alone.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SKILL = ROOT / "examples" / "coffee-skill"
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
KINDS = ("card", "apps", "plain")
GOAL_RATIO = 2.0


def sibling(name: str) -> ModuleType:
    """A sibling bench script as a module (bench/ is not a package), loaded once."""
    key = f"bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def _stat_fields(stat: str) -> list[str]:
    """The fields of a /proc stat line after the command name (which may hold spaces and ')'):
    [0] state, [1] parent pid, [11] utime, [12] stime."""
    return stat[stat.rindex(")") + 2 :].split()


def _tree_ticks(pid: int) -> dict[int, int]:
    """The clock ticks (utime + stime) of ``pid`` and of each of its live descendants (the workers)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = _stat_fields(stat)
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    return {p: ticks.get(p, 0) for p in tree}


def tree_cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` and its live descendants (the workers), from /proc."""
    return sum(_tree_ticks(pid).values()) * CLOCK_TICK_S


def tree_usage(pid: int) -> tuple[float, int]:
    """:func:`tree_cpu_s`, and the context switches (voluntary and not) of every thread of the same
    processes so far, from one walk of /proc.

    Under load the switches count the hand-offs of the interpreter lock between a process's threads
    (the event loop, the VM threads, the events writer): each is a futex wait and a wake-up, and they
    are most of what a call costs more at 20 clients than alone."""
    ticks = _tree_ticks(pid)
    switches = 0
    for _p, task in _threads_of(ticks):
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                switches += int(line.split()[1])
    return sum(ticks.values()) * CLOCK_TICK_S, switches


def _threads_of(pids: Iterable[int]) -> Iterator[tuple[int, Path]]:
    """(process id, /proc/<pid>/task/<tid>) of every live thread of the processes ``pids``."""
    for p in pids:
        try:
            tasks = list(Path(f"/proc/{p}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            yield p, task


def thread_ticks(pid: int) -> Counter[str]:
    """The clock ticks of every thread of ``pid`` and its live descendants, by thread: skillc names
    its threads for the OS (skillc/threadnames.py), ``skillc-card-0_0`` and
    ``skillc-card-1_0`` count as ``skillc-card``, a process's first thread is ``event loop``, and a
    thread with no name of its own is ``other`` (the bare server's, an SDK's)."""
    out: Counter[str] = Counter()
    for p, task in _threads_of(_tree_ticks(pid)):
        try:
            stat = (task / "stat").read_text()
            comm = (task / "comm").read_text().strip()
        except OSError:
            continue
        fields = _stat_fields(stat)
        if task.name == str(p):
            name = "event loop"
        elif comm.startswith("skillc-"):
            name = re.sub(r"(-\d+)?(_\d+)?$", "", comm)
        else:
            name = "other"
        out[name] += int(fields[11]) + int(fields[12])
    return out


@contextmanager
def serving(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A server process, up (its "MCP endpoint" line seen), terminated on the way out. ``cwd``:
    where it runs (``python -m`` puts its working folder first on the import path)."""
    serve_load = sibling("serve_load")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        try:
            serve_load.wait_ready(proc)
        except SystemExit as why:  # wait_ready ends the process; for the scorecard it is one row's failure
            raise RuntimeError(str(why)) from None
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# --distinct: each skillc request carries an argument of its own (a number the API ignores), so no
# two cards mount on the same notifications and none takes a kept mount (docs/serve.md).
_nonces: itertools.count[int] | None = None


def request(kind: str, i: int) -> tuple[dict[str, object], dict[str, str]]:
    """serve_load.py's request of a client of ``kind`` (card / bare: a 2025-era one)."""
    serve_load = sibling("serve_load")
    body, headers = serve_load.request_for("legacy" if kind in ("card", "bare") else kind, i)
    if _nonces is not None and kind != "bare":
        params = body["params"]
        assert isinstance(params, dict)
        params["arguments"] = {**params["arguments"], "nonce": next(_nonces)}
    return body, headers


def check_for(kind: str) -> Callable[[int, Any], str | None]:
    """A searchDrinks answer as a ``kind`` client must see it: HTTP 200, no error, three drinks,
    skillc's card exactly when the client can show one."""
    card = kind in ("card", "apps")

    def check(status: int, data: Any) -> str | None:
        result = data.get("result") or {} if isinstance(data, dict) else {}
        ok = status == 200 and result.get("isError") is False
        ok = ok and (result.get("structuredContent") or {}).get("total") == 3
        ok = ok and ("skillc/card" in (result.get("_meta") or {})) == card
        return None if ok else f"{kind} {status}: {str(data)[:300]}"

    return check


@dataclass
class Target:
    kind: str
    url: str
    label: str
    proc: subprocess.Popen[str]
    http: httpx.Client
    cpu_s: float = 0.0  # server CPU over every batch
    calls: int = 0  # the calls of every batch
    latency_ms: list[float] = field(default_factory=list)
    payload_bytes: int = 0
    switches: int = 0  # the server's context switches over every batch
    threads: Counter[str] = field(default_factory=Counter)  # clock ticks by thread over every batch

    def batch(self, calls: int) -> None:
        check = check_for(self.kind)
        by_thread = thread_ticks(self.proc.pid)
        c0, s0 = tree_usage(self.proc.pid)
        for i in range(calls):
            body, headers = request(self.kind, i + 1)
            t0 = time.perf_counter()
            reply = self.http.post(self.url, json=body, headers=headers)
            self.latency_ms.append((time.perf_counter() - t0) * 1000)
            self.payload_bytes = len(reply.content)
            failure = check(reply.status_code, reply.json())
            if failure is not None:
                raise RuntimeError(failure)
        c1, s1 = tree_usage(self.proc.pid)
        self.threads.update(thread_ticks(self.proc.pid) - by_thread)
        self.cpu_s += c1 - c0
        self.switches += s1 - s0
        self.calls += calls

    def cpu_ms_per_call(self) -> float:
        """Server CPU per call over every batch, at least one clock tick over all the calls."""
        return max(self.cpu_s, CLOCK_TICK_S) * 1000 / max(self.calls, 1)


@dataclass(frozen=True)
class Result:
    kind: str  # the label: card, apps, plain, bare, or "card@base" for the --baseline server
    cpu_ms: float  # server CPU per call over every round
    latency_ms: float  # median latency
    payload_bytes: int
    switches: float  # the server's context switches per call
    threads: dict[str, float] = field(default_factory=dict)  # CPU ms per call by thread (thread_ticks)


def sequential(targets: list[Target], rounds: int, calls: int, warm_up: int) -> list[Result]:
    """Rounds of one batch per target, the order rotated each round; medians per target."""
    for t in targets:
        for i in range(warm_up):
            body, headers = request(t.kind, i)
            t.http.post(t.url, json=body, headers=headers)
    for r in range(rounds):
        for k in range(len(targets)):
            targets[(r + k) % len(targets)].batch(calls)
    return [
        Result(
            t.label,
            t.cpu_ms_per_call(),
            statistics.median(t.latency_ms),
            t.payload_bytes,
            t.switches / t.calls,
            {name: ticks * CLOCK_TICK_S * 1000 / t.calls for name, ticks in t.threads.most_common()},
        )
        for t in targets
    ]


@dataclass(frozen=True)
class Rate:
    kind: str
    calls_per_s: float  # by wall
    per_cpu_s: float  # calls per server CPU-second
    p99_ms: float
    switches: float  # the server's context switches per call


def concurrent(targets: list[Target], clients: int, calls: int, rounds: int) -> list[Rate]:
    """``clients`` keep-alive clients on each target in turn, ``rounds`` times; medians per target."""
    http_load = sibling("http_load")
    figures: dict[str, list[tuple[float, float, float, float]]] = {t.label: [] for t in targets}
    for r in range(rounds + 1):  # round 0 warms up
        for k in range(len(targets)):
            t = targets[(r + k) % len(targets)]
            encoded = [http_load.encode(t.url, *request(t.kind, i + 1)) for i in range(calls if r else 100)]
            c0, s0 = tree_usage(t.proc.pid)
            out = asyncio.run(http_load.load(t.url, encoded, clients, check_for(t.kind)))
            c1, s1 = tree_usage(t.proc.pid)
            cpu, switches = c1 - c0, s1 - s0
            if out.failures or len(out.latencies_ms) != len(encoded):
                raise RuntimeError(f"{t.label}: {len(out.failures)} failed: {out.failures[:1]}")
            if r:
                lat = sorted(out.latencies_ms)
                p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
                per_cpu_s = len(lat) / cpu if cpu else float("inf")
                figures[t.label].append((len(lat) / out.elapsed_s, per_cpu_s, p99, switches / len(lat)))
    return [Rate(kind, *(statistics.median(f[i] for f in fs) for i in range(4))) for kind, fs in figures.items()]


@dataclass(frozen=True)
class Run:
    sequential: list[Result]
    rates: list[Rate]


def measure(
    kinds: list[str],
    rounds: int,
    calls: int,
    clients: int,
    load_calls: int,
    workers: int,
    state_dir: str,
    baseline: Path | None = None,
) -> Run:
    """Both servers up (and a third, ``baseline``'s skillc, when given); the interleaved sequential
    rounds, then (``clients`` > 0) the concurrent ones."""
    serve_load = sibling("serve_load")

    def skillc_cmd(port: int, state: str) -> list[str]:
        cmd = [sys.executable, "-m", "skillc", "serve", str(SKILL), "--port", str(port), "--state-dir", state]
        return [*cmd, "--workers", str(workers)]

    with ExitStack() as stack:
        servers: list[tuple[str, subprocess.Popen[str], int]] = []  # (label suffix, process, port)
        port = serve_load.free_port()
        servers.append(("", stack.enter_context(serving(skillc_cmd(port, state_dir))), port))
        if baseline is not None:
            port = serve_load.free_port()
            base_state = stack.enter_context(tempfile.TemporaryDirectory())
            env = {**os.environ, "PYTHONPATH": str(baseline.resolve())}
            # Run from the baseline's folder: from this tree's root, `python -m skillc` would import
            # this tree's package ahead of PYTHONPATH, and both sides would be the same code.
            base_cmd = skillc_cmd(port, base_state)
            servers.append(("@base", stack.enter_context(serving(base_cmd, env, cwd=baseline.resolve())), port))
        bare_port = serve_load.free_port()
        bare_cmd = [sys.executable, str(BENCH / "bare_mcp_server.py"), "--port", str(bare_port)]
        bare = stack.enter_context(serving(bare_cmd))
        targets = []
        for kind in kinds:
            for suffix, proc, port in servers:
                http = stack.enter_context(httpx.Client(headers=serve_load.HEADERS, timeout=30))
                targets.append(Target(kind, f"http://127.0.0.1:{port}/mcp", kind + suffix, proc, http))
        http = stack.enter_context(httpx.Client(headers=serve_load.HEADERS, timeout=30))
        targets.append(Target("bare", f"http://127.0.0.1:{bare_port}/mcp", "bare", bare, http))
        seq = sequential(targets, rounds, calls, warm_up=20)
        rates: list[Rate] = []
        if clients > 0:
            loaded = [t for t in targets if t.kind in (kinds[0], "bare")]
            rates = concurrent(loaded, clients, load_calls, rounds=max(1, rounds // 3))
    return Run(seq, rates)


def report(run: Run, workers: int, clients: int, *, threads: bool = False) -> None:
    bare = next(r for r in run.sequential if r.kind == "bare")
    print(f"tools/call searchDrinks, sequential, server CPU per call (serve --workers {workers}; latency: medians)")
    head = f"{'CPU ms/call':>11} {'latency ms':>10} {'x bare (CPU)':>12} {'2-core calls/s':>14} {'bytes':>6}"
    head += f" {'switches':>8}"
    print(f"  {'kind':<11} {head}")
    for r in run.sequential:
        ratio = r.cpu_ms / bare.cpu_ms if bare.cpu_ms else float("nan")
        implied = 2000 / r.cpu_ms if r.cpu_ms else float("inf")
        figures = f"{r.cpu_ms:>11.2f} {r.latency_ms:>10.2f} {ratio:>11.2f}x {implied:>14.0f} {r.payload_bytes:>6}"
        figures += f" {r.switches:>8.0f}"
        print(f"  {r.kind:<11} {figures}")
    worst = max((r for r in run.sequential if r.kind in KINDS), key=lambda r: r.cpu_ms)
    met = worst.cpu_ms <= GOAL_RATIO * bare.cpu_ms
    print(f"  goal: <= {GOAL_RATIO:.0f}x the bare SDK tool: {'met' if met else 'missed'} (worst: {worst.kind})")
    if threads:
        print("  by thread, CPU ms per call (clock ticks of 10 ms summed over every round):")
        for r in run.sequential:
            parts = "  ".join(f"{name} {ms:.2f}" for name, ms in r.threads.items() if ms > 0)
            print(f"  {r.kind:<11} {parts or '-'}")
    if run.rates:
        print(f"{clients} concurrent keep-alive clients (medians)")
        for rate in run.rates:
            print(
                f"  {rate.kind:<11} {rate.calls_per_s:>7.0f} calls/s  {rate.per_cpu_s:>7.0f} calls per server CPU-s"
                f"  p99 {rate.p99_ms:.1f} ms  {rate.switches:.0f} context switches per call"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=40, help="sequential calls per batch")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (0: no concurrent phase)")
    parser.add_argument("--load-calls", type=int, default=600, help="calls per concurrent round")
    parser.add_argument("--workers", type=int, default=1, help="skillc serve --workers")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated: {', '.join(KINDS)}")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a folder holding another skillc package (e.g. `git archive REV skillc | tar -x -C DIR`):"
        " its serve runs too, interleaved, its kinds labelled @base",
    )
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="every skillc call's arguments differ (an extra number the API ignores): no card takes a kept mount",
    )
    parser.add_argument(
        "--threads",
        action="store_true",
        help="also print each kind's CPU per call by server thread: the event loop, the API VM threads"
        " (skillc-js), the card threads, the events writer, ...",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run (2 rounds of 5 calls, 4 clients)")
    opts = parser.parse_args()
    if opts.distinct:
        global _nonces
        _nonces = itertools.count(1)
    if opts.quick:
        opts.rounds, opts.calls, opts.clients, opts.load_calls = 2, 5, 4, 40
    kinds = [k.strip() for k in opts.kinds.split(",") if k.strip()]
    if not kinds or set(kinds) - set(KINDS):
        parser.error(f"--kinds: choose from {', '.join(KINDS)}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load}; figures are noisy on a shared machine")
    with tempfile.TemporaryDirectory() as state:
        run = measure(kinds, opts.rounds, opts.calls, opts.clients, opts.load_calls, opts.workers, state, opts.baseline)
    report(run, opts.workers, opts.clients, threads=opts.threads)


if __name__ == "__main__":
    main()
