"""The host-call table is the whole wx.* boundary: every name the JS can send is in it, every
entry is reachable from JS, and both hosts build their dispatch from it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from skillc.runtime.cards.card_models import Dimensions
from skillc.runtime.cards.component_host import CardBinding, ComponentHost
from skillc.runtime.config import RuntimeConfig, UserProfile
from skillc.runtime.contracts import ApiCallContext, RiskLevel
from skillc.runtime.host import calls
from skillc.runtime.host.api_host import ApiHost
from skillc.runtime.host.calls import HOST_CALLS, HostCall, NoArgs
from skillc.runtime.host.payment import ScriptedPaymentProvider
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.engine import HostReply

RUNTIME = Path(__file__).resolve().parents[1] / "skillc" / "runtime"
JS_FILES = sorted(RUNTIME.rglob("*.js"))

# How the runtime's JS names a host call: directly, or through wx.js's and component_vm.js's
# adapters, whose second argument is the host call (the first is the wx name for errMsg).
_DIRECT = re.compile(r"\b(?:I\.)?call(Sync|Async)\(\s*'([^']+)'")
_ADAPTED = re.compile(r"\b(asyncApi|sync|cardCall)\(\s*'[^']*'\s*,\s*'([^']+)'")
_ADAPTER_MODE = {"asyncApi": "async", "sync": "sync", "cardCall": "sync"}


def _js_uses() -> set[tuple[str, str]]:
    uses: set[tuple[str, str]] = set()
    for path in JS_FILES:
        text = path.read_text("utf-8")
        uses |= {(m.group(2), m.group(1).lower()) for m in _DIRECT.finditer(text)}
        uses |= {(m.group(2), _ADAPTER_MODE[m.group(1)]) for m in _ADAPTED.finditer(text)}
    return uses


def test_the_scan_sees_the_js() -> None:
    uses = _js_uses()
    # one of each way of naming a call, so a change of the adapters' shape fails here, not silently
    assert ("timer.sleep", "async") in uses  # prelude.js, callAsync
    assert ("storage.set", "async") in uses  # wx.js, asyncApi
    assert ("device.info", "sync") in uses  # wx.js, sync
    assert ("card.followUp", "sync") in uses  # component_vm.js, cardCall
    assert ("card.warn", "sync") in uses  # component_vm.js, I.callSync


def test_every_js_call_is_in_the_table_in_its_mode() -> None:
    for name, mode in sorted(_js_uses()):
        assert name in HOST_CALLS, f"the JS calls {name!r}, which the host-call table does not have"
        assert mode in HOST_CALLS[name].modes, (
            f"the JS calls {name!r} {mode}, the table allows {HOST_CALLS[name].modes}"
        )


def test_every_table_entry_is_reachable_from_js() -> None:
    used = _js_uses()
    for call in HOST_CALLS.values():
        for mode in call.modes:
            assert (call.name, mode) in used, f"{call.name} ({mode}) is in the table but no JS calls it so"


def _context() -> ApiCallContext:
    return ApiCallContext(user_did="u", agent_did="a", merchant_did="m", skill_id="s", session_id="sess-1")


def _card_host(tmp_path: Path, *, dynamic: bool) -> ComponentHost:
    config = RuntimeConfig(state_dir=tmp_path)
    binding = CardBinding(
        card_id="card-1",
        component_path="components/c/index",
        api_name="a",
        dynamic=dynamic,
        dimensions=Dimensions(min_height=0, max_height=600, width=375),
        declared_apis=frozenset({"a"}),
    )
    return ComponentHost(binding, _context(), config, Storage.of(config))


@pytest.mark.parametrize("call", list(HOST_CALLS.values()), ids=lambda c: c.name)
def test_every_entry_has_its_handler(call: HostCall) -> None:
    owner = ComponentHost if call.surface == "card" else ApiHost
    assert callable(getattr(owner, "_" + call.handler, None)), f"{owner.__name__} lacks _{call.handler}"


def test_api_host_serves_only_the_wx_surface(tmp_path: Path) -> None:
    config = RuntimeConfig(state_dir=tmp_path)
    host = ApiHost(_context(), config, Storage.of(config))
    assert host.call_sync("session.id", {}) == HostReply(ok=True, value="sess-1")
    assert host.call_sync("card.noop", {}) == HostReply.fail("card.noop is not available")
    # a call JS may only make asynchronously is refused in the other mode
    assert host.call_sync("login", {}) == HostReply.fail("login is not available")


def test_arguments_are_validated_against_the_table_model(tmp_path: Path) -> None:
    config = RuntimeConfig(state_dir=tmp_path)
    host = ApiHost(_context(), config, Storage.of(config))
    assert host.call_sync("storage.get", {"key": 3}) == HostReply.fail(
        "parameter error: key: Input should be a valid string"
    )


def test_dynamic_calls_need_scope_dynamic_on_a_card(tmp_path: Path) -> None:
    static = _card_host(tmp_path, dynamic=False)
    reply = asyncio.run(static.call_async("timer.sleep", {"ms": 0}))
    assert reply == HostReply.fail("timer.sleep needs permissions['scope.dynamic'] in mcp.json components[]")
    dynamic = _card_host(tmp_path, dynamic=True)
    assert asyncio.run(dynamic.call_async("timer.sleep", {"ms": 0})) == HostReply(ok=True, value={})
    assert not calls.blocking("timer.sleep") and calls.blocking("request")


def test_a_new_entry_is_one_table_row_plus_its_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What docs/architecture.md promises: add a row and a handler, and the host answers it."""
    row = HostCall("app.ping", NoArgs, "ping")
    monkeypatch.setitem(HOST_CALLS, row.name, row)
    monkeypatch.setattr(ApiHost, "_ping", lambda self, _a: HostReply(ok=True, value="pong"), raising=False)
    config = RuntimeConfig(state_dir=tmp_path)
    assert ApiHost(_context(), config, Storage.of(config)).call_sync("app.ping", {}) == HostReply(ok=True, value="pong")


