"""Cards: 1000 taps on one drink-list card; per-tap latency and process RSS, against the peer.

    .venv/bin/python bench/cards.py [--taps 1000] [--drinks 3,50]

Per tap: the JS handler (onSelect: setData + sendFollowUpMessage), taking the setData changes,
the incremental re-render and the diff, measured on the card's own thread (``Card.event``); and
the same through ``CardHost.event`` (thread hop, SQLite write of data, no document copy). RSS is
sampled every 100 taps. CPU per tap is ``time.process_time`` over the taps divided by their
number (the whole process). The peer is miniprogram-simulate (j-component in jsdom) tapping the
same card the same way (bench/peer_tap.js: j-component's dispatch of ``tap`` on the item inside
the scroll-view, reaching its bindtap; handler + setData + DOM update), when node and the npm
peers are installed; its CPU is node's ``process.cpuUsage``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig

ROOT = Path(__file__).resolve().parents[1]
COFFEE = ROOT / "examples" / "coffee-skill"
PEERS = ROOT / "tests" / "peers" / "node_modules"
WXML = COFFEE / "components" / "drink-list" / "index.wxml"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def skill_with(drinks: int, root: Path) -> Path:
    """The coffee skill whose searchDrinks returns ``drinks`` items (the menu is generated)."""
    dest = root / "coffee"
    shutil.copytree(COFFEE, dest)
    menu = [
        {
            "id": f"d{i:02d}",
            "name": f"Drink {i}",
            "category": "coffee",
            "price": 20 + i % 13,
            "image": f"https://img.example/d{i}.jpg",
            "tags": [],
            "sizes": ["grande"],
            "temperatures": ["hot"],
        }
        for i in range(drinks)
    ]
    api = dest / "apis" / "searchDrinks.js"
    api.write_text(
        "module.exports = async function () {\n"
        f"  const drinks = {json.dumps(menu)}\n"
        "  const structuredContent = { keyword: '', total: drinks.length, drinks }\n"
        "  return { content: [{ type: 'text', text: 'menu' }], structuredContent }\n"
        "}\n"
    )
    return dest


async def measure(drinks: int, taps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = load_skill(skill_with(drinks, Path(tmp)), DiagnosticSink())
        assert pkg is not None
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=Path(tmp) / "state"))
        host = CardHost(runtime)
        out = await host.call("searchDrinks", {"limit": 20})
        assert out.card is not None, out.diagnostics
        card_id = out.card.card_id
        nodes = [n.id for n in out.card.document.root.walk() if n.events and "tap" in n.events][:2]
        live = host._live.get(card_id)  # the bench reaches in to time the card on its own thread
        assert live is not None

        def on_thread() -> tuple[list[float], list[float], float]:
            times, rss = [], []
            cpu0 = time.process_time()
            for i in range(taps):
                t0 = time.perf_counter()
                step = live.card.event(nodes[i % 2], "tap", None)
                times.append((time.perf_counter() - t0) * 1000)
                assert step.patches and not step.diagnostics
                if i % 100 == 0:
                    rss.append(rss_mb())
            cpu = time.process_time() - cpu0
            rss.append(rss_mb())
            return times, rss, cpu

        loop = asyncio.get_running_loop()
        core, rss, cpu_s = await loop.run_in_executor(live.executor, on_thread)
        hosted = []
        for i in range(taps):
            t0 = time.perf_counter()
            ev = await host.event(card_id, nodes[i % 2], with_document=False)
            hosted.append((time.perf_counter() - t0) * 1000)
            assert ev.patches
        rss.append(rss_mb())
        await host.close()
        runtime.close()
    core.sort()
    hosted.sort()
    return {
        "drinks": drinks,
        "median_ms": statistics.median(core),
        "p95_ms": core[int(len(core) * 0.95)],
        "cpu_ms": cpu_s * 1000 / taps,
        "host_median_ms": statistics.median(hosted),
        "rss_first_mb": rss[1] if len(rss) > 1 else rss[0],
        "rss_last_mb": rss[-1],
    }


def peer(drinks: int, taps: int) -> dict[str, float] | str:
    """The peer's figures, or why there are none."""
    node = shutil.which("node")
    if node is None or not (PEERS / "miniprogram-simulate").is_dir():
        return "node or the npm peers are not installed (make peers)"
    proc = subprocess.run(
        [node, str(ROOT / "bench" / "peer_tap.js"), str(PEERS), str(WXML), str(drinks), str(taps)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        return f"peer_tap.js failed: {proc.stderr.strip().splitlines()[-1:]}"
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--taps", type=int, default=1000)
    parser.add_argument("--drinks", default="3,50")
    args = parser.parse_args()
    print(f"{args.taps} taps on one drink-list card (python {sys.version.split()[0]})")
    for n in (int(x) for x in args.drinks.split(",")):
        r = asyncio.run(measure(n, args.taps))
        p = peer(n, args.taps)
        print(
            f"  {n:3} drinks: per tap median {r['median_ms']:.3f} ms, p95 {r['p95_ms']:.3f} ms, "
            f"CPU {r['cpu_ms']:.3f} ms; through CardHost.event {r['host_median_ms']:.3f} ms; "
            f"RSS after the first 100 taps {r['rss_first_mb']:.1f} MB, at the end {r['rss_last_mb']:.1f} MB "
            f"({r['rss_last_mb'] - r['rss_first_mb']:+.1f} MB)"
        )
        if isinstance(p, str):
            print(f"       peer (miniprogram-simulate): skipped, {p}")
        else:
            print(
                f"       peer (miniprogram-simulate, dispatch tap on the item): median {p['median']:.3f} ms, "
                f"p95 {p['p95']:.3f} ms, CPU {p['cpu_ms']:.3f} ms; skillc / peer: "
                f"{r['median_ms'] / p['median']:.2f}x wall (median), {r['cpu_ms'] / p['cpu_ms']:.2f}x CPU"
            )


if __name__ == "__main__":
    main()
