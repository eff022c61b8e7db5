"""The debug server's own headless Chromium (Playwright): launched on demand, shared by the console
page (:class:`HeadlessConsole`) and the screenshot page (:mod:`.screenshot`), and told apart from
the one before it when it dies, so its users relaunch it instead of talking to a dead browser.

The executable is the system's ``chromium`` when there is one, else the browser Playwright
installed (``playwright install chromium``). Without Playwright or any browser, :meth:`launch`
fails with :class:`NoBrowser`, whose message says how to get one (:data:`INSTALL_HINT`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import shutil
from importlib.util import find_spec
from typing import Any

INSTALL_HINT = (
    "get a browser with `pip install 'skillc[debug]'` (Playwright) and a Chromium: "
    "`apt-get install chromium` or `playwright install chromium`"
)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

# A 1x1 grey PNG: what an offline console shows for every remote image.
GREY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4ceIEAAS0AlkWLoFAAAAAAElFTkSuQmCC"
)


class NoBrowser(RuntimeError):
    """No Chromium could be launched; the message says why and how to get one."""


def executable() -> str | None:
    """The system's Chromium, if it is on PATH."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def playwright_installed() -> bool:
    return find_spec("playwright") is not None


class Chromium:
    """One headless Chromium at a time. ``generation`` grows with each launch; :attr:`gone` is set
    when the current one disconnects (crashed, killed, closed)."""

    def __init__(self) -> None:
        self._pw: Any = None
        self.browser: Any = None
        self.generation = 0
        self.gone = asyncio.Event()
        self._lock = asyncio.Lock()

    @property
    def alive(self) -> bool:
        return self.browser is not None and not self.gone.is_set()

    async def launch(self) -> Any:
        """The running browser, launched first when there is none (or the last one died)."""
        async with self._lock:
            if self.alive:
                return self.browser
            await self._close()
            if not playwright_installed():
                raise NoBrowser(f"Playwright is not installed; {INSTALL_HINT}")
            from playwright.async_api import async_playwright

            self._pw = await async_playwright().start()
            try:
                browser = await self._pw.chromium.launch(
                    executable_path=executable(), headless=True, args=CHROMIUM_ARGS
                )
            except Exception as err:
                await self._close()
                raise NoBrowser(f"Chromium would not start ({_first_line(err)}); {INSTALL_HINT}") from err
            gone = self.gone = asyncio.Event()
            browser.on("disconnected", lambda _b: gone.set())
            self.browser = browser
            self.generation += 1
            return browser

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            if self.browser is not None:
                await self.browser.close()
        with contextlib.suppress(Exception):
            if self._pw is not None:
                await self._pw.stop()
        self.browser = self._pw = None

    async def close(self) -> None:
        async with self._lock:
            await self._close()
            self.gone.set()


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


async def local_only(route: Any, base_url: str) -> None:
    """Offline: requests to the debug server go through; remote images become a grey pixel; the rest fails."""
    request = route.request
    base = base_url.split("/", 3)[:3]
    if request.url.split("/", 3)[:3] == base or request.url.startswith(("about:", "data:")):
        await route.continue_()
    elif request.resource_type == "image":
        await route.fulfill(status=200, content_type="image/png", body=GREY_PNG)
    else:
        await route.abort()


class HeadlessConsole:
    """The debug console page open in :class:`Chromium` (the server's own console, ``?primary=1``).

    Runs on the server's own event loop: :meth:`start` once the server listens, :meth:`stop` before
    it exits; :meth:`wait_closed` returns when the browser under it died.
    """

    def __init__(
        self,
        url: str,
        *,
        width: int = 1280,
        height: int = 1000,
        offline: bool = False,
        chromium: Chromium | None = None,
    ) -> None:
        self.url = url
        self.offline = offline  # answer every request off the console's server locally (tests)
        self.size = {"width": width, "height": height}
        self.chromium = chromium or Chromium()
        self._context: Any = None
        self.page: Any = None

    @staticmethod
    def executable() -> str | None:
        return executable()

    async def start(self) -> None:
        from skillc.server.debugger.channel_sse import with_query

        browser = await self.chromium.launch()
        self._context = await browser.new_context(viewport=self.size, device_scale_factor=1)
        if self.offline:
            await self._context.route("**/*", lambda route: local_only(route, self.url))
        self.page = await self._context.new_page()
        for attempt in range(50):  # the server may start listening a moment after the browser
            try:
                await self.page.goto(with_query(self.url, primary="1"), wait_until="load")
                break
            except Exception:
                if attempt == 49 or not self.chromium.alive:
                    raise
                await asyncio.sleep(0.1)

    async def wait_closed(self) -> None:
        await self.chromium.gone.wait()

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            if self._context is not None:
                await self._context.close()
        self._context = self.page = None
