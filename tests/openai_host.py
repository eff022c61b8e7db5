"""A test host of OpenAI's Apps SDK widget runtime (``window.openai``), in headless Chromium.

No official package of that runtime is on npm (``@openai/apps-sdk-ui`` is a design system, not a
host), so tests/fixtures/openai-host/ is a host page written from OpenAI's published contract:
``runtime.js`` is ``window.openai`` inside the widget (globals, methods, ``openai:set_globals``),
``host.js`` the page that calls tools through the official MCP client and answers the widget. It
is driven exactly like the ext-apps AppBridge host (tests/apps_bridge.py): same origins, same
sandboxed cross-origin iframes with the CSP header, same ``window.appsHost`` calls.

Usage::

    with OpenAIHost.open(apps_browser, handle.url, apps_bridge_bundle) as host:
        host.call_tool("searchDrinks", {"keyword": "latte"})
        host.frame(0).locator(".skillc-slot").wait_for()
        host.recorded("widgetStates")
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from tests.apps_bridge import AppsHost
from tests.conftest import FIXTURES

OPENAI_HOST_DIR = FIXTURES / "openai-host"


class OpenAIHost(AppsHost):
    """The window.openai host page; everything else is :class:`AppsHost`'s."""

    def _host_route(self, route: Any) -> None:
        path = urlsplit(route.request.url).path
        files = {
            "/": ("text/html; charset=utf-8", (OPENAI_HOST_DIR / "host.html").read_bytes()),
            "/host.js": ("text/javascript; charset=utf-8", (OPENAI_HOST_DIR / "host.js").read_bytes()),
            "/runtime.js": ("text/javascript; charset=utf-8", (OPENAI_HOST_DIR / "runtime.js").read_bytes()),
            "/bridge.js": ("text/javascript; charset=utf-8", self._bundle),
        }
        if path not in files:
            route.fulfill(status=404, body=b"")
            return
        content_type, body = files[path]
        route.fulfill(status=200, headers={"content-type": content_type, "cache-control": "no-store"}, body=body)
