"""A dynamic card under the official MCP Apps host implementation (ext-apps ``AppBridge``, see
tests/apps_bridge.py), in Chromium: the view's polls of the app-only tool skillc_card_updates go
through the host's oncalltool to the real server, every message stays valid against ext-apps'
schema, and the countdown changes in the DOM with no tap.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.apps_bridge import HOST_ORIGIN, AppsHost, apps_bridge_bundle, apps_browser, schema_failures, server_calls
from tests.conftest import FIXTURES

pytestmark = pytest.mark.chromium
__all__ = ["apps_bridge_bundle", "apps_browser"]  # fixtures from tests/apps_bridge.py

PICKUP = FIXTURES / "dynamic-cards" / "pickup-skill"
LEFT = '[data-uid="0.1"]'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(PICKUP,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("pickup-bridge"), card_timer_min_interval_ms=100),
        allowed_origins=(HOST_ORIGIN,),
    )
    with ServeHandle.start(options) as handle:
        yield handle


def test_the_official_host_carries_timer_patches_to_the_view(
    apps_browser: Any, server: ServeHandle, apps_bridge_bundle: Path
) -> None:
    with AppsHost.open(apps_browser, server.url, apps_bridge_bundle) as host, server_calls(server) as calls:
        result = host.call_tool("startCountdown", {"seconds": 60, "tickMs": 200})
        card_id = result["_meta"]["skillc/card"]["cardId"]
        left = host.frame(0).locator(LEFT)
        left.wait_for()
        host.content_frame(0).wait_for_function(
            f"() => parseInt(document.querySelector('{LEFT}').textContent) <= 57", timeout=10_000
        )
        polls = calls.named("skillc_card_updates")
        assert polls and {p["cardId"] for p in polls} == {card_id}
        views = [c for c in host.tool_calls if c["name"] == "skillc_card_updates"]
        assert views and all(c["allowed"] for c in views)  # an app-only tool the host lets the view call
        assert schema_failures(host.log) == []
        assert host.errors == [] and host.csp_violations == []
