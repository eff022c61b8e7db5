"""Render IR speed, side by side with WeChat's own component framework.

The same drink-list card (title, horizontal scroll-view, wx:for with wx:key, image/name/price
per item, a wx:if on the selection: examples/coffee-skill's drink-list) goes through skillc's
evaluator (template evaluation + style resolution + diff; no JavaScript) and through
miniprogram-simulate (j-component in jsdom, run with node) in the same run:

  first render with 20 items, "cold" (a fresh compile of the template and stylesheet from the
  loaded package's text + the first render; also from the skill folder, load_skill included) and
  "warm" (the compiled component reused, as a server has it); setData of one item's price with
  20 and with 1000 items; replacement of all 1000 items (same keys, new prices).

The peer's "load + render + attach" (simulate.load of the template text, render, attach) is the
like-for-like figure for skillc's cold render, its "render + attach" of an already loaded
component for the warm one. Every figure is a median, of wall time and of CPU time
(time.process_time here, process.cpuUsage in node). Both processes are warm (module-level
caches here, V8's JIT there: three warm-up rounds each).

Usage: python bench/render.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillc.diagnostics import DiagnosticSink  # noqa: E402
from skillc.frontend.package import SkillPackage, load_skill  # noqa: E402
from skillc.ir.component import CompiledComponent, compile_component  # noqa: E402
from skillc.ir.evaluate import CardRenderer  # noqa: E402

SKILL = ROOT / "examples" / "coffee-skill"
CARD = SKILL / "components" / "drink-list" / "index.wxml"
PEERS = ROOT / "tests" / "peers" / "node_modules"
# Goals (issue 16): < 5 ms cold, < 2 ms with a cached compile, < 10 ms for the replacement.
TARGETS_MS = {
    "cold_folder_20": None,
    "cold_20": 5.0,
    "first_render_20": 2.0,
    "set_price_20": 0.15,
    "set_price_1000": 1.0,
    "replace_1000": 10.0,
}
# Which peer figure each of ours is compared with (the peer's cold figure is load + render + attach).
PEER_CASE = {
    "cold_folder_20": "load_render_20",
    "cold_20": "load_render_20",
    "first_render_20": "render_20",
    "set_price_20": "set_price_20",
    "set_price_1000": "set_price_1000",
    "replace_1000": "replace_1000",
}
LABEL = {
    "cold_folder_20": "cold 20, from folder",
    "cold_20": "cold 20 (compile)",
    "first_render_20": "warm 20 (compiled)",
    "set_price_20": "setData price, 20",
    "set_price_1000": "setData price, 1000",
    "replace_1000": "replace 1000 items",
}
PEER_LABEL = {
    "load_render_20": "load+render+attach",
    "render_20": "render+attach",
    "set_price_20": "setData",
    "set_price_1000": "setData",
    "replace_1000": "setData",
}


def drinks(n: int, offset: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"d{i}", "name": f"Drink {i}", "price": 20 + (i % 13) + offset, "image": f"https://img.example/d{i}.jpg"}
        for i in range(n)
    ]


def data(n: int) -> dict[str, Any]:
    return {"title": "Menu", "keyword": "", "drinks": drinks(n), "selectedId": "d1"}


def median_ms(fn: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Median wall and median CPU (``time.process_time``) milliseconds of ``rounds`` calls."""
    wall, cpu = [], []
    for _ in range(rounds):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def compile_drink_list(pkg: SkillPackage) -> CompiledComponent:
    """A fresh compile of the drink-list from the package's sources (WXML parse + lower, WXSS
    parse + compile): a new CompiledComponent, so its per-node render cache starts empty."""
    component = compile_component(pkg, "drink-list", DiagnosticSink())
    assert component is not None
    return component


def cold_from_folder() -> None:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    CardRenderer(compile_drink_list(pkg)).render(data(20))


def ours(pkg: SkillPackage, component: CompiledComponent, rounds: int) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    out["cold_folder_20"] = median_ms(cold_from_folder, max(rounds // 3, 5))
    out["cold_20"] = median_ms(lambda: CardRenderer(compile_drink_list(pkg)).render(data(20)), rounds)
    out["first_render_20"] = median_ms(lambda: CardRenderer(component).render(data(20)), rounds)
    small = CardRenderer(component)
    small.render(data(20))
    counter = iter(range(10**9))
    out["set_price_20"] = median_ms(lambda: small.update({"drinks[3].price": 100 + next(counter)}), rounds)
    big = CardRenderer(component)
    big.render(data(1000))
    out["set_price_1000"] = median_ms(lambda: big.update({"drinks[3].price": 100 + next(counter)}), rounds)
    replacements = iter([drinks(1000, k + 1) for k in range(rounds)])
    out["replace_1000"] = median_ms(lambda: big.update({"drinks": next(replacements)}), rounds)
    return out


def peer(rounds: int) -> dict[str, dict[str, float]] | None:
    node = shutil.which("node")
    if node is None or not (PEERS / "miniprogram-simulate").is_dir() or not (PEERS / "jsdom").is_dir():
        return None
    proc = subprocess.run(
        [node, str(ROOT / "bench" / "peer_simulate.js"), str(PEERS), str(CARD), str(rounds)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, dict[str, float]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    component = compile_drink_list(pkg)
    # Warm up caches the way a long-running server has them warm.
    ours(pkg, component, 3)
    mine = ours(pkg, component, args.rounds)
    theirs = peer(max(args.rounds // 3, 5))
    print("medians, ms: wall / CPU; ratio = peer / skillc (above 1: skillc is faster)")
    head = f"{'case':<22}{'skillc wall/CPU':>17}{'goal':>6}  {'miniprogram-simulate':<33}{'ratio wall/CPU':>18}"
    print(head)
    for case, (wall, cpu) in mine.items():
        goal = TARGETS_MS[case]
        goal_s = f"{goal:6.2f}" if goal is not None else "     -"
        other = theirs.get(PEER_CASE[case]) if theirs else None
        if other:
            peer_s = f"{PEER_LABEL[PEER_CASE[case]]:<19}{other['wall']:7.2f} /{other['cpu']:6.2f}"
            ratio = f"{other['wall'] / wall:8.1f}x /{other['cpu'] / cpu:7.1f}x"
        else:
            peer_s, ratio = f"{'-':<33}", f"{'-':>18}"
        print(f"{LABEL[case]:<22}{wall:8.3f} /{cpu:7.3f}{goal_s}  {peer_s}{ratio}")
    if theirs is None:
        print("(miniprogram-simulate not installed: run `make peers` for the side-by-side figures)")


if __name__ == "__main__":
    main()
