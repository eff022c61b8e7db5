"""The coffee skill's card views under the official MCP Apps host implementation, in Chromium.

tests/apps_bridge.py hosts each view as Claude or VS Code do: an ext-apps 2.0.4 ``AppBridge`` per
view, the browser MCP ``Client`` over Streamable HTTP to the real skillc server, each view document
from another origin with the spec's CSP as a response header, in an iframe sandboxed to scripts
and forms. These tests check what holds today: the handshake, the searchDrinks card rendering and
sizing with no CSP violation or error, every view message valid against ext-apps' schema.json,
a tap reaching the server as skillc_card_event through the host's oncalltool, and the host's own
rules (app-invisible tools refused, ui/message recorded and nothing more).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from tests.apps_bridge import (
    HOST_ORIGIN,
    SANDBOX_ORIGIN,
    AppsHost,
    apps_bridge_bundle,
    apps_browser,
    csp_header,
    schema_failures,
    server_calls,
    wait_until,
)
from tests.conftest import COFFEE

pytestmark = pytest.mark.chromium
__all__ = ["apps_bridge_bundle", "apps_browser"]  # fixtures from tests/apps_bridge.py

DRINK = '[data-uid="0.1.0[d02]"]'
BADGE = '[data-uid="0.1.0[d02].2.1.0"]'
SEARCH = {"keyword": "latte"}

# A view's own JSON-RPC request, posted from inside the view's frame as the view would post it;
# resolves with the host's answer (the host answers over postMessage, to the view's window).
PROBE_JS = """([id, method, params]) => new Promise((resolve) => {
  const listen = (event) => {
    if (event.source !== window.parent || !event.data || event.data.id !== id) return
    window.removeEventListener('message', listen)
    resolve(event.data)
  }
  window.addEventListener('message', listen)
  window.parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*')
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("coffee-state")),
        consent=ConsentPolicy(approve_all=True),
        allowed_origins=(HOST_ORIGIN,),  # the host page's Origin; the server's guard refuses others
    )
    with ServeHandle.start(options) as handle:
        yield handle


@pytest.fixture
def host(apps_browser: Any, server: ServeHandle, apps_bridge_bundle: Path) -> Iterator[AppsHost]:
    with AppsHost.open(apps_browser, server.url, apps_bridge_bundle) as h:
        yield h


def show_search(host: AppsHost) -> dict[str, Any]:
    """The model calls searchDrinks; the card is on screen in iframe 0."""
    result = host.call_tool("searchDrinks", SEARCH)
    host.frame(0).locator(DRINK).wait_for()
    return result


def test_csp_header_is_the_spec_default_widened_by_declared_domains() -> None:
    assert csp_header(None) == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; font-src 'none'; connect-src 'none'; "
        "frame-src 'none'; object-src 'none'; base-uri 'self'"
    )
    wide = csp_header(
        {
            "resourceDomains": ["https://img.example", "https://x.example; script-src *"],
            "connectDomains": ["https://api.example"],
            "frameDomains": ["https://frame.example"],
            "baseUriDomains": ["https://base.example"],
        }
    )
    assert "img-src 'self' data: https://img.example;" in wide
    assert "font-src https://img.example;" in wide
    assert "connect-src https://api.example;" in wide
    assert "frame-src https://frame.example;" in wide
    assert wide.endswith("base-uri https://base.example")
    assert "x.example" not in wide  # a domain that would break out of its directive is dropped


def test_the_bundle_is_browser_only(apps_bridge_bundle: Path) -> None:
    code = apps_bridge_bundle.read_text(encoding="utf-8")
    # Self-contained (no bare import left for the browser to fail on) and no stdio transport.
    assert re.search(r"""^\s*import\b[^;]*?from\s*["'][^./]""", code, re.MULTILINE) is None
    assert "child_process" not in code and "cross-spawn" not in code
    (exports,) = re.findall(r"^export \{([^}]*)\};", code, re.MULTILINE)
    names = sorted(part.split(" as ")[-1].strip() for part in exports.split(","))
    assert names == ["AppBridge", "Client", "PostMessageTransport", "StreamableHTTPClientTransport"]


