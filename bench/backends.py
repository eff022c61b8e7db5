"""Backend render cost per document size, against two peers: the stdlib floor (json.dumps of the
same tree) and the time headless Chromium takes to load and lay out the HTML we produce.
Also: the structuredContent fallback card on a 200 KB result (time and card size).

Run: .venv/bin/python bench/backends.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Callable

from skillc.backends.cardspec_fallback import fallback_card
from skillc.backends.html_backend import render_html
from skillc.backends.registry import get_backend
from skillc.ir.render import TEXT, EventBinding, RenderDocument, RenderNode, to_plain
from skillc.ir.viewport import Viewport

VIEWPORT = Viewport(width=375, height=667)


def median_ms(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median of ``repeat`` runs, in ms (medians: the machine is shared and noisy)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _text(node_id: str, text: str, style: dict[str, str]) -> RenderNode:
    return RenderNode(node_id, "text", {}, style, None, [RenderNode(f"{node_id}/0", TEXT, {"text": text})])


def drink_list(items: int) -> RenderDocument:
    """A drink-list card with `items` drinks, shaped and styled like the coffee example's."""
    drinks = []
    for i in range(items):
        key = f"0/1/0[d{i}]"
        drinks.append(
            RenderNode(
                key,
                "view",
                {"hover-class": "drink-hover"},
                {"display": "inline-block", "width": "110px", "padding": "6px", "background-color": "#ffffff"},
                {"tap": EventBinding("onSelect", False, {"id": f"d{i}", "name": f"饮品 {i}"})},
                [
                    RenderNode(f"{key}/0", "image", {"src": f"https://img.example.com/{i}.png"}, {"width": "110px"}),
                    _text(f"{key}/1", f"饮品 {i}", {"display": "block", "font-size": "13px"}),
                    RenderNode(
                        f"{key}/2",
                        "view",
                        {},
                        {"display": "flex", "justify-content": "space-between"},
                        None,
                        [_text(f"{key}/2/0", f"¥{20 + i % 15}", {"color": "#c8742c", "font-weight": "600"})],
                    ),
                ],
            )
        )
    root = RenderNode(
        "0",
        "view",
        {},
        {"padding": "12px", "color": "#2b1d12"},
        None,
        [
            RenderNode(
                "0/0",
                "view",
                {},
                {"display": "flex"},
                None,
                [_text("0/0/0", "今日推荐", {"font-size": "17px", "font-weight": "600"})],
            ),
            RenderNode("0/1", "scroll-view", {"scroll-x": True}, {"white-space": "nowrap"}, None, drinks),
        ],
    )
    return RenderDocument(1, VIEWPORT, root)


def chromium_load_ms(docs: dict[int, RenderDocument]) -> dict[int, float]:
    """set_content + forced layout of our HTML, images answered locally; {} without a browser."""
    path = shutil.which("chromium")
    if path is None:
        return {}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {}
    out: dict[int, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 375, "height": 667})
        page.route("**/*", lambda route: route.fulfill(status=204))
        for items, doc in docs.items():
            html = render_html(doc)

            def load(html: str = html) -> None:
                page.set_content(html, wait_until="load")
                page.evaluate("document.body.getBoundingClientRect().height")

            out[items] = median_ms(load, repeat=5)
        browser.close()
    return out


def main() -> None:
    sizes = (3, 50, 500)
    docs = {n: drink_list(n) for n in sizes}
    nodes = {n: sum(1 for _ in doc.root.walk()) for n, doc in docs.items()}
    # The floor: the stdlib serialising the same tree the same way (sorted, indented, UTF-8).
    floor = {
        n: median_ms(lambda d=doc: json.dumps(to_plain(d), sort_keys=True, ensure_ascii=False, indent=2))
        for n, doc in docs.items()
    }
    print(f"{'backend':<10}{'items':>6}{'nodes':>7}{'ms':>9}{'nodes/ms':>10}{'x json.dumps':>14}")
    for name in ("json", "cardspec", "html"):
        backend = get_backend(name)
        for n, doc in docs.items():
            ms = median_ms(lambda b=backend, d=doc: b.render(d))
            print(f"{name:<10}{n:>6}{nodes[n]:>7}{ms:>9.3f}{nodes[n] / ms:>10.0f}{ms / floor[n]:>14.2f}")
    browser = chromium_load_ms(docs)
    if browser:
        print("\nhtml backend vs Chromium loading the same HTML (set_content + layout)")
        for n, doc in docs.items():
            ours = median_ms(lambda d=doc: render_html(d))
            print(f"  {n:>4} items: render {ours:.3f} ms, Chromium {browser[n]:.1f} ms, ratio {ours / browser[n]:.3f}")
    else:
        print("\n(chromium or playwright missing: no browser comparison)")

    result = {
        "orderId": "NO.1",
        "drinks": [
            {
                "id": f"d{i}",
                "name": f"饮品 {i}",
                "price": 28,
                "image": f"https://img.example.com/{i}.png",
                "desc": "x" * 200,
            }
            for i in range(700)
        ],
    }
    size = len(json.dumps(result, ensure_ascii=False).encode())
    ms = median_ms(lambda: fallback_card(result, title="饮品"))
    card_size = len(json.dumps(fallback_card(result, title="饮品"), ensure_ascii=False).encode())
    print(f"\nfallback_card: {size / 1024:.0f} KB structuredContent -> {card_size / 1024:.1f} KB card in {ms:.2f} ms")


if __name__ == "__main__":
    main()
