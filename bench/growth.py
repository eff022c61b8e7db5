"""Growth: how the Render IR's first render and a one-field setData scale with the list length.

    .venv/bin/python bench/growth.py [--sizes 20,200,2000,10000] [--repeat 3] [--gc-off] [--paired]

The card is the coffee skill's drink-list (examples/coffee-skill/components/drink-list, compiled
with skillc's own API: ``compile_component`` + ``CardRenderer``), with N generated drinks. For
each N, in a fresh child process (so that peak RSS and the garbage collector's heap are that
size's own): one warm-up render of 20 items, then ``--repeat`` first renders of N items (sizes
below 2000 get proportionally more rounds, at most 100x), each with a new ``CardRenderer`` on the
same compiled component (as a server renders a new card), then 20 one-field setData
(``drinks[3].price``) on the last one. Prints medians of wall time (perf_counter) and CPU time
(time.process_time), the cost per Render IR node (elements and text runs in the document), the
ratio of that cost to the 20-item cost ("linear" means ~1.0x at every size; for setData, "flat"
means ~1.0x the 20-item time), the child's peak RSS (resource.getrusage ru_maxrss: the whole
process, interpreter included) with its growth over the RSS before the first N-item render, and
the number of full (generation 2) garbage collections during the renders.

With ``--paired``, each timed render of a size above the smallest comes right after a burst of
first renders of the smallest size in the same process (at least 5 renders and 20 ms of CPU), and
a third line gives the median of the per-round ratios (CPU per node against the burst's median)
with their range. The two-core machine this runs on changes speed by up to 1.7x from one second to
the next (a fixed loop takes 8 ms or 14 ms of CPU), so two children run seconds apart can measure
that as much as the growth; a pair run within milliseconds of each other cannot. The scorecard's
row 5 reads this ratio.

RenderLimits are raised for this bench (the default card limit is 20 000 nodes).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SKILL = ROOT / "examples" / "coffee-skill"
SETDATA_ROUNDS = 20
# --paired: before each timed render, a burst of first renders of the smallest size in the same
# process, this much CPU at least (and at least REFERENCE_MIN renders).
REFERENCE_BURST_S = 0.02
REFERENCE_MIN = 5


def drinks(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"d{i}", "name": f"Drink {i}", "price": 20 + (i % 13), "image": f"https://img.example/d{i}.jpg"}
        for i in range(n)
    ]


def data(n: int) -> dict[str, Any]:
    return {"title": "Menu", "keyword": "", "drinks": drinks(n), "selectedId": "d1"}


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def child(n: int, repeat: int, reference: int = 0) -> dict[str, Any]:
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.package import load_skill
    from skillc.ir.component import compile_component
    from skillc.ir.evaluate import CardRenderer, RenderLimits

    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    component = compile_component(pkg, "drink-list", DiagnosticSink())
    assert component is not None
    big = 10 * n + 1000
    limits = RenderLimits(max_nodes=big, max_for_number=big, max_data_index=big)
    CardRenderer(component, limits=limits).render(data(20))  # warm-up: per-node caches, lru caches
    payload = data(n)
    small = data(reference) if reference else None
    rounds = max(repeat, min(100 * repeat, repeat * 2000 // n))
    rss_before = maxrss_mb()
    gen2_before = gc.get_stats()[2]["collections"]
    wall, cpu, paired = [], [], []
    renderer = None
    nodes = reference_nodes = 0
    for _ in range(rounds):
        # The previous card is dropped before the clock starts, as a server drops a closed card:
        # its document too, which held the whole tree (freeing it used to be timed with this render).
        renderer = doc = None
        reference_cpu = None
        if small is not None:
            reference_cpu, reference_nodes = burst(component, limits, small)
        c0 = time.process_time()
        t0 = time.perf_counter()
        renderer = CardRenderer(component, limits=limits)
        doc = renderer.render(payload)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert renderer.exceeded is None, renderer.exceeded
        nodes = sum(1 for _ in doc.root.walk())
        if reference_cpu is not None:
            paired.append((cpu[-1] / nodes) / (reference_cpu / reference_nodes))
    gen2 = gc.get_stats()[2]["collections"] - gen2_before
    assert renderer is not None
    set_wall, set_cpu = [], []
    for k in range(SETDATA_ROUNDS):
        c0 = time.process_time()
        t0 = time.perf_counter()
        patches = renderer.update({"drinks[3].price": 100 + k})
        set_wall.append(time.perf_counter() - t0)
        set_cpu.append(time.process_time() - c0)
        assert patches, "setData produced no patch"
    return {
        "n": n,
        "rounds": rounds,
        "nodes": nodes,
        "render_wall_s": statistics.median(wall),
        "render_cpu_s": statistics.median(cpu),
        "set_wall_s": statistics.median(set_wall),
        "set_cpu_s": statistics.median(set_cpu),
        "rss_before_mb": rss_before,
        "rss_peak_mb": maxrss_mb(),
        "gen2": gen2,
        "gc": gc.isenabled(),
        "reference_nodes": reference_nodes,
        "paired_ratios": paired,
    }


def burst(component: Any, limits: Any, payload: dict[str, Any]) -> tuple[float, int]:
    """First renders of the reference card until REFERENCE_BURST_S of CPU has passed (at least
    REFERENCE_MIN renders): the median CPU of one, and its nodes."""
    from skillc.ir.evaluate import CardRenderer

    cpu: list[float] = []
    while len(cpu) < REFERENCE_MIN or sum(cpu) < REFERENCE_BURST_S:
        c0 = time.process_time()
        doc = CardRenderer(component, limits=limits).render(payload)
        cpu.append(time.process_time() - c0)
    return statistics.median(cpu), sum(1 for _ in doc.root.walk())


def run_child(n: int, repeat: int, gc_off: bool, reference: int = 0) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--repeat", str(repeat)]
    if gc_off:
        cmd.append("--gc-off")
    if reference:
        cmd += ["--reference", str(reference)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"growth child for {n} items failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20,200,2000,10000", help="comma-separated item counts")
    parser.add_argument("--repeat", type=int, default=3, help="first renders per size (more below 2000 items)")
    parser.add_argument("--gc-off", action="store_true", help="gc.disable() in the children (diagnosis)")
    parser.add_argument(
        "--paired",
        action="store_true",
        help="also time a burst of first renders of the smallest size before each larger render, in the same "
        "process, and print the median of those per-round ratios (robust to the CPU changing speed)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--reference", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.child is not None:
        if args.gc_off:
            gc.disable()
        print(json.dumps(child(args.child, args.repeat, args.reference)))
        return
    sizes = sorted({int(x) for x in args.sizes.split(",") if x.strip()})
    if not sizes or sizes[0] < 1:
        parser.error("--sizes needs positive item counts")
    started = time.perf_counter()
    print(
        f"drink-list card, first render and one setData by list length (python {sys.version.split()[0]}, "
        f"gc {'off' if args.gc_off else 'on'}); medians; ratio = cost per node / the {sizes[0]}-item cost"
    )
    print("peak RSS: ru_maxrss of each size's own child process (whole process; + growth during the renders)")
    base: dict[str, Any] | None = None
    for n in sizes:
        r = run_child(n, args.repeat, args.gc_off, sizes[0] if args.paired and base is not None else 0)
        if base is None:
            base = r
        per_wall = r["render_wall_s"] / r["nodes"] * 1e6
        per_cpu = r["render_cpu_s"] / r["nodes"] * 1e6
        ratio_wall = per_wall / (base["render_wall_s"] / base["nodes"] * 1e6)
        ratio_cpu = per_cpu / (base["render_cpu_s"] / base["nodes"] * 1e6)
        print(
            f"  {n:6d} items {r['nodes']:6d} nodes  first render {r['render_wall_s'] * 1000:9.2f} ms wall "
            f"{r['render_cpu_s'] * 1000:9.2f} ms CPU  {per_wall:5.1f} / {per_cpu:5.1f} us/node (wall / CPU)  "
            f"ratio {ratio_wall:4.2f}x / {ratio_cpu:4.2f}x  ({r['rounds']} rounds, {r['gen2']} full GCs)"
        )
        print(
            f"  {'':6s}       {'':6s}        setData one field {r['set_wall_s'] * 1000:7.3f} ms wall "
            f"{r['set_cpu_s'] * 1000:7.3f} ms CPU  x{r['set_cpu_s'] / base['set_cpu_s']:.2f} the {sizes[0]}-item CPU; "
            f"peak RSS {r['rss_peak_mb']:6.1f} MB (+{r['rss_peak_mb'] - r['rss_before_mb']:.1f})"
        )
        if r["paired_ratios"]:
            ratios = r["paired_ratios"]
            low, mid, high = min(ratios), statistics.median(ratios), max(ratios)
            print(
                f"  {'':6s}       {'':6s}        paired with {sizes[0]}-item renders just before each: CPU/node ratio "
                f"{mid:4.2f}x (median of {len(ratios)} rounds, {low:.2f}-{high:.2f}x)"
            )
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
