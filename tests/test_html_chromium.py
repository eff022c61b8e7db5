"""The html backend's output in a real headless Chromium (Debian's, driven by Playwright).

Each sample document is loaded with `set_content`; every network request is answered locally
(images get a tiny PNG, anything else is aborted and fails the test), so nothing leaves the
machine. Checked: the page is exactly as wide as the viewport, the screenshot is not blank, and
resolved styles from the IR are what the browser computes.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

import pytest

from skillc.backends.html_backend import render_html
from skillc.ir.render import RenderDocument
from tests.conftest import require
from tests.test_backends_samples import all_documents

pytestmark = pytest.mark.chromium

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# -- a minimal PNG codec (8-bit RGB/RGBA, not interlaced: what Chromium writes) ------------------


@dataclass
class Image:
    width: int
    height: int
    channels: int
    pixels: bytes  # unfiltered scanlines, `channels` bytes per pixel

    def luminance_variance(self) -> float:
        c = self.channels
        lum = [
            (299 * self.pixels[i] + 587 * self.pixels[i + 1] + 114 * self.pixels[i + 2]) // 1000
            for i in range(0, len(self.pixels), c * 7)  # every 7th pixel is plenty for a variance
        ]
        mean = sum(lum) / len(lum)
        return sum((v - mean) ** 2 for v in lum) / len(lum)


def png_encode(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def png_decode(data: bytes) -> Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color_type in (2, 6) and interlace == 0, (depth, color_type, interlace)
            channels = 3 if color_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    out = bytearray()
    prev = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = prev[i], prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        out += line
        prev = line
    return Image(width, height, channels, bytes(out))


def test_png_codec_round_trip() -> None:
    image = png_decode(png_encode(3, 2, (200, 116, 44)))
    assert (image.width, image.height, image.channels) == (3, 2, 3)
    assert image.pixels == bytes((200, 116, 44)) * 6
    assert image.luminance_variance() == 0


# -- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    require(find_spec("playwright") is not None, "the playwright Python package is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Loaded:
    doc: RenderDocument
    page: Any
    requested: list[str]
    screenshot: Image


TINY_PNG = png_encode(4, 4, (90, 140, 200))


@contextmanager
def load(browser: Any, doc: RenderDocument) -> Iterator[Loaded]:
    vp = doc.viewport
    context = browser.new_context(
        viewport={"width": vp.width, "height": vp.height}, device_scale_factor=1, color_scheme=vp.color_scheme
    )
    requested: list[str] = []

    def answer(route: Any) -> None:
        requested.append(route.request.url)
        if route.request.resource_type == "image":
            route.fulfill(status=200, content_type="image/png", body=TINY_PNG)
        else:
            route.abort()

    try:
        page = context.new_page()
        page.route("**/*", answer)
        page.set_content(render_html(doc), wait_until="load")
        yield Loaded(doc, page, requested, png_decode(page.screenshot(full_page=True)))
    finally:
        context.close()


# One page per document, shared by the checks on it: a page costs far more than a check.
@pytest.fixture(scope="module", params=sorted(all_documents()))
def rendered(request: pytest.FixtureRequest, browser: Any) -> Iterator[Loaded]:
    with load(browser, all_documents()[request.param]) as loaded:
        yield loaded


def test_page_is_exactly_as_wide_as_the_viewport(rendered: Loaded) -> None:
    width = rendered.doc.viewport.width
    page = rendered.page
    assert page.evaluate("document.documentElement.getBoundingClientRect().width") == width
    assert page.evaluate("document.body.getBoundingClientRect().width") == width
    # Nothing overflows sideways: a scroll-view scrolls inside itself, the page does not.
    assert page.evaluate("document.documentElement.scrollWidth") == width
    assert rendered.screenshot.width == width


def test_screenshot_is_not_blank(rendered: Loaded) -> None:
    shot = rendered.screenshot
    assert shot.height > 100
    assert shot.luminance_variance() > 50


def test_only_the_ir_images_are_requested(rendered: Loaded) -> None:
    named = {n.props["src"] for n in rendered.doc.root.walk() if n.type == "image"}
    assert set(rendered.requested) == named


def test_resolved_styles_are_the_computed_styles(rendered: Loaded) -> None:
    doc, page = rendered.doc, rendered.page

    def computed(uid: str, prop: str) -> str:
        return str(
            page.evaluate(
                '([uid, prop]) => getComputedStyle(document.querySelector(`[data-uid="${uid}"]`))'
                ".getPropertyValue(prop)",
                [uid, prop],
            )
        )

    root = doc.root
    assert computed(root.id, "padding-top") == root.style["padding"].split()[0]
    assert computed(root.id, "border-top-left-radius") == root.style["border-radius"]
    accents = [n for n in root.walk() if n.style.get("color") == "#c8742c"]
    assert accents, "every sample has an accent-coloured price or code"
    for node in accents:
        assert computed(node.id, "color") == "rgb(200, 116, 44)"
        assert computed(node.id, "font-size") == node.style["font-size"]
    scheme = page.evaluate("getComputedStyle(document.documentElement).colorScheme")
    assert scheme == doc.viewport.color_scheme


def test_scroll_view_scrolls_sideways(browser: Any) -> None:
    doc = all_documents()["drink-list-375-light"]
    with load(browser, doc) as loaded:
        metrics = loaded.page.evaluate(
            """() => { const s = document.querySelector('[data-uid="0/1"]');
                       const before = s.scrollLeft; s.scrollLeft = 20;
                       return [s.scrollWidth, s.clientWidth, before, s.scrollLeft,
                               getComputedStyle(s).overflowX]; }"""
        )
        scroll_width, client_width, before, after, overflow = metrics
        assert scroll_width > client_width
        assert (before, after, overflow) == (0, 20, "auto")