# Valid arguments for each call, as the JS sends them; a new table row needs one here.
SAMPLES: dict[str, dict[str, object]] = {
    "storage.set": {"key": "k", "data": {"n": 1}},
    "storage.get": {"key": "k"},
    "storage.remove": {"key": "k"},
    "storage.clear": {},
    "storage.info": {},
    "session.id": {},
    "cards.expireAll": {"componentPaths": ["components/c/index"]},
    "device.info": {},
    "app.info": {},
    "account.info": {},
    "login": {},
    "checkSession": {},
    "timer.sleep": {"ms": 0},
    "timer.set": {"id": 1, "ms": 1000, "repeat": True, "at": {"file": "components/c/index.js", "line": 3}},
    "timer.clear": {"id": 1},
    "card.followUp": {"content": [{"type": "text", "text": "hi"}, {"type": "api/call", "data": {"name": "a"}}]},
    "card.reapply": {"arguments": {"q": 1}},
    "card.updateModelContext": {"content": [{"type": "text", "text": "ctx"}]},
    "card.dimensions": {},
    "card.expirePrevious": {},
    "card.setRelatedPage": {"path": "/pages/a/a"},
    "card.openDetailPage": {"url": "/pages/d/d?id=1"},
    "card.previewMedia": {"sources": [{"url": "https://img.example.com/a.jpg"}]},
    "card.makePhoneCall": {"phoneNumber": "10086"},
    "card.trigger": {"name": "picked", "detail": {"id": 1}},
    "card.warn": {"code": "CMPVM007", "message": "w"},
    "card.noop": {},
    "payment.request": {"timeStamp": "1", "nonceStr": "n", "package": "prepay_id=p", "paySign": "s"},
    "profile.phoneNumber": {},
    "profile.address": {},
    "profile.location": {"type": "gcj02"},
    "profile.fuzzyLocation": {},
}


def _stand_in_host(tmp_path: Path) -> ApiHost:
    """An API host whose call the user approved at L4, with a profile: what the stand-ins need."""
    profile = UserProfile.model_validate(
        {
            "phone": {"purePhoneNumber": "13800138000"},
            "addresses": [{"userName": "u", "telNumber": "1", "provinceName": "p", "cityName": "c", "detailInfo": "d"}],
            "location": {"latitude": 31.2, "longitude": 121.5},
        }
    )
    config = RuntimeConfig(state_dir=tmp_path, profile=profile)
    context = _context().model_copy(update={"consent": RiskLevel.L4})
    return ApiHost(context, config, Storage.of(config), payments=ScriptedPaymentProvider())


@pytest.mark.parametrize("call", [c for c in HOST_CALLS.values() if c.name != "request"], ids=lambda c: c.name)
def test_every_call_answers_ok_to_valid_arguments(tmp_path: Path, call: HostCall) -> None:
    host = _stand_in_host(tmp_path) if call.surface == "api" else _card_host(tmp_path, dynamic=True)
    host.call_sync("storage.set", {"key": "k", "data": 1})  # so storage.get finds a value
    if call.name == "checkSession":
        assert asyncio.run(host.call_async("login", {})).ok  # so checkSession finds a session
    args = SAMPLES[call.name]
    for mode in sorted(call.modes):
        reply = host.call_sync(call.name, args) if mode == "sync" else asyncio.run(host.call_async(call.name, args))
        assert reply.ok, f"{call.name} ({mode}): {reply.error}"
        assert reply.value is not None
        host.call_sync("storage.set", {"key": "k", "data": 1})


def test_a_request_off_the_allow_list_is_refused_with_a_diagnostic(tmp_path: Path) -> None:
    host = _card_host(tmp_path, dynamic=True)
    reply = asyncio.run(host.call_async("request", {"url": "https://elsewhere.example/x"}))
    assert reply == HostReply.fail("url not in domain list: https://elsewhere.example/x")
    assert [d.code for d in host.diagnostics] == ["RUN020"]
