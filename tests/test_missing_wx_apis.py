"""wx APIs published skills call that WeChat offers neither to APIs nor to cards (scanCode,
chooseLocation, ...), the cloud AI extension (wx.cloud.extend.AI), any wx name skillc has never
heard of, and wx.getAccountInfoSync. Each failing call names its API and says why, in every calling
convention, in API code and in cards; `skillc check` warns at each use (JS008, JS010).

Fixture: tests/fixtures/runtime-unavailable/parcel-skill (written for these tests).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.check import check_skill
from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import DeadlineMode, RuntimeConfig
from skillc.runtime.host.unavailable import PROVIDED

from .conftest import FIXTURES
from .test_unavailable_apis import where

SKILL = FIXTURES / "runtime-unavailable" / "parcel-skill"
NOWHERE = "is not available in AI-mode skills (WeChat offers it neither to APIs nor to cards; {}"
FROM_PAGE = "from a mini-program page"
# The ten, each with what it needs that a skill does not have.
NEEDS: dict[str, str] = {
    "scanCode": "it needs the camera UI of a mini-program page",
    "chooseLocation": "it needs the map picker of a mini-program page",
    "navigateToMiniProgram": f"it opens another mini program {FROM_PAGE}",
    "requestOrderPayment": (
        "it needs WeChat Pay's order checkout page; skillc's payment stand-in is wx.requestPayment, in API code"
    ),
    "openCustomerServiceChat": f"it opens the customer service chat {FROM_PAGE}",
    "chooseInvoice": "it needs the invoice picker of a mini-program page",
    "createRewardedVideoAd": "it needs a mini-program page to show the ad on",
    "openChannelsActivity": f"it opens a Channels video {FROM_PAGE}",
    "openBusinessView": f"it opens another mini program's business view {FROM_PAGE}",
    "openOfficialAccountProfile": f"it opens an official account's profile {FROM_PAGE}",
}
SYNC = {"createRewardedVideoAd"}  # a factory: it answers at once, so it throws
CLOUD_AI = "is not available outside WeChat (skillc runs no cloud AI models or agents)"
TAIL = "; the call fails when skillc runs it"
HINT = "call it from a page of the mini program and hand off to that page (_meta.ui.pagePath and a handoff result)"
PLACEHOLDER = {"miniProgram": {"appId": "wx0000000000000000", "envVersion": "develop", "version": ""}, "plugin": {}}


def message(name: str) -> str:
    return f"wx.{name} " + NOWHERE.format(NEEDS[name]) + ")"


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path_factory.mktemp("state")))
    yield rt
    rt.close()


def card_data(runtime: ApiRuntime, api: str) -> dict[str, Any]:
    ids = itertools.count(1)
    host = CardHost(runtime, card_ids=lambda: f"card-{next(ids)}")
    loop = asyncio.new_event_loop()
    try:
        outcome = loop.run_until_complete(host.call(api, {}, runtime.context(session_id="s1")))
        loop.run_until_complete(host.close())
    finally:
        loop.close()
    assert outcome.card is not None, outcome.diagnostics
    return outcome.card.data


# -- the ten, in every calling convention, in API code --------------------------------------------


def expected(name: str, form: str) -> list[str]:
    msg = message(name)
    errmsg = f"errMsg {name}:fail {msg}"
    if name in SYNC:  # whatever the form, the factory throws before anything else happens
        return [f"threw Error: {msg}", errmsg]
    if form == "callbacks":
        return ["returned undefined", f"fail {name}:fail {msg}", f"complete {name}:fail {msg}"]
    if form == "promise":
        return [f"threw Error: {msg}", errmsg]
    return ["returned a promise", f"rejected Error: {msg}"]


@pytest.mark.parametrize("form", ["callbacks", "promise", "sync"])
@pytest.mark.parametrize("name", list(NEEDS))
def test_each_page_api_fails_naming_itself_in_every_calling_convention(
    runtime: ApiRuntime, name: str, form: str
) -> None:
    outcome = runtime.call_blocking("tryForm", {"name": name, "form": form})
    assert (outcome.result.is_error, outcome.result.text.splitlines()) == (False, expected(name, form))


def test_an_uncaught_one_is_the_api_s_error_at_the_line_that_called_it(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("chooseLocker", {})
    text = f"chooseLocker threw Error: {message('chooseLocation')} at apis/chooseLocker.js:2"
    assert (outcome.result.is_error, [where(d) for d in outcome.diagnostics]) == (
        True,
        [("RUN013", "apis/chooseLocker.js", 2, 26, text)],
    )


def test_callbacks_get_fail_then_complete_and_never_success(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("scanPickupCode", {})
    assert outcome.result.text.splitlines() == [f"fail scanCode:fail {message('scanCode')}", "complete"]


def test_skillc_call_prints_the_named_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["call", str(SKILL), "settleFee", "--state-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["result"]["content"][0]["text"].splitlines() == [
        message("requestOrderPayment"),
        f"navigateToMiniProgram:fail {message('navigateToMiniProgram')}",
    ]


# -- any other wx name ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "form", "lines"),
    [
        ("summonCourier", "promise", ["threw Error: wx.summonCourier is not provided by skillc"]),
        (
            "summonCourier",
            "callbacks",
            ["returned undefined", "fail summonCourier:fail wx.summonCourier is not provided by skillc"],
        ),
        ("summonCourierSync", "sync", ["threw Error: wx.summonCourierSync is not provided by skillc"]),
        ("createCourier", "sync", ["threw Error: wx.createCourier is not provided by skillc"]),
        ("getCourierManager", "sync", ["threw Error: wx.getCourierManager is not provided by skillc"]),
        ("summonCourier", "sync", ["returned a promise", "rejected Error: wx.summonCourier is not provided by skillc"]),
    ],
)
def test_an_unknown_wx_name_names_itself(runtime: ApiRuntime, name: str, form: str, lines: list[str]) -> None:
    outcome = runtime.call_blocking("tryForm", {"name": name, "form": form})
    errmsg = f"errMsg {name}:fail wx.{name} is not provided by skillc"
    assert outcome.result.text.splitlines() == [
        *lines,
        *([errmsg] if lines[0].startswith("threw") else []),
        *([f"complete {name}:fail wx.{name} is not provided by skillc"] if form == "callbacks" else []),
    ]


FEATURE_TESTS = """
wx.modelContext.registerAPI('detect', async () => {
  const out = [
    'typeof unknown ' + typeof wx.summonCourier,
    'in unknown ' + ('summonCourier' in wx),
    'canIUse unknown ' + wx.canIUse('summonCourier'),
    'same stub ' + (wx.summonCourier === wx.summonCourier),
    'typeof scanCode ' + typeof wx.scanCode,
    'canIUse scanCode ' + wx.canIUse('scanCode'),
    'canIUse getAccountInfoSync ' + wx.canIUse('getAccountInfoSync'),
    'canIUse createModel ' + wx.canIUse('cloud.extend.AI.createModel'),
    'canIUse AI.nope ' + wx.canIUse('cloud.extend.AI.nope'),
    'typeof then ' + typeof wx.then,
    'typeof toJSON ' + typeof wx.toJSON,
    'await wx ' + ((await Promise.resolve(wx)) === wx),
    'stringify ' + typeof JSON.stringify(wx),
    'typeof modelContext.summon ' + typeof wx.modelContext.summon,
  ]
  try { wx.summonCourier = 1 } catch (e) { out.push(e.name) }
  out.push('after assignment ' + typeof wx.summonCourier)
  return { content: [{ type: 'text', text: out.join('\\n') }] }
})
"""


def test_feature_detection_says_no_for_names_skillc_lacks(tmp_path: Path) -> None:
    from .test_runtime import make_runtime, write_skill

    rt = make_runtime(write_skill(tmp_path / "detect", FEATURE_TESTS, [{"name": "detect"}]), tmp_path / "state")
    try:
        outcome = rt.call_blocking("detect", {})
    finally:
        rt.close()
    # a stub is a function (a call must name itself) that neither `in` nor canIUse admits to;
    # await and JSON.stringify see no then or toJSON; wx stays frozen
    assert outcome.result.text.splitlines() == [
        "typeof unknown function",
        "in unknown false",
        "canIUse unknown false",
        "same stub true",
        "typeof scanCode function",
        "canIUse scanCode false",
        "canIUse getAccountInfoSync true",
        "canIUse createModel false",
        "canIUse AI.nope false",
        "typeof then undefined",
        "typeof toJSON undefined",
        "await wx true",
        "stringify string",
        "typeof modelContext.summon function",
        "after assignment function",
    ]


# -- wx.cloud.extend ------------------------------------------------------------------------------


def test_cloud_ai_fails_in_api_code_naming_the_call(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("askAssistant", {})
    text = f"askAssistant threw Error: wx.cloud.extend.AI.createModel {CLOUD_AI} at apis/askAssistant.js:3"
    assert [where(d) for d in outcome.diagnostics] == [("RUN013", "apis/askAssistant.js", 3, 36, text)]


@pytest.mark.parametrize(
    ("name", "form", "lines"),
    [
        ("bot.sendMessage", "promise", [f"threw Error: wx.cloud.extend.AI.bot.sendMessage {CLOUD_AI}"]),
        (
            "bot.list",
            "callbacks",
            ["returned undefined", f"fail cloud.extend.AI.bot.list:fail wx.cloud.extend.AI.bot.list {CLOUD_AI}"],
        ),
        ("createModel", "sync", [f"threw Error: wx.cloud.extend.AI.createModel {CLOUD_AI}"]),
    ],
)
def test_each_cloud_ai_call_names_itself(tmp_path: Path, name: str, form: str, lines: list[str]) -> None:
    from .test_runtime import make_runtime, write_skill

    index = (SKILL / "apis" / "tryForm.js").read_text().replace("wx[name]", f"wx.cloud.extend.AI.{name}")
    root = write_skill(tmp_path / "ai", "wx.modelContext.registerAPI('t', require('./t'))\n", [{"name": "t"}])
    (root / "t.js").write_text(index)
    rt = make_runtime(root, tmp_path / "state")
    try:
        outcome = rt.call_blocking("t", {"name": name, "form": form})
    finally:
        rt.close()
    path = f"cloud.extend.AI.{name}"
    full = f"wx.{path} {CLOUD_AI}"
    assert outcome.result.text.splitlines() == [
        *lines,
        *([f"errMsg {path}:fail {full}"] if lines[0].startswith("threw") else []),
        *([f"complete {path}:fail {full}"] if form == "callbacks" else []),
    ]


# -- cards ------------------------------------------------------------------------------------------


def test_a_card_gets_the_account_and_named_errors(runtime: ApiRuntime) -> None:
    assert card_data(runtime, "showLockerCard") == {
        "appId": "wx0000000000000000",
        "service": f"openCustomerServiceChat:fail {message('openCustomerServiceChat')}",
        "ad": message("createRewardedVideoAd"),
        "ai": "wx.cloud.extend.AI.bot.sendMessage is not available in cards (WeChat offers it to APIs only)",
        "courier": "wx.summonCourier is not provided by skillc",
    }


# -- wx.getAccountInfoSync --------------------------------------------------------------------------


def test_get_account_info_outside_a_project_answers_the_placeholder(runtime: ApiRuntime) -> None:
    outcome = runtime.call_blocking("whichApp", {})
    assert json.loads(outcome.result.text) == PLACEHOLDER


def project(root: Path, config: dict[str, Any], *, miniprogram: str = "") -> Path:
    """A mini-program project holding a copy of the parcel skill under skills/parcel-skill."""
    import shutil

    app = root / miniprogram if miniprogram else root
    skill = app / "skills" / "parcel-skill"
    shutil.copytree(SKILL, skill)
    (root / "project.config.json").write_text(json.dumps(config))
    (app / "app.json").write_text(
        json.dumps(
            {
                "pages": ["pages/index/index"],
                "lazyCodeLoading": "requiredComponents",
                "subPackages": [{"root": "skills/", "independent": True, "pages": []}],
                "agent": {"skills": [{"name": "parcel", "description": "Parcels.", "path": "skills/parcel-skill"}]},
            }
        )
    )
    return skill


@pytest.mark.parametrize("miniprogram", ["", "miniprogram/"])
@pytest.mark.parametrize("deadline_mode", ["interrupt", "process"])
def test_get_account_info_answers_the_project_s_app_id_in_apis_and_cards(
    tmp_path: Path, miniprogram: str, deadline_mode: DeadlineMode
) -> None:
    config: dict[str, Any] = {"appid": "wx5f1c0ffee0ddba11", "projectname": "parcels"}
    if miniprogram:
        config["miniprogramRoot"] = miniprogram
    skill = project(tmp_path / "proj", config, miniprogram=miniprogram)
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state", deadline_mode=deadline_mode))
    try:
        info = json.loads(rt.call_blocking("whichApp", {}).result.text)
        card = card_data(rt, "showLockerCard")
    finally:
        rt.close()
    account = {"appId": "wx5f1c0ffee0ddba11", "envVersion": "develop", "version": ""}
    assert (info, card["appId"]) == ({"miniProgram": account, "plugin": {}}, "wx5f1c0ffee0ddba11")


def test_a_project_config_without_an_app_id_answers_the_placeholder(tmp_path: Path) -> None:
    skill = project(tmp_path / "proj", {"projectname": "parcels"})
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    try:
        assert json.loads(rt.call_blocking("whichApp", {}).result.text) == PLACEHOLDER
    finally:
        rt.close()


# -- what each context provides ---------------------------------------------------------------------

PROBE_KEYS = """
wx.modelContext.registerAPI('keys', async () => ({
  content: [{ type: 'text', text: Object.keys(wx).filter((k) => wx.canIUse(k)).sort().join(' ') }]
}))
"""
CARD_KEYS = """
Component({
  data: { keys: '', notification: '' },
  lifetimes: {
    attached () {
      this.setData({ keys: Object.keys(wx).filter((k) => wx.canIUse(k)).sort().join(' ') })
      // data hung on a namespace is not one: an unknown key of it is undefined, not a stub
      const N = wx.modelContext.NotificationType
      this.setData({ notification: typeof N.Result + ' ' + typeof N.Nope })
    }
  }
})
"""


def test_the_scan_knows_what_each_context_provides(tmp_path: Path) -> None:
    """PROVIDED (what the static scan calls known) is what the VMs build; `cloud` is the table's
    namespace."""
    from .test_runtime import make_runtime, write_skill

    index = PROBE_KEYS + (
        "wx.modelContext.registerAPI('card', async () => ({ content: [{ type: 'text', text: 'c' }], "
        "structuredContent: {} }))\n"
    )
    card = "components/k/index"
    root = write_skill(
        tmp_path / "keys",
        index,
        [{"name": "keys"}, {"name": "card", "_meta": {"ui": {"componentPath": card}}}],
        {
            f"{card}.js": CARD_KEYS,
            f"{card}.json": '{"component": true}',
            f"{card}.wxml": "<view>{{keys}}</view>",
            f"{card}.wxss": "",
        },
    )
    manifest = json.loads((root / "mcp.json").read_text())
    (root / "mcp.json").write_text(json.dumps({**manifest, "components": [{"path": card}]}))
    rt = make_runtime(root, tmp_path / "state")
    try:
        api = frozenset(rt.call_blocking("keys", {}).result.text.split())
        data = card_data(rt, "card")
    finally:
        rt.close()
    assert (api, frozenset(str(data["keys"]).split())) == (PROVIDED["api"] | {"cloud"}, PROVIDED["card"] | {"cloud"})
    assert data["notification"] == "string undefined"


# -- skillc check -----------------------------------------------------------------------------------


def test_check_warns_at_each_use_with_the_reason() -> None:
    found = [
        (*where(d), d.severity, d.hint) for d in check_skill(SKILL).diagnostics if d.code in ("JS008", "JS010", "JS011")
    ]
    card = "components/locker-card/index.js"
    courier = f"wx.summonCourier is not provided by skillc{TAIL}"
    assert found == [
        ("JS010", "apis/askAssistant.js", 2, 25, courier, "warning", None),
        ("JS008", "apis/askAssistant.js", 3, 17, f"wx.cloud.extend.AI.createModel {CLOUD_AI}{TAIL}", "warning", None),
        ("JS008", "apis/chooseLocker.js", 2, 23, message("chooseLocation") + TAIL, "warning", HINT),
        ("JS008", "apis/scanPickupCode.js", 4, 5, message("scanCode") + TAIL, "warning", HINT),
        ("JS008", "apis/settleFee.js", 4, 11, message("requestOrderPayment") + TAIL, "warning", HINT),
        ("JS008", "apis/settleFee.js", 8, 3, message("navigateToMiniProgram") + TAIL, "warning", HINT),
        ("JS008", card, 6, 7, message("openCustomerServiceChat") + TAIL, "warning", HINT),
        ("JS008", card, 11, 9, message("createRewardedVideoAd") + TAIL, "warning", HINT),
        # wx.cloud in a card is the official rule V021's error, which stands in for JS008's warning.
        (
            "JS011",
            card,
            15,
            7,
            "wx.cloud is not available in cards, with or without scope.dynamic (official rule V021)",
            "error",
            "call the cloud from an API and hand the card what it needs in the result",
        ),
        ("JS010", card, 17, 7, courier, "warning", None),
    ]


@pytest.mark.parametrize(
    ("text", "card", "found"),
    [
        ("wx.cloud.nope()\n", False, [("JS010", 1, 1, 1, 14, "wx.cloud.nope is not provided by skillc")]),
        (
            "x = wx.cloud.extend.AI.nope.deeper\n",
            True,
            [("JS010", 1, 5, 1, 28, "wx.cloud.extend.AI.nope is not provided by skillc")],
        ),
        ("wx.env.USER_DATA_PATH\n", False, [("JS010", 1, 1, 1, 7, "wx.env is not provided by skillc")]),
        ("wx.scanCode.call(null, {})\n", True, [("JS008", 1, 1, 1, 12, message("scanCode"))]),
        ("wx.modelContext.getContext(this)\n", False, []),  # under a namespace skillc provides
        ("wx.getAccountInfoSync()\n", False, []),
        ("wx.getAccountInfoSync()\n", True, []),
        ("wx.previewMedia({})\n", True, []),
        ("wx.request({})\n", True, []),  # scope.dynamic: the card rules (V021) report it
        ("const wx2 = 1; wxFoo.bar(); a.wx.nope()\n", False, []),
    ],
)
def test_the_scan_reads_the_whole_name_and_knows_each_context(
    text: str, card: bool, found: list[tuple[str, int, int, int, int, str]]
) -> None:
    from skillc.runtime.host.unavailable import unavailable_uses

    got = [
        (d.code, d.span.line, d.span.column, d.span.end_line, d.span.end_column, d.message.removesuffix(TAIL))
        for d in unavailable_uses("a.js", text, card=card)
        if d.span is not None
    ]
    assert got == found


SYSTEM_INFO = """\
const skill = wx.modelContext.createSkill('skills/sys')
skill.registerAPI('info', async () => {
  // the published form: a feature test, then the deprecated call
  const sync = wx.getSystemInfoSync ? wx.getSystemInfoSync() : {}
  const viaCallback = await new Promise((resolve) => wx.getSystemInfo({ success: resolve }))
  const viaPromise = await wx.getSystemInfo()
  return { content: [{ type: 'text', text: JSON.stringify([sync, viaCallback.errMsg, viaPromise.SDKVersion]) }] }
})
"""


def test_the_deprecated_system_info_is_app_and_device_info_merged(tmp_path: Path) -> None:
    from .test_runtime import make_runtime, write_skill

    rt = make_runtime(write_skill(tmp_path / "sys", SYSTEM_INFO, [{"name": "info"}], {}), tmp_path / "state")
    try:
        outcome = rt.call_blocking("info", {})
    finally:
        rt.close()
    assert not outcome.result.is_error, outcome.result.text
    sync, err_msg, sdk = json.loads(outcome.result.text)
    assert (sync["SDKVersion"], sync["language"], sync["brand"], sync["platform"]) == (
        "3.16.1",
        "zh_CN",
        "skillc",
        "devtools",
    )
    assert (err_msg, sdk) == ("getSystemInfo:ok", "3.16.1")
