"""Issue 16's scorecard: every row of its table, skillc beside its peer or floor, in one run.

    .venv/bin/python bench/scorecard.py [--quick] [--rows 1,2,...]

Prints one table (markdown, fixed-width columns, so that two runs diff line by line): per case,
skillc's wall and CPU figures, the peer's (or floor's) in the same run, the ratios skillc / peer
of each, the goal and whether it is met. Figures are medians of several rounds; CPU is this
process's ``time.process_time`` for in-process work, ``process.cpuUsage`` in node, the children's
rusage for short-lived subprocesses, and /proc/<pid>/stat for a server process.

Rows (``--rows`` takes these numbers):
  1  first render, drink-list 20 items: cold (compile + render) and warm (cached compile)
     vs miniprogram-simulate (load + render + attach / render + attach)
  2  replace 1000 items, same keys        3  replace 1000 items, new keys
  4  grow 20 -> 1000 items                (CardRenderer.update vs simulate's setData)
  5  first render 2000 and 10000 items: per-node cost against the 20-item cost (linear)
  6  tools/call searchDrinks, server CPU per request: skillc serve vs a bare mcp SDK server
  7  the same with 20 concurrent clients: calls/s and p99
  8  Atomic API VM calls/s, trivial API, one thread vs a bare QuickJS context per call
  9  WXML parse + lower of the repo's WXML (the files wcc accepts), ~250 KB, vs wcc
  10 WXSS parse of the repo's WXSS (the files wcsc accepts), ~900 KB, vs wcsc
  11 `skillc check` start-up: importing skillc.cli, and the whole check, vs `python -c pass`

A missing peer (no node, no tests/peers) is printed as "skipped (reason)" and the run still exits
0; a skillc measurement that fails is printed as FAILED and the run exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT))

from skillc.diagnostics import DiagnosticSink  # noqa: E402
from skillc.frontend.package import load_skill  # noqa: E402
from skillc.ir.evaluate import CardRenderer  # noqa: E402

PEERS = ROOT / "tests" / "peers" / "node_modules"
SKILL = ROOT / "examples" / "coffee-skill"
CORPUS_DIRS = (ROOT / "examples", ROOT / "tests" / "fixtures")
ALL_ROWS = tuple(range(1, 12))
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def load_bench(name: str) -> ModuleType:
    """One of the sibling bench scripts, as a module (bench/ is not a package), loaded once."""
    key = f"bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module  # dataclasses look their module up there while the module runs
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Settings:
    rounds: int  # in-process medians
    peer_rounds: int  # node / subprocess medians
    list_n: int  # rows 2-4
    big: tuple[int, int]  # row 5
    growth_repeat: int  # row 5, first renders per size (bench/growth.py's --repeat)
    seq_calls: int  # row 6, per batch
    batches: int
    load_calls: int  # row 7
    api_calls: int  # row 8, per round
    wxml_kb: int
    wxss_kb: int
    startup_runs: int
    peers: Path = PEERS  # tests/peers/node_modules: simulate, jsdom, wcc, wcsc


FULL = Settings(
    rounds=20,
    peer_rounds=5,
    list_n=1000,
    big=(2000, 10000),
    growth_repeat=3,
    seq_calls=50,
    batches=5,
    load_calls=600,
    api_calls=500,
    wxml_kb=250,
    wxss_kb=900,
    startup_runs=5,
)
QUICK = Settings(
    rounds=3,
    peer_rounds=1,
    list_n=200,
    big=(200, 400),
    growth_repeat=1,
    seq_calls=10,
    batches=2,
    load_calls=60,
    api_calls=50,
    wxml_kb=10,
    wxss_kb=20,
    startup_runs=2,
)


@dataclass(frozen=True)
class Figure:
    wall: float
    cpu: float | None  # None: the quantity has no CPU form (a latency percentile)


@dataclass(frozen=True)
class Row:
    case: str
    skillc: Figure | None  # None: the measurement failed (``note`` says why)
    peer_name: str
    peer: Figure | None  # None: skipped (``peer_note`` says why)
    goal: str
    met: bool | None
    note: str = ""
    peer_note: str = ""


class PeerMissing(Exception):
    """The peer cannot run here; the row prints the reason and the run goes on."""


def median_figure(fn: Callable[[], object], rounds: int) -> Figure:
    """Median wall and CPU milliseconds of ``fn()``."""
    return median_setup(lambda _: fn(), lambda: None, rounds)


def median_setup(fn: Callable[[Any], object], setup: Callable[[], Any], rounds: int) -> Figure:
    """Median wall and CPU milliseconds of ``fn(setup())``, the setup untimed."""
    walls, cpus = [], []
    for _ in range(rounds):
        arg = setup()
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn(arg)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
    return Figure(statistics.median(walls), statistics.median(cpus))


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_child(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one subprocess run (it must exit 0)."""
    c0 = children_cpu_s()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, timeout=600)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} exited {done.returncode}: {done.stderr[:300]!r}")
    return wall, children_cpu_s() - c0


