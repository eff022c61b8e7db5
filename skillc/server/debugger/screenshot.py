"""take_screenshot: the current target captured in a page of the server's own headless Chromium.

The console page answers the command with the *scene* (:class:`Scene`): the target's document as
it stands (its live DOM serialised), the simulated device size, and the scroll positions of the
document and of every scrolled container. The server loads that document into a screenshot page
whose viewport is exactly the device size, at device pixel ratio 1, restores the scroll positions,
and captures the viewport (or one element's box, clipped to the viewport) through the DevTools
protocol. So the image is the device frame at full size whatever the console shows (the console
scales a large device down to fit its window; its iframe is never captured), and it works the same
when the console runs in the user's own browser (``--no-browser``): the server then launches a
headless Chromium just for screenshots, on the first one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from skillc.server.debugger.browser import Chromium, NoBrowser, local_only
from skillc.server.debugger.errors import DebuggerError

MAX_SIDE = 9999


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Scrolled(_Wire):
    uid: str
    x: float = 0
    y: float = 0


class Scene(_Wire):
    """What the console page answers to take_screenshot."""

    html: str
    width: int = Field(ge=1, le=MAX_SIDE)
    height: int = Field(ge=1, le=MAX_SIDE)
    scroll_x: float = 0
    scroll_y: float = 0
    scrolls: list[Scrolled] = Field(default_factory=list)
    uid: str | None = None


_RESTORE = """([x, y, scrolls]) => {
  const doc = document.scrollingElement || document.documentElement;
  doc.scrollLeft = x; doc.scrollTop = y;
  for (const s of scrolls) {
    const el = document.querySelector('[data-uid="' + CSS.escape(s.uid) + '"]');
    if (el) { el.scrollLeft = s.x; el.scrollTop = s.y; }
  }
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));
}"""

_RECT = """(uid) => {
  const el = document.querySelector('[data-uid="' + CSS.escape(uid) + '"]');
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {x: r.left, y: r.top, width: r.width, height: r.height};
}"""


class Shooter:
    """The screenshot page in ``chromium`` (one capture at a time; a new page after a relaunch)."""

    def __init__(self, chromium: Chromium, *, offline: bool = False, base_url: str = "http://127.0.0.1") -> None:
        self.chromium = chromium
        self.offline = offline
        self.base_url = base_url
        self._lock = asyncio.Lock()
        self._context: Any = None
        self._page: Any = None
        self._cdp: Any = None
        self._generation = -1
        self._loaded: tuple[bytes, int, int] | None = None  # the scene the page holds

    async def capture(self, raw: dict[str, Any], fmt: str, quality: int | None) -> dict[str, Any]:
        """``raw``: the console's scene. ``{data, width, height}`` of the image; DebuggerError on failure."""
        try:
            scene = Scene.model_validate(raw)
        except ValidationError as err:
            raise DebuggerError("SCREENSHOT_FAILED", f"the console answered no usable scene: {err}") from err
        async with self._lock:
            try:
                page, cdp = await self._ready()
            except NoBrowser as err:
                raise DebuggerError("SCREENSHOT_FAILED", f"screenshots need a headless Chromium: {err}") from err
            loaded = (hashlib.sha256(scene.html.encode()).digest(), scene.width, scene.height)
            if loaded != self._loaded:  # the same scene again (screenshot after screenshot) is loaded already
                self._loaded = None
                await page.set_viewport_size({"width": scene.width, "height": scene.height})
                await page.set_content(scene.html, wait_until="load")
                self._loaded = loaded
            await page.evaluate(_RESTORE, [scene.scroll_x, scene.scroll_y, [s.model_dump() for s in scene.scrolls]])
            clip = {"x": 0.0, "y": 0.0, "width": float(scene.width), "height": float(scene.height)}
            if scene.uid is not None:
                clip = _element_clip(await page.evaluate(_RECT, scene.uid), scene)
            params: dict[str, Any] = {"format": fmt, "clip": {**clip, "scale": 1}, "captureBeyondViewport": False}
            if quality is not None and fmt in ("jpeg", "webp"):
                params["quality"] = quality
            reply = await cdp.send("Page.captureScreenshot", params)
            return {"data": str(reply["data"])}

    async def _ready(self) -> tuple[Any, Any]:
        browser = await self.chromium.launch()
        if self._page is None or self._generation != self.chromium.generation or self._page.is_closed():
            with contextlib.suppress(Exception):
                if self._context is not None and self._generation == self.chromium.generation:
                    await self._context.close()
            self._context = await browser.new_context(viewport={"width": 375, "height": 667}, device_scale_factor=1)
            if self.offline:
                await self._context.route("**/*", lambda route: local_only(route, self.base_url))
            self._page = await self._context.new_page()
            self._cdp = await self._context.new_cdp_session(self._page)
            self._generation = self.chromium.generation
            self._loaded = None
        return self._page, self._cdp

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._context is not None:
                await self._context.close()
        self._context = self._page = self._cdp = None


def _element_clip(rect: dict[str, float] | None, scene: Scene) -> dict[str, float]:
    """The element's box within the device viewport; SCREENSHOT_FAILED when none of it is visible."""
    if rect is None:
        raise DebuggerError("ELEMENT_NOT_FOUND", f"no element uid={scene.uid} in the current target")
    x0, y0 = max(0.0, rect["x"]), max(0.0, rect["y"])
    x1 = min(float(scene.width), rect["x"] + rect["width"])
    y1 = min(float(scene.height), rect["y"] + rect["height"])
    if x1 - x0 < 1 or y1 - y0 < 1:
        raise DebuggerError(
            "SCREENSHOT_FAILED", f"uid {scene.uid} is outside the visible viewport or has no box (scroll_to it first)"
        )
    return {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0}