def test_the_client_negotiates_with_the_server(host: AppsHost) -> None:
    # The browser client (legacy negotiation, its default) gets the newest handshake version.
    assert host.protocol_version == "2025-11-25"
    assert host.connection["serverInfo"]["name"] == "coffee-skill"  # what is served (docs/serve.md)


def test_handshake_comes_first(host: AppsHost) -> None:
    show_search(host)
    host.wait_for("s => s.sizes[0].length > 0")
    sent = host.view_messages(0)
    first, second = sent[0], sent[1]
    assert (first["kind"], first["method"]) == ("request", "ui/initialize")
    params = first["params"]
    assert params["protocolVersion"] == "2026-01-26"
    assert params["appInfo"]["name"] and params["appInfo"]["version"]
    assert isinstance(params["appCapabilities"], dict)
    assert (second["kind"], second["method"]) == ("notification", "ui/notifications/initialized")

    # The host says nothing before its answer to ui/initialize, and delivers input then result
    # only after the view's initialized.
    to_view = [m for m in host.log if m["direction"] == "host->view"]
    assert [(m["kind"], m["method"]) for m in to_view[:3]] == [
        ("response", "ui/initialize"),
        ("notification", "ui/notifications/tool-input"),
        ("notification", "ui/notifications/tool-result"),
    ]
    answer = to_view[0]["result"]
    assert answer["protocolVersion"] == "2026-01-26"
    assert answer["hostContext"]["locale"] == "zh-CN"
    order = [(m["direction"], m["method"]) for m in host.log]
    assert order.index(("view->host", "ui/notifications/initialized")) < order.index(
        ("host->view", "ui/notifications/tool-input")
    )


def test_search_card_renders_sizes_and_stays_clean(host: AppsHost, server: ServeHandle) -> None:
    with server_calls(server) as calls:
        result = show_search(host)
        frame = host.frame(0)
        names = [d["name"] for d in result["structuredContent"]["drinks"]]
        assert len(names) >= 3
        text = frame.locator("body").inner_text()
        assert all(name in text for name in names), (names, text)

        # The view reports its size; the iframe follows the last report.
        host.wait_for("s => s.sizes[0].length > 0")
        host.page.wait_for_timeout(300)  # let pending reports (images, fonts) arrive
        reports = host.size_reports(0)
        assert reports and all(r["height"] > 0 for r in reports)
        assert host.iframe_height(0) == reports[-1]["height"]
        assert host.iframe_height(0) >= frame.locator(DRINK).bounding_box()["height"]

        # The model's one call, counted on the server: the host's client called searchDrinks
        # exactly once and the view nothing yet.
        assert calls.counts == {"searchDrinks": 1}

    assert host.csp_violations == []
    assert host.errors == []
    assert schema_failures(host.log) == []


