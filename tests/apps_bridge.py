"""A test MCP Apps host on the official ext-apps AppBridge, in headless Chromium.

tests/fixtures/apps-bridge-host/ holds the host page; this module bundles it (esbuild, once per
session), serves it from a fake origin through Playwright routes, and drives it:

- ``http://apps-host.test/`` is the host page, with the bundle at ``/bridge.js``: an MCP ``Client``
  over Streamable HTTP to the skillc server (real loopback HTTP; the server must allow the
  origin: ``ServeOptions(allowed_origins=(HOST_ORIGIN,))``) and one ``AppBridge`` per view;
- ``http://apps-sandbox.test/view/<n>`` is each view's document, with a ``Content-Security-Policy``
  response header computed from the resource's ``_meta.ui.csp`` (:func:`csp_header`), mounted in
  an iframe with ``sandbox="allow-scripts allow-forms"``: a different origin from the host page
  and, without allow-same-origin, an opaque one;
- ``https://...`` (card images) is answered 204 with nothing; any other request is aborted, so
  nothing leaves the machine.

Usage::

    from tests.apps_bridge import AppsHost, apps_bridge_bundle, apps_browser, schema_failures, server_calls

    with AppsHost.open(apps_browser, handle.url, apps_bridge_bundle) as host, server_calls(handle) as calls:
        result = host.call_tool("searchDrinks", {"keyword": "latte"})
        host.frame(0).locator('[data-uid="0.1.0[d02]"]').wait_for()
        assert calls.counts["searchDrinks"] == 1
        assert schema_failures(host.log) == []
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import pytest

from skillc.server.runner import ServeHandle
from tests.conftest import FIXTURES, PEERS, require
from tests.test_html_chromium import CHROMIUM_ARGS  # the flags every Chromium test uses

HOST_ORIGIN = "http://apps-host.test"
SANDBOX_ORIGIN = "http://apps-sandbox.test"
HOST_DIR = FIXTURES / "apps-bridge-host"
SCHEMA_PATH = (
    PEERS / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "generated" / "schema.json"
)


# Resolves after two animation frames of the page it runs in (a ResizeObserver's callback, a view
# reporting its size, runs within the first), or after 200 ms in a frame Chromium does not paint.
TWO_FRAMES_JS = """() => new Promise(done => {
  requestAnimationFrame(() => requestAnimationFrame(() => done(true)))
  setTimeout(() => done(false), 200)
})"""


# The host page (a public-looking origin, not a secure context) fetches the MCP server on loopback:
# Chromium's Local Network Access checks refuse that ("the request client is not a secure context
# and the resource is in more-private address space `loopback`"). A real host reaches its servers
# from its own backend or a loopback page; here the check is off so the browser client can speak to
# the real server directly (CORS and the server's Origin guard still apply).
HOST_CHROMIUM_ARGS = [*CHROMIUM_ARGS, "--disable-features=LocalNetworkAccessChecks"]

# Chromium's console text for a CSP violation: "Loading the image '...' violates the following
# Content Security Policy directive: ...", "Connecting to '...' violates ..." (older Chromium:
# "Refused to load ...").
_CSP_CONSOLE = re.compile(r"^Refused to |Content Security Policy", re.IGNORECASE)


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def apps_bridge_bundle(node_bin: str, peers_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """entry.mjs bundled for the browser (ESM) with the pinned esbuild; the bundle's path."""
    require((peers_dir / "esbuild").is_dir(), "esbuild is not installed in tests/peers (make peers)")
    require(
        (peers_dir / "@modelcontextprotocol" / "ext-apps").is_dir(), "@modelcontextprotocol/ext-apps is not installed"
    )
    out = tmp_path_factory.mktemp("apps-bridge") / "bridge.js"
    # esbuild's JS API through node (its .bin entry may be the native binary or a JS shim).
    # entry.mjs lives outside node_modules' tree: nodePaths tells esbuild where the packages are.
    options = {
        "entryPoints": [str(HOST_DIR / "entry.mjs")],
        "bundle": True,
        "format": "esm",
        "platform": "browser",  # the "browser" export conditions: the client's browser shims
        "outfile": str(out),
        "nodePaths": [str(peers_dir)],
        "logLevel": "warning",
    }
    script = "require(process.argv[1]).buildSync(JSON.parse(process.argv[2]))"
    done = subprocess.run(
        [node_bin, "-e", script, str(peers_dir / "esbuild"), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"esbuild failed on {HOST_DIR / 'entry.mjs'}:\n{done.stderr}"
    return out


@pytest.fixture(scope="module")
def apps_browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium (Playwright, the system binary) for the AppsHosts of a module.
    Module scope, not session: only one sync Playwright may run at a time in a thread, and the
    other Chromium test modules start their own."""
    require(find_spec("playwright") is not None, "the playwright Python package is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=HOST_CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# -- CSP ---------------------------------------------------------------------------------------

_SOURCE = re.compile(r"^[^;,\s'\"]+$")  # one source: no separator a policy could be broken out with


def _sources(csp: Mapping[str, Any] | None, key: str) -> list[str]:
    values = (csp or {}).get(key) or []
    return [v for v in values if isinstance(v, str) and _SOURCE.match(v)]


def csp_header(csp: Mapping[str, Any] | None) -> str:
    """The Content-Security-Policy of a view, from its resource's ``_meta.ui.csp``: the MCP Apps
    spec's default, widened only by the domains the resource declares (``resourceDomains`` ->
    img-src and font-src, ``connectDomains`` -> connect-src, ``frameDomains`` -> frame-src,
    ``baseUriDomains`` -> base-uri). A domain with a quote, space, comma or semicolon is dropped."""
    resources = _sources(csp, "resourceDomains")
    connect = _sources(csp, "connectDomains")
    frames = _sources(csp, "frameDomains")
    base = _sources(csp, "baseUriDomains")
    directives = [
        "default-src 'none'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        " ".join(["img-src 'self' data:", *resources]),
        "media-src 'self' data:",
        "font-src " + (" ".join(resources) or "'none'"),
        "connect-src " + (" ".join(connect) or "'none'"),
        "frame-src " + (" ".join(frames) or "'none'"),
        "object-src 'none'",
        "base-uri " + (" ".join(base) or "'self'"),
    ]
    return "; ".join(directives)


# -- the host ----------------------------------------------------------------------------------


@dataclass
class ServedView:
    """A view document as the harness served it."""

    index: int
    uri: str
    url: str
    html: str
    csp: dict[str, Any] | None
    headers: dict[str, str]


class AppsHost:
    """The host page in its own browser context, driven from Python. Open with :meth:`open`."""

    def __init__(self, context: Any, page: Any, server_url: str, bundle: Path) -> None:
        self.context = context
        self.page = page
        self.server_url = server_url
        self.views: list[ServedView] = []
        self.console: list[dict[str, Any]] = []
        self._errors: list[str] = []
        self._bundle = bundle.read_bytes()
        self._server = urlsplit(server_url)
        self.connection: dict[str, Any] = {}
        self.last_frame: int | None = None  # the iframe index of the last call_tool's view

    @classmethod
    def open(
        cls,
        browser: Any,
        server_url: str,
        bundle: Path,
        *,
        visibility: Mapping[str, Sequence[str]] | None = None,
        viewport: Mapping[str, int] | None = None,
    ) -> AppsHost:
        """A fresh context and page, the host page loaded and its MCP client connected to
        ``server_url``. ``visibility`` overrides tools' ``_meta.ui.visibility`` as the host sees
        it (to check that the host refuses a view's call to a tool the app may not see)."""
        context = browser.new_context(viewport=dict(viewport or {"width": 400, "height": 900}), device_scale_factor=1)
        page = context.new_page()
        host = cls(context, page, server_url, bundle)
        try:
            host._install()
            page.goto(f"{HOST_ORIGIN}/", wait_until="load")
            page.wait_for_function("() => window.appsHost && window.appsHost.ready")
            if visibility:
                page.evaluate(
                    "v => Object.assign(window.appsHost.visibilityOverrides, v)",
                    {k: list(v) for k, v in visibility.items()},
                )
            host.connection = page.evaluate("url => window.appsHost.connect(url)", server_url)
        except BaseException:
            context.close()
            raise
        return host

    def _install(self) -> None:
        page = self.page
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._errors.append(f"pageerror: {error}"))
        page.on("crash", lambda _page: self._errors.append("the page crashed"))
        page.expose_function("__appsHostServeView", self._serve_view)
        # Routes: the last registered wins. First the catch-all: loopback (the MCP server) passes
        # untouched, anything else that no route below serves is aborted.
        page.route(lambda url: not self._is_server(url), lambda route: route.abort("blockedbyclient"))
        page.route("https://**/*", lambda route: route.fulfill(status=204, body=b""))  # card images
        page.route(f"{HOST_ORIGIN}/**", self._host_route)
        page.route(f"{SANDBOX_ORIGIN}/**", self._sandbox_route)

    def _is_server(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme == self._server.scheme and parts.netloc == self._server.netloc

    def _on_console(self, message: Any) -> None:
        # Console messages of every frame, views included (Playwright reports out-of-process
        # iframes' console on the page).
        location = message.location if isinstance(message.location, dict) else {}
        self.console.append({"type": message.type, "text": message.text, "url": location.get("url", "")})

    def _host_route(self, route: Any) -> None:
        path = urlsplit(route.request.url).path
        files = {
            "/": ("text/html; charset=utf-8", (HOST_DIR / "host.html").read_bytes()),
            "/host.js": ("text/javascript; charset=utf-8", (HOST_DIR / "host.js").read_bytes()),
            "/bridge.js": ("text/javascript; charset=utf-8", self._bundle),
        }
        if path not in files:
            route.fulfill(status=404, body=b"")
            return
        content_type, body = files[path]
        route.fulfill(status=200, headers={"content-type": content_type, "cache-control": "no-store"}, body=body)

    def _serve_view(self, payload: dict[str, Any]) -> str:
        index = int(payload["index"])
        url = f"{SANDBOX_ORIGIN}/view/{index}"
        headers = {
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": csp_header(payload.get("csp")),
            "cache-control": "no-store",
        }
        self.views.append(ServedView(index, payload["uri"], url, payload["html"], payload.get("csp"), headers))
        return url

    def _sandbox_route(self, route: Any) -> None:
        match = re.fullmatch(r"/view/(\d+)", urlsplit(route.request.url).path)
        view = next((v for v in self.views if match and v.index == int(match.group(1))), None)
        if view is None:
            route.fulfill(status=404, body=b"")
            return
        route.fulfill(status=200, headers=view.headers, body=view.html.encode("utf-8"))

    # -- driving --------------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The model calls a tool: tools/call through the host's client; a tool with a ui resource
        gets a new iframe, tool-input and tool-result. Returns the CallToolResult."""
        answer = self.page.evaluate("([n, a]) => window.appsHost.callTool(n, a)", [name, dict(arguments or {})])
        self.last_frame = answer["frame"]
        return cast("dict[str, Any]", answer["result"])

    def set_theme(self, theme: str) -> None:
        """host-context-changed to every view: the theme and its style variables."""
        self.page.evaluate("t => window.appsHost.setTheme(t)", theme)

    def set_container(self, index: int, dims: Mapping[str, int]) -> None:
        """host-context-changed to view ``index``: containerDimensions (and the iframe resized)."""
        self.page.evaluate("([i, d]) => window.appsHost.setContainer(i, d)", [index, dict(dims)])

    # -- reading --------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return cast("dict[str, Any]", self.page.evaluate("() => window.appsHost.snapshot()"))

    @property
    def log(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message between a view and the host: ``{direction: "view->host" |
        "host->view", frame, kind: request|notification|response|error, id, method, params |
        result | error, message}`` (a response carries its request's method)."""
        return cast("list[dict[str, Any]]", self.page.evaluate("() => window.appsHost.snapshot().log"))

    def view_messages(self, index: int | None = None) -> list[dict[str, Any]]:
        """The log's view->host messages (of view ``index``, or of all)."""
        return [m for m in self.log if m["direction"] == "view->host" and (index is None or m["frame"] == index)]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The views' tools/call: ``{frame, name, arguments, allowed, result | error}``."""
        return cast("list[dict[str, Any]]", self.page.evaluate("() => window.appsHost.snapshot().toolCalls"))

    def recorded(self, kind: str) -> list[dict[str, Any]]:
        """``messages`` (ui/message), ``modelContext``, ``openLinks``, ``displayModes``, ``logging``:
        ``{frame, params}`` each."""
        return cast("list[dict[str, Any]]", self.page.evaluate("k => window.appsHost.snapshot()[k]", kind))

    @property
    def protocol_version(self) -> str | None:
        """The MCP protocol version the host's client negotiated with the server."""
        return self.connection.get("protocolVersion")

    def frame(self, index: int) -> Any:
        """A Playwright FrameLocator for view ``index``'s iframe."""
        return self.page.frame_locator(f'iframe[data-index="{index}"]')

    def iframe(self, index: int) -> Any:
        """The iframe element (a Locator) of view ``index``."""
        return self.page.locator(f'iframe[data-index="{index}"]')

    def content_frame(self, index: int) -> Any:
        """The Playwright Frame of view ``index`` (for ``evaluate`` inside the view)."""
        handle = self.iframe(index).element_handle()
        frame = handle.content_frame() if handle else None
        assert frame is not None, f"view {index} has no frame"
        return frame

    def iframe_height(self, index: int) -> float:
        """The iframe's CSS height in px, as the host set it."""
        return float(self.iframe(index).evaluate("el => parseFloat(getComputedStyle(el).height)"))

    def size_reports(self, index: int) -> list[dict[str, Any]]:
        """The ui/notifications/size-changed params view ``index`` sent, in order."""
        return cast("list[dict[str, Any]]", self.page.evaluate("i => window.appsHost.snapshot().sizes[i] || []", index))

    @property
    def csp_violations(self) -> list[str]:
        """CSP violations of the host page and every view (from the browser console, which
        reports a sandboxed cross-origin frame's violations too, and the host's own listener)."""
        from_console = [c["text"] for c in self.console if _CSP_CONSOLE.search(c["text"])]
        own = [json.dumps(v) for v in self.page.evaluate("() => window.appsHost.snapshot().cspViolations")]
        return from_console + own

    @property
    def errors(self) -> list[str]:
        """Uncaught errors of the host page and the views, plus the host's transport and bridge
        errors."""
        host = self.page.evaluate("() => window.appsHost ? window.appsHost.snapshot().errors : []")
        return [*self._errors, *cast("list[str]", host)]

    def settle(self, index: int = 0, timeout_s: float = 30.0) -> None:
        """Wait until view ``index`` has stopped resizing: two frames of the view pass with no new
        size-changed and the iframe's height unchanged. Playwright computes a click's point before
        it sends the click; if the host resizes the iframe in between (a card just shown reports
        its height), the click lands where the element was, and is lost."""
        frame = self.content_frame(index)
        deadline = time.monotonic() + timeout_s
        seen: tuple[int, float] | None = None
        while True:
            frame.evaluate(TWO_FRAMES_JS)
            now = (len(self.size_reports(index)), self.iframe_height(index))
            if now == seen:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"view {index} still resizing after {timeout_s} s: {now}")
            seen = now

    def tap(self, index: int, target: Any) -> None:
        """The user taps ``target`` (a Locator in view ``index``) once it is shown and the view
        has stopped resizing."""
        target.wait_for()
        self.settle(index)
        target.click()

    def wait_for(self, predicate_js: str, arg: Any = None, timeout_ms: float = 10_000) -> None:
        """Wait until ``predicate_js`` (a function of ``(state, arg)``) holds for the host state."""
        self.page.wait_for_function(
            f"([arg]) => ({predicate_js})(window.appsHost.state, arg)", arg=[arg], timeout=timeout_ms
        )

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> AppsHost:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_exc: object) -> None:
        try:
            if kind is not None:
                self.report()
        finally:
            self.close()

    def report(self, last: int = 40) -> None:
        """What a failing test's reader needs (pytest shows it under "Captured stderr"): the page's
        errors and the last JSON-RPC messages between the views and the host."""
        try:
            errors, log = self.errors, self.log[-last:]
        except Exception as why:  # a crashed or closed page: say so rather than hide the test's own error
            print(f"apps host: no report ({why})", file=sys.stderr)
            return
        print(f"apps host: errors {errors}", file=sys.stderr)
        for entry in log:
            print(f"apps host: {json.dumps(entry, ensure_ascii=False)[:600]}", file=sys.stderr)


