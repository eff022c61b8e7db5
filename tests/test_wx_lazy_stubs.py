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