def test_the_view_is_sandboxed_cross_origin_with_the_spec_csp(host: AppsHost, server: ServeHandle) -> None:
    show_search(host)
    (served,) = host.views
    assert served.url.startswith(SANDBOX_ORIGIN + "/")
    assert served.csp == {"resourceDomains": ["https://img.morningbeans.example"]}
    assert served.headers["content-security-policy"] == csp_header(served.csp)
    assert host.iframe(0).get_attribute("sandbox") == "allow-scripts allow-forms"
    assert host.page.evaluate("location.origin") == HOST_ORIGIN

    view = host.content_frame(0)
    # Opaque origin (no allow-same-origin): no way into the host page.
    assert view.evaluate("origin") == "null"
    assert view.evaluate("() => { try { return !!window.parent.document } catch (e) { return e.name } }") == (
        "SecurityError"
    )
    # The CSP header is in force: connect-src 'none' stops a fetch to the MCP server, img-src
    # admits only the declared image domain (and data:).
    fetched = view.evaluate(
        "url => fetch(url, {method: 'POST', body: '{}'}).then(() => 'fetched', e => e.name)", server.url
    )
    assert fetched == "TypeError"
    loaded = view.evaluate("""() => Promise.all(['https://img.morningbeans.example/x.png', 'https://elsewhere.example/x.png']
      .map(src => new Promise(resolve => {
        const img = new Image()
        img.onload = img.onerror = () => resolve(src)
        img.src = src
      })))""")
    assert len(loaded) == 2
    host.page.wait_for_timeout(200)
    violations = host.csp_violations
    assert any("connect-src" in v for v in violations), violations
    assert any("elsewhere.example" in v and "img-src" in v for v in violations), violations
    assert not any("'https://img.morningbeans.example/x.png'" in v for v in violations), violations

    # Errors of the view reach the harness too (so "no errors" above means something).
    view.evaluate("() => { setTimeout(() => { throw new Error('view boom') }) }")
    host.page.wait_for_timeout(200)
    assert any("view boom" in e for e in host.errors), host.errors


def test_a_tap_reaches_the_server_through_oncalltool(host: AppsHost, server: ServeHandle) -> None:
    show_search(host)
    frame = host.frame(0)
    with server_calls(server) as calls:
        frame.locator(DRINK).click()
        badge = frame.locator(BADGE)
        badge.wait_for()
        assert badge.inner_text() == "已选"
        assert wait_until(lambda: calls.counts["skillc_card_event"] >= 1)
        assert calls.counts["skillc_card_event"] == 1
        (event,) = calls.named("skillc_card_event")

    first = host.tool_calls[0]
    assert first["frame"] == 0 and first["name"] == "skillc_card_event" and first["allowed"] is True
    assert first["arguments"] == event
    assert event["event"] == "tap" and event["nodeId"].startswith("0.1.0[d02]")
    assert "error" not in first and first["result"]["isError"] is False
    assert host.errors == []
    assert host.csp_violations == []
    assert schema_failures(host.log) == []


def test_the_host_refuses_tools_the_app_may_not_see(
    apps_browser: Any, server: ServeHandle, apps_bridge_bundle: Path
) -> None:
    # As if the server had declared confirmOrder model-only: a view may not call it.
    with AppsHost.open(apps_browser, server.url, apps_bridge_bundle, visibility={"confirmOrder": ["model"]}) as host:
        show_search(host)
        view = host.content_frame(0)
        with server_calls(server) as calls:
            refused = view.evaluate(
                PROBE_JS, ["probe-1", "tools/call", {"name": "confirmOrder", "arguments": {"drinkId": "d02"}}]
            )
            unknown = view.evaluate(PROBE_JS, ["probe-2", "tools/call", {"name": "noSuchTool", "arguments": {}}])
            allowed = view.evaluate(PROBE_JS, ["probe-3", "tools/call", {"name": "searchDrinks", "arguments": SEARCH}])
            assert "not visible to apps" in refused["error"]["message"]
            assert "unknown tool" in unknown["error"]["message"]
            assert allowed["result"]["isError"] is False
            assert calls.counts == {"searchDrinks": 1}  # the refused ones never reached the server
        calls_seen = [(c["name"], c["allowed"]) for c in host.tool_calls]
        assert calls_seen == [("confirmOrder", False), ("noSuchTool", False), ("searchDrinks", True)]