def median_child(cmd: list[str], runs: int, cwd: Path | None = None) -> Figure:
    samples = [run_child(cmd, cwd) for _ in range(runs)]
    return Figure(statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))


# -- rows 1-5: the Render IR against miniprogram-simulate ------------------------------------------------------


def node_or_missing(peers: Path) -> str:
    node = shutil.which("node")
    if node is None:
        raise PeerMissing("node not on PATH")
    if not (peers / "miniprogram-simulate").is_dir() or not (peers / "jsdom").is_dir():
        raise PeerMissing("miniprogram-simulate not installed: make peers")
    return node


def simulate(cases: list[str], rounds: int, peers: Path) -> dict[str, Figure]:
    node = node_or_missing(peers)
    card = SKILL / "components" / "drink-list" / "index.wxml"
    cmd = [node, str(BENCH / "peer_simulate.js"), str(peers), str(card), str(rounds), ",".join(cases)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        # One line, no table rule: the reason is printed in a Markdown table cell.
        last = " ".join(line.strip() for line in done.stderr.strip().splitlines()[-3:]).replace("|", "/")
        raise PeerMissing(f"peer_simulate.js exited {done.returncode}: {last[-200:]}")
    raw: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return {k: Figure(v["wall"], v["cpu"]) for k, v in raw.items()}


def renamed(drinks: list[dict[str, Any]], r: int) -> list[dict[str, Any]]:
    """The same drinks under keys that are all new (the keyed list re-creates every item)."""
    return [{**d, "id": f"r{r}_{i}"} for i, d in enumerate(drinks)]


def render_rows(rows: set[int], s: Settings) -> list[Row]:
    rb = load_bench("render")
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    component = rb.compile_drink_list(pkg)
    n = s.list_n
    cases: list[str] = []
    mine: dict[str, Figure] = {}
    counter = iter(range(10**9))

    def fresh(size: int) -> Any:
        renderer = CardRenderer(component)
        renderer.render(rb.data(size))
        return renderer

    def swap(card_and_drinks: tuple[Any, list[dict[str, Any]]]) -> object:
        card, new = card_and_drinks
        return card.update({"drinks": new})

    big = fresh(n) if 2 in rows else None  # replaced in place, round after round
    for warm_up in (True, False):  # the first pass fills the caches a long-running server has warm
        rounds = 3 if warm_up else s.rounds
        if 1 in rows:
            mine["cold_20"] = median_figure(
                lambda: CardRenderer(rb.compile_drink_list(pkg)).render(rb.data(20)), rounds
            )
            mine["warm_20"] = median_figure(lambda: CardRenderer(component).render(rb.data(20)), rounds)
        if 2 in rows:
            mine["replace"] = median_setup(swap, lambda: (big, rb.drinks(n, next(counter) + 1)), rounds)
        if 3 in rows:
            mine["replace_new"] = median_setup(swap, lambda: (fresh(n), renamed(rb.drinks(n), next(counter))), rounds)
        if 4 in rows:
            mine["grow"] = median_setup(swap, lambda: (fresh(20), rb.drinks(n)), rounds)
    big_sizes = s.big
    if 1 in rows:
        cases += ["load_render_20", "render_20"]
    if 2 in rows:
        cases.append(f"replace_{n}")
    if 3 in rows:
        cases.append(f"replace_new_{n}")
    if 4 in rows:
        cases.append(f"grow_20_{n}")
    if 5 in rows:
        cases.append(f"render_{big_sizes[0]}")
    peer: dict[str, Figure] = {}
    peer_note = ""
    try:
        peer = simulate(cases, s.peer_rounds, s.peers)
    except PeerMissing as why:
        peer_note = str(why)

    def row(case: str, key: str, peer_case: str, peer_label: str, goal_ms: float) -> Row:
        ours = mine[key]
        return Row(
            case,
            ours,
            f"simulate {peer_label}",
            peer.get(peer_case),
            f"< {goal_ms:g} ms",
            ours.cpu is not None and ours.cpu < goal_ms,
            peer_note=peer_note,
        )

    out: list[Row] = []
    if 1 in rows:
        out.append(row("1 first render 20, cold (compile), ms", "cold_20", "load_render_20", "load+render+attach", 5))
        out.append(row("1 first render 20, warm (cached), ms", "warm_20", "render_20", "render+attach", 2))
    if 2 in rows:
        out.append(row(f"2 replace {n} items, same keys, ms", "replace", f"replace_{n}", "setData", 10))
    if 3 in rows:
        out.append(row(f"3 replace {n} items, new keys, ms", "replace_new", f"replace_new_{n}", "setData", 100))
    if 4 in rows:
        out.append(row(f"4 grow 20 -> {n} items, ms", "grow", f"grow_20_{n}", "setData", 100))
    if 5 in rows:
        out += growth_rows(s, peer.get(f"render_{big_sizes[0]}"), peer_note)
    return out


def growth_rows(s: Settings, peer_small: Figure | None, peer_note: str) -> list[Row]:
    """Each size in its own child process (bench/growth.py's), so that one size's heap does not tax the next."""
    growth = load_bench("growth")
    repeat = s.growth_repeat
    base = growth.run_child(20, repeat, False)
    base_cpu = base["render_cpu_s"] / base["nodes"]
    out = []
    for i, n in enumerate(s.big):
        r = growth.run_child(n, repeat, False)
        ratio = r["render_cpu_s"] / r["nodes"] / base_cpu
        if i == 0:
            peer, note = peer_small, peer_note
        else:
            # simulate is at least linear: a round at n items would cost this, times warm-up + rounds.
            est = f", ~{peer_small.wall * n / s.big[0] / 1000:.0f} s a round" if peer_small is not None else ""
            peer, note = None, f"capped{est}"
        out.append(
            Row(
                f"5 first render {n} items ({r['nodes']} nodes), ms",
                Figure(r["render_wall_s"] * 1000, r["render_cpu_s"] * 1000),
                "simulate render+attach",
                peer,
                f"linear: CPU/node <= 1.5x the 20-item ({ratio:.2f}x)",
                ratio <= 1.5,
                peer_note=note,
            )
        )
    return out


# -- rows 6-7: skillc serve against a bare mcp SDK server --------------------------------------------------------


def tree_cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` and its live descendants, from /proc (clock-tick resolution)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    return sum(ticks.get(p, 0) for p in tree) * CLOCK_TICK_S


@contextmanager
def server(cmd: list[str], url: str) -> Iterator[subprocess.Popen[str]]:
    serve_load = load_bench("serve_load")
    # stderr is read by wait_ready (the "MCP endpoint" line) and drained for the server's life.
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        try:
            serve_load.wait_ready(proc)
        except SystemExit as why:  # wait_ready exits the process; here it is one row's failure
            raise RuntimeError(str(why)) from None
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def sequential(url: str, proc: subprocess.Popen[str], s: Settings, card: bool) -> Figure:
    """Wall ms per call (median latency) and the server's CPU ms per call (median over batches)."""
    import httpx

    serve_load = load_bench("serve_load")
    latencies, per_call_cpu = [], []
    with httpx.Client(headers=serve_load.HEADERS, timeout=30) as http:

        def call(i: int) -> None:
            body, headers = serve_load.request_for("legacy", i)
            reply = http.post(url, json=body, headers=headers)
            result = reply.json().get("result") or {}
            if reply.status_code != 200 or result.get("isError") is not False:
                raise RuntimeError(f"tools/call failed: {reply.status_code} {str(result)[-300:]}")
            if ("skillc/card" in (result.get("_meta") or {})) != card:
                raise RuntimeError("the answer's card is not the expected one")

        for i in range(20):  # warm-up
            call(i)
        for _ in range(s.batches):
            c0 = tree_cpu_s(proc.pid)
            for i in range(s.seq_calls):
                t0 = time.perf_counter()
                call(i)
                latencies.append((time.perf_counter() - t0) * 1000)
            per_call_cpu.append((tree_cpu_s(proc.pid) - c0) * 1000 / s.seq_calls)
    return Figure(statistics.median(latencies), statistics.median(per_call_cpu))


def answer_check(card: bool) -> Callable[[int, Any], str | None]:
    """serve_load.py's checks of one searchDrinks answer: HTTP 200, no error, the 3 drinks, the card or none."""

    def check(status: int, data: Any) -> str | None:
        result = data.get("result") or {} if isinstance(data, dict) else {}
        ok = status == 200 and result.get("isError") is False
        ok = ok and (result.get("structuredContent") or {}).get("total") == 3
        ok = ok and ("skillc/card" in (result.get("_meta") or {})) == card
        return None if ok else f"{status}: {str(data)[:200]}"

    return check


def concurrent(url: str, proc: subprocess.Popen[str], s: Settings, card: bool) -> tuple[Figure, Figure, float]:
    """20 clients on keep-alive connections (bench/http_load.py): calls/s by wall and per server
    CPU-second, p99 ms, and the client's own CPU ms per call (it shares the two cores)."""
    serve_load = load_bench("serve_load")
    http_load = load_bench("http_load")
    check = answer_check(card)
    requests = [http_load.encode(url, *serve_load.request_for("legacy", i + 1)) for i in range(s.load_calls)]
    asyncio.run(http_load.load(url, requests[:100], 20, check))  # warm-up
    c0, mine0 = tree_cpu_s(proc.pid), time.process_time()
    result = asyncio.run(http_load.load(url, requests, 20, check))
    cpu, client_cpu = tree_cpu_s(proc.pid) - c0, time.process_time() - mine0
    latencies = sorted(result.latencies_ms)
    if result.failures or len(latencies) != s.load_calls:
        lost = s.load_calls - len(latencies)
        raise RuntimeError(f"{len(result.failures)} failed, {lost} lost: {result.failures[:1]}")
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    calls = len(latencies)
    rate = Figure(calls / result.elapsed_s, calls / cpu if cpu > 0 else float("inf"))
    return rate, Figure(p99, None), client_cpu * 1000 / calls


@dataclass(frozen=True)
class ServeFigures:
    sequential: Figure | None  # ms per call: latency, server CPU
    rate: Figure | None  # 20 clients: calls/s by wall, per server CPU-second
    p99: Figure | None
    client_ms: float  # the load client's CPU per call in the 20-client run


def serve_rows(rows: set[int], s: Settings) -> list[Row]:
    serve_load = load_bench("serve_load")

    def measure(cmd: list[str], port: int, card: bool) -> ServeFigures:
        url = f"http://127.0.0.1:{port}/mcp"
        with server(cmd, url) as proc:
            seq = sequential(url, proc, s, card) if 6 in rows else None
            rate, p99, client_ms = concurrent(url, proc, s, card) if 7 in rows else (None, None, 0.0)
        return ServeFigures(seq, rate, p99, client_ms)

    port = serve_load.free_port()
    with tempfile.TemporaryDirectory() as state:
        cmd = [sys.executable, "-m", "skillc", "serve", str(SKILL), "--port", str(port), "--state-dir", state]
        ours = measure(cmd, port, card=True)
    bare = ServeFigures(None, None, None, 0.0)
    note = ""
    try:
        import mcp.server.mcpserver  # noqa: F401

        port = serve_load.free_port()
        bare = measure([sys.executable, str(BENCH / "bare_mcp_server.py"), "--port", str(port)], port, card=False)
    except (ImportError, RuntimeError) as why:
        note = f"bare mcp SDK server: {why}"
    name = "bare mcp SDK server"
    out = []
    if ours.sequential is not None:
        seq, floor = ours.sequential, bare.sequential
        ratio = seq.cpu / floor.cpu if floor is not None and seq.cpu is not None and floor.cpu else None
        goal = "<= 2x the bare SDK (CPU)" + ("" if ratio is None else f" ({ratio:.1f}x)")
        met = None if ratio is None else ratio <= 2.0
        out.append(Row("6 tools/call searchDrinks, ms/req", seq, name, floor, goal, met, peer_note=note))
    if ours.rate is not None and ours.p99 is not None:
        client = f"row 7: the load client used {ours.client_ms:.2f} ms CPU per call against skillc"
        if bare.rate is not None:
            client += f", {bare.client_ms:.2f} ms against the bare server"
        rate_goal = ">= 400 calls/s"
        out.append(Row("7 serve 20 clients, calls/s", ours.rate, name, bare.rate, rate_goal, ours.rate.wall >= 400))
        out[-1] = replace(out[-1], note=client, peer_note=note)
        out.append(Row("7 serve 20 clients, p99 ms", ours.p99, name, bare.p99, "< 50 ms", ours.p99.wall < 50))
        out[-1] = replace(out[-1], peer_note=note)
    return out


# -- row 8: the Atomic API VM against a bare QuickJS context -----------------------------------------------------


def rate(fn: Callable[[], object], calls: int, rounds: int) -> Figure:
    """Median calls per second over ``rounds`` rounds of ``calls`` calls, by wall time and by CPU time."""
    walls, cpus = [], []
    for _ in range(rounds):
        c0 = time.process_time()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        walls.append(calls / (time.perf_counter() - t0))
        cpus.append(calls / max(time.process_time() - c0, 1e-9))
    return Figure(statistics.median(walls), statistics.median(cpus))


def api_rows(s: Settings) -> list[Row]:
    import quickjs

    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.config import RuntimeConfig

    runtime = load_bench("runtime")
    rounds = max(3, s.rounds // 4)
    with tempfile.TemporaryDirectory() as tmp:
        pkg = load_skill(runtime.trivial_skill(Path(tmp) / "ping"), DiagnosticSink())
        assert pkg is not None
        rt = ApiRuntime(pkg, RuntimeConfig(state_dir=Path(tmp) / "state", workers=2))
        try:

            def call() -> None:
                outcome = rt.call_blocking("ping", {"n": 1})
                if outcome.result.is_error:
                    raise RuntimeError(outcome.result.text)

            rate(call, 20, 1)
            mine = rate(call, s.api_calls, rounds)
        finally:
            rt.close()
    floor = rate(lambda: quickjs.Context().eval("1"), s.api_calls, rounds)
    ratio = (mine.cpu or 0) / (floor.cpu or 1)
    return [
        Row(
            "8 API VM trivial call, calls/s",
            mine,
            "bare quickjs.Context()",
            floor,
            f">= 0.5x the bare context (CPU) ({ratio:.2f}x)",
            ratio >= 0.5,
        )
    ]


# -- rows 9-10: the frontend against wcc / wcsc ------------------------------------------------------------------


def compiler(name: str, peers: Path) -> Path:
    frontend = load_bench("frontend")
    binary = frontend.resolve_wcc(peers / "miniprogram-compiler" / "bin" / "linux" / name)
    if binary is None:
        raise PeerMissing(f"{name} not installed: make peers")
    return Path(binary)


def accepted(files: list[Path], binary: Path | None, args: Callable[[str], list[str]], ext: str) -> list[str]:
    """The texts of ``files`` that the compiler accepts alone (all of them when it is missing)."""
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            if binary is not None:
                (Path(tmp) / f"a.{ext}").write_text(text, encoding="utf-8")
                done = subprocess.run([str(binary), *args(f"a.{ext}")], cwd=tmp, capture_output=True, check=False)
                if done.returncode != 0:
                    continue
            texts.append(text)
    return texts


def corpus(texts: list[str], target_kb: int) -> str:
    if not texts:
        raise RuntimeError("no corpus file was accepted")
    parts, size = [], 0
    while size < target_kb * 1024:
        for text in texts:
            parts.append(text)
            size += len(text.encode("utf-8"))
    return "\n".join(parts)


def kb_per_s(text: str, ms: Figure) -> Figure:
    kb = len(text.encode("utf-8")) / 1024
    return Figure(kb / (ms.wall / 1000), kb / ((ms.cpu or 1e-9) / 1000))


def frontend_row(row: int, s: Settings) -> Row:
    from skillc.frontend.wxml import parse_wxml
    from skillc.frontend.wxss import parse_wxss
    from skillc.ir.lower import lower_document

    wxml = row == 9
    ext, name = ("wxml", "wcc") if wxml else ("wxss", "wcsc")
    binary: Path | None = None
    note = ""
    try:
        binary = compiler(name, s.peers)
    except PeerMissing as why:
        note = str(why)

    def args(file: str) -> list[str]:
        return ["-d", "-cc", "0", file, "-gn", "$gwx"] if wxml else ["-db", "-pc", "0", file]

    files = sorted(p for d in CORPUS_DIRS for p in d.rglob(f"*.{ext}"))
    texts = accepted(files, binary, args, ext)
    text = corpus(texts, s.wxml_kb if wxml else s.wxss_kb)

    def ours() -> None:
        sink = DiagnosticSink()
        if wxml:
            lower_document(
                parse_wxml(text, file="components/bench/index.wxml", sink=sink), load=lambda _p: None, sink=sink
            )
        else:
            parse_wxss(text, file="components/bench/index.wxss", sink=sink)

    ours()  # warm: lark builds its parser once
    mine = kb_per_s(text, median_figure(ours, max(2, s.peer_rounds - 2)))
    peer: Figure | None = None
    if binary is not None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / f"a.{ext}").write_text(text, encoding="utf-8")
            run_child([str(binary), *args(f"a.{ext}")], Path(tmp))
            taken = median_child([str(binary), *args(f"a.{ext}")], s.peer_rounds, Path(tmp))
        peer = kb_per_s(text, Figure(taken.wall * 1000, (taken.cpu or 0) * 1000))
    kb = len(text.encode("utf-8")) // 1024
    ratio = None if peer is None else (mine.cpu or 0) / (peer.cpu or 1)
    what = "WXML parse + lower" if wxml else "WXSS parse"
    return Row(
        f"{row} {what}, {len(texts)}/{len(files)} files, {kb} KB, KB/s",
        mine,
        name,
        peer,
        f"within 3x of {name} (CPU)" + ("" if not ratio else f" ({name} {1 / ratio:.2f}x faster)"),
        None if ratio is None else ratio >= 1 / 3,
        peer_note=note,
    )


# -- row 11: start-up ---------------------------------------------------------------------------------------------


def startup_rows(s: Settings) -> list[Row]:
    py = sys.executable
    run_child([py, "-c", "import skillc.cli"], ROOT)  # warm: the bytecode cache and the page cache
    floor = median_child([py, "-c", "pass"], s.startup_runs, ROOT)
    imports = median_child([py, "-c", "import skillc.cli"], s.startup_runs, ROOT)
    check = median_child([py, "-m", "skillc", "check", str(SKILL)], s.startup_runs, ROOT)
    return [
        Row(
            "11 start-up: import skillc.cli, s",
            imports,
            "python -c pass",
            floor,
            "< 0.15 s (CPU)",
            (imports.cpu or 0) < 0.15,
        ),
        Row("11 skillc check coffee-skill (whole), s", check, "python -c pass", floor, "-", None),
    ]


# -- the table ----------------------------------------------------------------------------------------------------


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


COLUMNS = (
    "case",
    "skillc wall",
    "skillc CPU",
    "peer / floor",
    "peer wall",
    "peer CPU",
    "ratio wall",
    "ratio CPU",
    "goal",
    "met?",
)
WIDTHS = (48, 11, 10, 28, 9, 9, 10, 9, 46, 4)


def line(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, WIDTHS, strict=True)) + " |"


def cells(row: Row) -> tuple[str, ...]:
    ours, peer = row.skillc, row.peer
    if ours is None:
        return (row.case, "FAILED", "-", row.peer_name, "-", "-", "-", "-", row.note[:120], "no")
    if peer is None:
        reason = f"skipped ({row.peer_note or 'not measured'})"
        peer_cells = (f"{row.peer_name}: {reason}", "-", "-", "-", "-")
    else:
        ratio_wall = f"{ours.wall / peer.wall:.2f}x" if peer.wall else "-"
        ratio_cpu = f"{ours.cpu / peer.cpu:.2f}x" if ours.cpu is not None and peer.cpu else "-"
        peer_cells = (row.peer_name, fmt(peer.wall), fmt(peer.cpu), ratio_wall, ratio_cpu)
    met = "-" if row.met is None else ("yes" if row.met else "no")
    return (row.case, fmt(ours.wall), fmt(ours.cpu), *peer_cells, row.goal, met)


def measure(row: int, s: Settings) -> list[Row]:
    """One row number's rows; rows 1-5 share one node process, 6-7 one pair of servers: see main."""
    if row == 8:
        return api_rows(s)
    if row in (9, 10):
        return [frontend_row(row, s)]
    if row == 11:
        return startup_rows(s)
    raise ValueError(row)


def failed(label: str, err: BaseException) -> Row:
    return Row(label, None, "-", None, "-", False, note=f"{type(err).__name__}: {err}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few rounds, small sizes (for the test)")
    parser.add_argument("--rows", default=",".join(map(str, ALL_ROWS)), help="comma-separated row numbers, 1-11")
    parser.add_argument("--peers", type=Path, default=PEERS, help="the peers' node_modules (default: tests/peers)")
    opts = parser.parse_args()
    try:
        rows = {int(x) for x in opts.rows.split(",") if x.strip()}
    except ValueError:
        parser.error("--rows takes numbers")
    if not rows or not rows <= set(ALL_ROWS):
        parser.error("--rows takes numbers from 1 to 11")
    s = replace(QUICK if opts.quick else FULL, peers=opts.peers)
    started = time.perf_counter()
    c0 = time.process_time()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# skillc scorecard (issue 16), {datetime.now(UTC):%Y-%m-%d %H:%M} UTC{' (quick)' if opts.quick else ''}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load}")
    print("wall and CPU are medians (ms, s, KB/s or calls/s as the case says); ratio = skillc / peer of the same")
    print(
        "quantity (a time: below 1 skillc is faster; a rate: above 1 it is); met? is judged on CPU where there is one"
    )
    print()
    print(line(COLUMNS))
    print(line(tuple("-" * w for w in WIDTHS)))
    bad = False
    notes: list[str] = []
    groups: list[tuple[str, Callable[[], list[Row]]]] = []
    if rows & {1, 2, 3, 4, 5}:
        groups.append(("1-5 render", lambda: render_rows(rows, s)))
    if rows & {6, 7}:
        groups.append(("6-7 serve", lambda: serve_rows(rows, s)))
    groups += [(str(r), lambda r=r: measure(r, s)) for r in sorted(rows) if r >= 8]  # type: ignore[misc]
    for label, run in groups:
        try:
            result = run()
        except Exception as err:  # one failed measurement must not hide the other rows
            traceback.print_exc()
            result = [failed(f"{label}", err)]
        for row in result:
            bad = bad or row.skillc is None
            if row.skillc is not None and row.note:
                notes.append(row.note)
            print(line(cells(row)), flush=True)
    print()
    for note in notes:
        print(note)
    print(f"run: {time.perf_counter() - started:.0f} s wall, {time.process_time() - c0:.0f} s CPU in this process")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
