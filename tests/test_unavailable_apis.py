"""wx APIs WeChat has and skillc does not (wx.cloud, location, modal UI, ...): a call fails with an
error that names the API and says why (a thrown Error for the sync forms, the fail callback or a
rejected promise for the async ones), never "undefined is not a function"; `wx.cloud.init()` is a
no-op; `skillc check` warns (JS008) where skill code uses one. One table serves both
(skillc/runtime/host/unavailable.py).

Fixture: tests/fixtures/runtime-unavailable/cloud-skill.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.check import check_skill
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.host.unavailable import BY_NAME, UNAVAILABLE, stubs, unavailable_uses

from .conftest import FIXTURES

SKILL = FIXTURES / "runtime-unavailable" / "cloud-skill"
CLOUD = "skillc runs no cloud functions or cloud database"
CLOUD_CALLS = (
    "cloud.callFunction",
    "cloud.callContainer",
    "cloud.database",
    "cloud.uploadFile",
    "cloud.downloadFile",
    "cloud.getTempFileURL",
    "cloud.deleteFile",
)
GATE = 'WeChat gives a card it only with components[].permissions["scope.dynamic"] in mcp.json'


def where(d: Diagnostic) -> tuple[str, str | None, int | None, int | None, str]:
    return (d.code, d.file, d.span.line if d.span else None, d.span.column if d.span else None, d.message)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path_factory.mktemp("state")))
    yield rt
    rt.close()


# -- the table ----------------------------------------------------------------------------------


def test_each_entry_says_why_in_every_context() -> None:
    assert BY_NAME["cloud.callFunction"].message("api") == (
        f"wx.cloud.callFunction is not available outside WeChat ({CLOUD})"
    )
    assert BY_NAME["cloud.callFunction"].message("card") == (
        "wx.cloud.callFunction is not available in cards (WeChat offers it to APIs only)"
    )
    assert (
        BY_NAME["showToast"].message("api") == "wx.showToast is not available in APIs (WeChat offers it to cards only)"
    )
    assert BY_NAME["showModal"].message("card") == (
        "wx.showModal is not available in AI-mode skills (WeChat offers it neither to APIs nor to cards)"
    )
    assert BY_NAME["cloud.init"].message("api") is None  # the one no-op
    assert len({u.name for u in UNAVAILABLE}) == len(UNAVAILABLE)


def test_a_static_card_gets_network_stubs_that_name_scope_dynamic() -> None:
    static = {".".join(s.path): s.message for s in stubs("card", dynamic=False)}
    dynamic = {".".join(s.path) for s in stubs("card", dynamic=True)}
    assert static["request"] == f"wx.request is not available in this card ({GATE})"
    assert {"request", "login", "checkSession"}.isdisjoint(dynamic)


# -- run time: the API context ------------------------------------------------------------------


def test_cloud_init_is_a_no_op_so_a_skill_that_inits_still_loads(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("ping", {})
    assert (outcome.result.is_error, outcome.result.text, outcome.diagnostics) == (False, "pong", [])


def test_an_awaited_cloud_call_rejects_with_an_error_that_names_it(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("callCloud", {})
    assert outcome.result.is_error
    message = (
        f"callCloud threw Error: wx.cloud.callFunction is not available outside WeChat ({CLOUD}) at apis/callCloud.js:2"
    )
    assert [where(d) for d in outcome.diagnostics] == [("RUN013", "apis/callCloud.js", 2, 30, message)]


def test_the_callback_form_calls_fail_then_complete(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("callCloudCallbacks", {})
    assert outcome.result.text.splitlines() == [
        "returned undefined",
        f"fail: cloud.callFunction:fail wx.cloud.callFunction is not available outside WeChat ({CLOUD})",
    ]


def test_a_sync_form_throws(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("openDatabase", {})
    message = f"openDatabase threw Error: wx.cloud.database is not available outside WeChat ({CLOUD}) at index.js:9"
    assert [where(d) for d in outcome.diagnostics] == [("RUN013", "index.js", 9, 23, message)]


def test_apis_of_other_contexts_fail_and_can_i_use_says_no(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("probe", {})
    assert outcome.result.text.splitlines() == [
        "Error: wx.getWindowInfo is not available in APIs (WeChat offers it to cards only)",
        "canIUse cloud.callFunction false",
        "canIUse cloud.init true",
        "typeof getWeRunData function",
        "canIUse request true",
        "Error: showModal:fail wx.showModal is not available in AI-mode skills "
        "(WeChat offers it neither to APIs nor to cards)",
    ]


# -- run time: a card ---------------------------------------------------------------------------


def test_a_card_gets_no_cloud_and_no_network_without_scope_dynamic(runtime: ApiRuntime) -> None:
    ids = itertools.count(1)
    host = CardHost(runtime, card_ids=lambda: f"card-{next(ids)}")
    loop = asyncio.new_event_loop()
    try:
        outcome = loop.run_until_complete(host.call("showCloudCard", {}, runtime.context(session_id="s1")))
        loop.run_until_complete(host.close())
    finally:
        loop.close()
    assert outcome.card is not None, outcome.diagnostics
    assert outcome.card.data == {
        "cloud": "wx.cloud.init is not available in cards (WeChat offers it to APIs only)",
        "request": f"request:fail wx.request is not available in this card ({GATE})",
    }


# -- skillc check -------------------------------------------------------------------------------


def test_check_warns_where_skill_code_uses_one() -> None:
    found = [where(d) for d in check_skill(SKILL).diagnostics if d.code == "JS008"]
    tail = "; the call fails when skillc runs it"
    cloud = f"wx.cloud.callFunction is not available outside WeChat ({CLOUD}){tail}"
    assert found == [
        ("JS008", "apis/callCloud.js", 2, 21, cloud),
        ("JS008", "apis/callCloudCallbacks.js", 4, 18, cloud),
        (
            "JS008",
            "apis/probe.js",
            7,
            19,
            f"wx.getWindowInfo is not available in APIs (WeChat offers it to cards only){tail}",
        ),
        (
            "JS008",
            "apis/probe.js",
            10,
            37,
            f"wx.getWeRunData is not available outside WeChat (skillc has no WeChat account data){tail}",
        ),
        (
            "JS008",
            "apis/probe.js",
            13,
            20,
            f"wx.showModal is not available in AI-mode skills (WeChat offers it neither to APIs nor to cards){tail}",
        ),
        ("JS008", "index.js", 9, 14, f"wx.cloud.database is not available outside WeChat ({CLOUD}){tail}"),
    ]
    assert {d.severity for d in check_skill(SKILL).diagnostics if d.code == "JS008"} == {"warning"}
    # wx.cloud in a card, and wx.request in this static one, break the official rule V021: its
    # error stands in place of the warning.
    assert [where(d) for d in check_skill(SKILL).diagnostics if d.code == "JS011"] == [
        (
            "JS011",
            "components/cloud-card/index.js",
            6,
            9,
            "wx.cloud is not available in cards, with or without scope.dynamic (official rule V021)",
        ),
        (
            "JS011",
            "components/cloud-card/index.js",
            11,
            7,
            "wx.request() is not available in a static card (official rule V021): components/cloud-card/index "
            'does not declare permissions["scope.dynamic"]',
        ),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "// wx.showModal({})\n",
        "/* wx.cloud.callFunction() */\n",
        "const s = 'wx.showModal'\n",
        'const s = "wx.navigateTo"\n',
        "const s = `wx.showLoading`\n",
        "other.wx.showModal()\n",
        "wx.cloud.init({ env: 'x' })\n",  # a no-op in the API context
        "wx.request({ url: 'https://a.example' })\n",  # provided
    ],
)
def test_the_scan_ignores_comments_strings_and_what_skillc_provides(text: str) -> None:
    assert unavailable_uses("apis/a.js", text, card=False) == []


def test_the_scan_reads_through_whitespace_and_spans_the_name() -> None:
    [d] = unavailable_uses("apis/a.js", "const x = 1\n  wx . cloud\n    .callFunction({})\n", card=False)
    assert d.span is not None
    assert (d.span.line, d.span.column, d.span.end_line, d.span.end_column) == (2, 3, 3, 18)


# -- every API the compatibility matrix lists as missing (docs/compatibility.md) ------------------

# why -> the names of one group of rows; each call fails with "wx.<name> is not available ...".
FILES = "skillc has no file system"
DEVICE = "skillc has no device hardware"
USER = "skillc has no WeChat account data"
SOCKETS = "skillc opens no sockets"
UI = "skillc shows no mini-program UI"
API_ROWS: dict[str, tuple[str, ...]] = {
    f"outside WeChat ({CLOUD})": CLOUD_CALLS,
    f"outside WeChat ({FILES})": ("uploadFile", "downloadFile", "getImageInfo"),
    f"outside WeChat ({USER})": (
        "getRealtimePhoneNumber",
        "requestSubscribeMessage",
        "requestAgentPrivacyAuthorization",
        "authorize",
        "getSetting",
        "getUserCryptoManager",
        "getWeRunData",
    ),
    f"outside WeChat ({DEVICE})": (
        "getNetworkType",
        "startFacialRecognitionVerify",
        "startWifi",
        "getConnectedWifi",
        "openBluetoothAdapter",
        "startAccelerometer",
        "startCompass",
        "startGyroscope",
    ),
    f"outside WeChat ({SOCKETS})": (
        "connectSocket",
        "createTCPSocket",
        "createUDPSocket",
        "startLocalServiceDiscovery",
    ),
    "in AI-mode skills (WeChat offers it neither to APIs nor to cards)": (
        "showModal",
        "showLoading",
        "showActionSheet",
        "navigateTo",
        "redirectTo",
        "switchTab",
        "reLaunch",
        "navigateBack",
        "pageScrollTo",
        "chooseImage",
        "chooseVideo",
        "chooseMedia",
        "previewImage",
        "setClipboardData",
        "getClipboardData",
        "getUserInfo",
        "getUserProfile",
        "createSelectorQuery",
        "createCanvasContext",
        "createAnimation",
    ),
}

PROBE_EACH = """
const NAMES = %s
wx.modelContext.registerAPI('probe', async () => {
  const out = []
  for (const name of NAMES) {
    const fn = name.split('.').reduce((o, k) => o[k], wx)
    try { await fn({}); out.push(name + ' answered') } catch (e) { out.push(e.message) }
  }
  return { content: [{ type: 'text', text: 'probed' }], structuredContent: { out } }
})
"""


def test_each_api_the_matrix_lists_as_missing_fails_in_api_code_naming_itself(tmp_path: Path) -> None:
    from .test_runtime import make_runtime, write_skill

    names = [n for group in API_ROWS.values() for n in group]
    index = PROBE_EACH % json.dumps(names)
    rt = make_runtime(write_skill(tmp_path / "probe", index, [{"name": "probe"}]), tmp_path / "state")
    try:
        outcome = rt.call_blocking("probe", {})
    finally:
        rt.close()
    assert outcome.result.structured_content == {
        "out": [f"wx.{n} is not available {why}" for why, group in API_ROWS.items() for n in group]
    }


CARD_ROWS: dict[str, tuple[str, ...]] = {
    f"outside WeChat ({UI})": (
        "showToast",
        "hideToast",
        "openLocation",
        "openSetting",
        "shareAppMessage",
        "openPrivacyContract",
    ),
    f"outside WeChat ({DEVICE})": ("getWindowInfo", "vibrateShort", "vibrateLong"),
    f"outside WeChat ({FILES})": ("openDocument", "downloadFile"),
    f"outside WeChat ({USER})": ("getPrivacySetting",),
    "in cards (WeChat offers it to APIs only)": ("cloud.init", *CLOUD_CALLS),
}


def test_each_card_api_the_matrix_lists_as_missing_gets_a_stub_naming_itself() -> None:
    # What wx.js installs in a card (the stubs reach the card's wx as
    # test_a_card_gets_no_cloud_and_no_network_without_scope_dynamic shows).
    installed = {".".join(s.path): s.message for s in stubs("card")}
    for why, group in CARD_ROWS.items():
        for name in group:
            assert installed[name] == f"wx.{name} is not available {why}"