def test_requests_without_tools_are_recorded_and_answered(host: AppsHost, server: ServeHandle) -> None:
    show_search(host)
    view = host.content_frame(0)
    with server_calls(server) as calls:
        said = {"role": "user", "content": [{"type": "text", "text": "我要一杯燕麦拿铁"}]}
        assert view.evaluate(PROBE_JS, ["m-1", "ui/message", said])["result"] == {}
        context = {"content": [{"type": "text", "text": "the user looked at lattes"}]}
        assert view.evaluate(PROBE_JS, ["m-2", "ui/update-model-context", context])["result"] == {}
        link = {"url": "https://morningbeans.example/menu"}
        assert view.evaluate(PROBE_JS, ["m-3", "ui/open-link", link])["result"] == {}
        mode = view.evaluate(PROBE_JS, ["m-4", "ui/request-display-mode", {"mode": "fullscreen"}])
        assert mode["result"] == {"mode": "inline"}
        view.evaluate("""() => window.parent.postMessage({jsonrpc: '2.0', method: 'notifications/message',
          params: {level: 'info', logger: 'probe', data: 'hello'}}, '*')""")
        host.wait_for("s => s.logging.length > 0")
        host.page.wait_for_timeout(200)
        # A ui/message makes this host call nothing (a real host would start a model turn).
        assert calls.counts == {}
    assert host.tool_calls == []
    assert [m["params"] for m in host.recorded("messages")] == [said]
    assert [m["params"] for m in host.recorded("modelContext")] == [context]
    assert [m["params"] for m in host.recorded("openLinks")] == [link]
    assert [m["params"] for m in host.recorded("displayModes")] == [{"mode": "fullscreen"}]
    assert host.recorded("logging")[0]["params"]["data"] == "hello"
    assert schema_failures(host.log) == []


def test_schema_check_catches_a_bad_message(host: AppsHost) -> None:
    show_search(host)
    view = host.content_frame(0)
    view.evaluate("""() => window.parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/size-changed',
      params: {width: '375', extra: 1}}, '*')""")
    view.evaluate("() => window.parent.postMessage({jsonrpc: '2.0', method: 'ui/no-such-thing', params: {}}, '*')")
    host.page.wait_for_timeout(200)
    failures = schema_failures(host.log)
    assert any("size-changed" in f and "width" in f for f in failures), failures
    assert any("size-changed" in f and "extra" in f for f in failures), failures
    assert any("defines no ui/no-such-thing" in f for f in failures), failures


def test_each_call_gets_its_own_view(host: AppsHost, server: ServeHandle) -> None:
    with server_calls(server) as calls:
        host.call_tool("searchDrinks", SEARCH)
        host.call_tool("searchDrinks", {"keyword": "美式"})
        host.frame(0).locator(DRINK).wait_for()
        host.frame(1).locator("[data-uid^='0.1.0[']").first.wait_for()
        assert calls.counts == {"searchDrinks": 2}
    assert host.page.locator("iframe").count() == 2
    assert [v.url for v in host.views] == [f"{SANDBOX_ORIGIN}/view/0", f"{SANDBOX_ORIGIN}/view/1"]
    for index in (0, 1):
        sent = host.view_messages(index)
        assert [m["method"] for m in sent[:2]] == ["ui/initialize", "ui/notifications/initialized"]
    # Stacked: the second view is below the first.
    top = [host.iframe(i).bounding_box()["y"] for i in (0, 1)]
    assert top[1] > top[0]


def test_host_context_changes_reach_the_view(host: AppsHost) -> None:
    show_search(host)
    host.set_theme("dark")
    view = host.content_frame(0)
    root_style = "name => getComputedStyle(document.documentElement).getPropertyValue(name).trim()"
    view.wait_for_function(f"() => ({root_style})('--color-background-primary') === '#1f1f1f'")
    changes = [m for m in host.log if m["method"] == "ui/notifications/host-context-changed"]
    assert changes[-1]["params"]["theme"] == "dark"

    host.set_container(0, {"width": 375, "height": 300})
    assert host.iframe_height(0) == 300
    changes = [m for m in host.log if m["method"] == "ui/notifications/host-context-changed"]
    assert changes[-1]["params"] == {"containerDimensions": {"width": 375, "height": 300}}
    assert host.errors == []
    assert schema_failures(host.log) == []
