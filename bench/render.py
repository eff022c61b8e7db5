"""Render IR speed, side by side with WeChat's own component framework.

The same drink-list card (title, horizontal scroll-view, wx:for with wx:key, image/name/price
per item, a wx:if on the selection: examples/coffee-skill's drink-list) goes through skillc's
evaluator (template evaluation + style resolution + diff; no JavaScript) and through
miniprogram-simulate (j-component in jsdom, run with node) in the same run:

  first render with 20 items; setData of one item's price with 20 and with 1000 items;
  replacement of all 1000 items (same keys, new prices).

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
from skillc.frontend.package import load_skill  # noqa: E402
from skillc.ir.component import CompiledComponent, compile_component  # noqa: E402
from skillc.ir.evaluate import CardRenderer  # noqa: E402

CARD = ROOT / "examples" / "coffee-skill" / "components" / "drink-list" / "index.wxml"
PEERS = ROOT / "tests" / "peers" / "node_modules"
TARGETS_MS = {"first_render_20": 2.0, "set_price_20": 0.15, "set_price_1000": 1.0, "replace_1000": 20.0}


def drinks(n: int, offset: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"d{i}", "name": f"Drink {i}", "price": 20 + (i % 13) + offset, "image": f"https://img.example/d{i}.jpg"}
        for i in range(n)
    ]


def data(n: int) -> dict[str, Any]:
    return {"title": "Menu", "keyword": "", "drinks": drinks(n), "selectedId": "d1"}


def median_ms(fn: Callable[[], Any], rounds: int, setup: Callable[[], Any] | None = None) -> float:
    times = []
    for _ in range(rounds):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def ours(component: CompiledComponent, rounds: int) -> dict[str, float]:
    out: dict[str, float] = {}
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


def peer(rounds: int) -> dict[str, float] | None:
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
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    sink = DiagnosticSink()
    pkg = load_skill(ROOT / "examples" / "coffee-skill", sink)
    assert pkg is not None
    component = compile_component(pkg, "drink-list", sink)
    assert component is not None
    # Warm up caches the way a long-running server has them warm.
    ours(component, 3)
    mine = ours(component, args.rounds)
    theirs = peer(max(args.rounds // 3, 5))
    print(f"{'case':<18}{'skillc ms':>11}{'target':>9}{'simulate ms':>13}{'peer/skillc':>13}")
    for case, value in mine.items():
        other = theirs.get(case) if theirs else None
        ratio = f"{other / value:11.1f}x" if other else "          -"
        peer_ms = f"{other:13.2f}" if other else "            -"
        print(f"{case:<18}{value:11.3f}{TARGETS_MS[case]:9.2f}{peer_ms}{ratio}")
    if theirs is None:
        print("(miniprogram-simulate not installed: run `make peers` for the side-by-side figures)")


if __name__ == "__main__":
    main()
