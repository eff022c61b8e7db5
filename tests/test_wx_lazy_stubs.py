"""The stubs of the wx APIs skillc lacks are built when a skill first looks past the provided APIs
(wx.js, lazyHost): whatever a skill does first, it sees the whole wx, stubs and all, already frozen.

Each probe is the first thing its call does with wx (every call is a fresh context), so each
reflective route is the one that has to build the stubs before it answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from skillc.runtime.api.api_runtime import ApiRuntime

from .test_runtime import make_runtime, write_skill

# probe name -> (JS expression, what it must evaluate to)
PROBES: dict[str, tuple[str, object]] = {
    "isFrozen": ("Object.isFrozen(wx)", True),
    "isExtensible": ("Reflect.isExtensible(wx)", False),
    "keys": ("Object.keys(wx).includes('scanCode') && Object.keys(wx).includes('cloud')", True),
    "ownKeys": ("Reflect.ownKeys(wx).includes('scanCode')", True),
    "in": ("'scanCode' in wx", True),
    "descriptor": (
        "(() => { const d = Object.getOwnPropertyDescriptor(wx, 'scanCode');"
        " return typeof d.value + ' ' + d.writable + ' ' + d.configurable })()",
        "function false false",
    ),
    "defineProperty": ("Reflect.defineProperty(wx, 'extra', { value: 1 })", False),
    "set": ("Reflect.set(wx, 'request', 1) || typeof wx.request", "function"),
    "delete": ("Reflect.deleteProperty(wx, 'request') || typeof wx.request", "function"),
    "setPrototypeOf": ("Reflect.setPrototypeOf(wx, null)", False),
    "after a provided API": ("(wx.getStorageSync, Object.isFrozen(wx) && 'scanCode' in wx)", True),
    "nested namespace": ("Object.isFrozen(wx.modelContext)", True),
    "nested set": (
        "Reflect.set(wx.modelContext, 'getSessionId', 1) || typeof wx.modelContext.getSessionId",
        "function",
    ),
    "created namespace": (
        "Object.isFrozen(wx.cloud) && typeof wx.cloud.callFunction + ' ' + typeof wx.cloud.nope",
        "function function",
    ),
    # cloud.init is a silent no-op stub that canIUse admits to: only a built table knows it
    "canIUse": (
        "wx.canIUse('cloud.init') + ' ' + wx.canIUse('scanCode') + ' ' + wx.canIUse('request')",
        "true false true",
    ),
}

INDEX = (
    "const probes = {\n"
    + "".join(f"  {json.dumps(name)}: () => {expr},\n" for name, (expr, _) in PROBES.items())
    + "}\n"
    + "wx.modelContext.registerAPI('probe', async (a) =>\n"
    + "  ({ content: [{ type: 'text', text: JSON.stringify(probes[a.name]()) }] }))\n"
)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    root = tmp_path_factory.mktemp("lazy")
    rt = make_runtime(write_skill(root / "skill", INDEX, [{"name": "probe"}]), root / "state")
    yield rt
    rt.close()


@pytest.mark.parametrize("probe", list(PROBES))
def test_the_first_look_past_the_provided_apis_sees_a_whole_frozen_wx(runtime: ApiRuntime, probe: str) -> None:
    # index.js itself touches wx only through wx.modelContext.registerAPI, a provided API
    outcome = runtime.call_blocking("probe", {"name": probe})
    assert not outcome.result.is_error, outcome.result.text
    assert json.loads(outcome.result.text) == PROBES[probe][1]


# What a skill may have done to the built-ins before its first look past the provided APIs (the
# stubs are built after its code ran, so building them must not run on anything it can replace).
POLLUTIONS: dict[str, str] = {
    "JSON.parse": "JSON.parse = () => []",
    "array iterator": "Array.prototype[Symbol.iterator] = function* () {}",
    "WeakSet.has": "WeakSet.prototype.has = () => false",
    "WeakSet.add": "WeakSet.prototype.add = function () { return this }",
    "WeakMap.get": "WeakMap.prototype.get = () => ({})",
    "join": "Array.prototype.join = () => 'planted'",
    "inherited API": (
        "Object.defineProperty(Object.prototype, 'scanCode',"
        " { get() { return 'planted' }, set(v) { globalThis.stolen = v }, configurable: true })"
    ),
    "inherited namespace": (
        "Object.defineProperty(Object.prototype, 'cloud',"
        " { get() { return { planted: true } }, set(v) { globalThis.stolen = v }, configurable: true })"
    ),
    "descriptor get": "Object.prototype.get = function () { return 'planted' }",
    "planted trap": "Object.prototype.has = () => false",
}
# The first look at wx after the pollution: reading a stub's name, or its descriptor (where a
# planted `get` could pass for a getter).
FIRST = "typeof wx.scanCode"
FIRST_DESCRIPTOR = "typeof Object.getOwnPropertyDescriptor(wx, 'scanCode').value"
# Read without for-of, includes or join, which the pollutions break for the probe itself.
OBSERVE = """
  const out = []
  out[out.length] = 'first ' + (a.name === 'descriptor get' ? FIRST_DESCRIPTOR : FIRST)
  out[out.length] = 'frozen ' + Object.isFrozen(wx) + ' ' + Object.isFrozen(wx.cloud)
  out[out.length] = 'scanCode ' + typeof wx.scanCode + ' ' + ('scanCode' in wx)
  out[out.length] = 'cloud.nope ' + typeof wx.cloud.nope
  out[out.length] = 'canIUse cloud.init ' + wx.canIUse('cloud.init')
  let message = 'none'
  try { wx.createRewardedVideoAd() } catch (e) { message = e.errMsg }
  out[out.length] = message
  out[out.length] = 'stolen ' + typeof globalThis.stolen
  return { content: [{ type: 'text', text: JSON.stringify(out) }] }
"""
POLLUTED_INDEX = (
    "const pollutions = {\n"
    + "".join(f"  {json.dumps(name)}: () => {{ {code} }},\n" for name, code in POLLUTIONS.items())
    + "}\n"
    + "wx.modelContext.registerAPI('polluted', async (a) => {\n  pollutions[a.name]()\n"
    + OBSERVE.replace("FIRST_DESCRIPTOR", FIRST_DESCRIPTOR).replace("FIRST", FIRST)
    + "})\n"
)


@pytest.fixture(scope="module")
def polluted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    root = tmp_path_factory.mktemp("polluted")
    rt = make_runtime(write_skill(root / "skill", POLLUTED_INDEX, [{"name": "polluted"}]), root / "state")
    yield rt
    rt.close()


@pytest.mark.parametrize("pollution", list(POLLUTIONS))
def test_a_skill_that_replaced_built_ins_still_gets_every_stub_in_a_frozen_wx(
    polluted: ApiRuntime, pollution: str
) -> None:
    outcome = polluted.call_blocking("polluted", {"name": pollution})
    assert not outcome.result.is_error, outcome.result.text
    assert json.loads(outcome.result.text) == [
        "first function",
        "frozen true true",
        "scanCode function true",
        "cloud.nope function",
        "canIUse cloud.init true",
        "createRewardedVideoAd:fail "
        + "wx.createRewardedVideoAd is not available in AI-mode skills (WeChat offers it neither to APIs nor to cards; "
        + "it needs a mini-program page to show the ad on)",
        "stolen undefined",
    ]