# -- what the server itself received -------------------------------------------------------------


@dataclass
class ServerCalls:
    """tools/call as the server's tool registry received them (whoever sent them)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, arguments: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append((name, arguments))

    @property
    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(name for name, _ in self.calls)

    def named(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [args for n, args in self.calls if n == name]


@contextmanager
def server_calls(handle: ServeHandle) -> Iterator[ServerCalls]:
    """Count the calls ``handle``'s server runs, per tool: wraps its ToolRegistry.call for the
    duration of the block (the registry is looked up on every tools/call, so this sees them all)."""
    registry = handle.prepared.server.tools
    original: Callable[..., Any] = registry.call
    seen = ServerCalls()

    async def counted(ctx: Any, params: Any) -> Any:
        seen.add(params.name, dict(params.arguments or {}))
        return await original(ctx, params)

    registry.call = counted  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        registry.call = original  # type: ignore[method-assign]


def wait_until(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``check`` (for state outside the page, e.g. server counts)."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# -- the ext-apps JSON schema ------------------------------------------------------------------


@cache
def _schema_definitions() -> dict[str, dict[str, Any]]:
    """schema.json's definitions of messages, by method (``ui/initialize`` -> McpUiInitializeRequest)."""
    root = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    by_method: dict[str, dict[str, Any]] = {}
    for definition in root["$defs"].values():
        method = definition.get("properties", {}).get("method", {}).get("const")
        if isinstance(method, str):
            by_method[method] = definition
    return by_method


