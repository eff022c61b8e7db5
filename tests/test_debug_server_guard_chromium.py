"""The measured browser attacks on `skillc debug`, in real headless Chromium: a page served from
another loopback port auto-submits a ``text/plain`` form (a "simple" request, no preflight) that
would start a chat turn, and fires a ``no-cors`` fetch that would post a forged snapshot. Same-site
loopback origins pass the Origin check, so only the launch token stops them."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from html import escape

import pytest

from skillc.server.debugger.snapshot import SnapshotStore
from tests.test_debug_server_guard import PAY, Served, served

pytestmark = pytest.mark.chromium
__all__ = ["served"]  # the module's server fixture, shared


def attacker_page(target: str) -> str:
    # The text/plain encoding of name=value is "name=value": split the JSON so the "=" hides in a string.
    name, value = PAY[:-2], PAY[-2:]
    forged = '{"updatedAtMs": 1, "scene": "forged"}'
    return f"""<!doctype html><html><body>
<form id="f" method="POST" enctype="text/plain" action="{escape(target)}/__debug/api/chat">
<input type="hidden" name="{escape(name)}" value="{escape(value)}"></form>
<script>
fetch("{target}/__agent_trace", {{method: "POST", mode: "no-cors", body: {forged!r}}})
  .finally(function () {{ document.getElementById("f").submit(); }});
</script></body></html>"""


@pytest.fixture
def evil_site(served: Served) -> Iterator[str]:
    page = attacker_page(served.base).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_a_page_elsewhere_cannot_start_a_chat_or_post_a_snapshot(
    served: Served, evil_site: str, chromium_path: str
) -> None:
    from playwright.sync_api import sync_playwright

    store: SnapshotStore = served.debug.debugger.server.store
    before_turns, before_snapshot = len(served.turns), store.current
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            with page.expect_response(lambda r: r.url.startswith(f"{served.base}/__debug/api/chat")) as answered:
                page.goto(evil_site)
            reply = answered.value
            assert reply.status == 403, reply.text()
            assert "token" in reply.json()["error"]
        finally:
            browser.close()
    assert len(served.turns) == before_turns  # no chat turn ran
    assert store.current is before_snapshot  # take_snapshot was not poisoned