@cache
def _result_definitions() -> dict[str, dict[str, Any]]:
    """Result definitions by request method (``ui/resource-teardown`` -> McpUiResourceTeardownResult)."""
    root = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    defs = root["$defs"]
    out: dict[str, dict[str, Any]] = {}
    for name, definition in defs.items():
        method = definition.get("properties", {}).get("method", {}).get("const")
        result = defs.get(name.removesuffix("Request") + "Result") if name.endswith("Request") else None
        if isinstance(method, str) and result is not None:
            out[method] = result
    return out


def schema_failures(log: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each view->host message checked against ext-apps' schema.json (draft 2020-12), found by
    method, with ``jsonrpc`` and ``id`` stripped (the definitions are closed). A ``ui/`` method the
    schema does not define fails; MCP methods (tools/call, notifications/message, ...) are outside
    schema.json and not checked here. A view's response to a host request is checked against the
    request's result definition. Returns one line per failure."""
    from jsonschema import Draft202012Validator

    messages = _schema_definitions()
    results = _result_definitions()
    failures: list[str] = []
    for n, entry in enumerate(log):
        if entry.get("direction") != "view->host":
            continue
        raw = dict(entry.get("message") or {})
        where = f"#{n} view {entry.get('frame')} {entry.get('method') or '(response)'}"
        if raw.get("jsonrpc") != "2.0":
            failures.append(f"{where}: not JSON-RPC 2.0 (jsonrpc={raw.get('jsonrpc')!r})")
        method = raw.get("method")
        if method is not None:
            body = {k: v for k, v in raw.items() if k not in ("jsonrpc", "id")}
            definition = messages.get(method)
            if definition is None:
                if str(method).startswith("ui/"):
                    failures.append(f"{where}: schema.json defines no {method}")
                continue
        else:
            definition = results.get(entry.get("method") or "")
            if definition is None or "result" not in raw:
                continue
            body = raw["result"]
        for error in Draft202012Validator(definition).iter_errors(body):
            path = "/".join(str(p) for p in error.absolute_path) or "(root)"
            failures.append(f"{where}: {path}: {error.message}")
    return failures
