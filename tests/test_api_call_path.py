"""The fast path of an API call: what it keeps per runtime, and what it must never keep between calls."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, RiskLevel
from skillc.runtime.host.api_host import ApiHost
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.engine import EngineLimits, HostReply, JsSession
from skillc.runtime.sandbox.native import Deadline

from .test_runtime import make_runtime, write_skill

STATEFUL = """
let calls = 0
wx.modelContext.registerAPI('probe', async () => {
  calls += 1
  const seen = [calls, typeof globalThis.planted, typeof Object.prototype.polluted, 'planted' in wx]
  globalThis.planted = 1
  Object.prototype.polluted = 1
  try { wx.planted = 1 } catch (e) { /* wx is frozen */ }
  return { content: [{ type: 'text', text: seen.join(',') }] }
})
"""


@pytest.fixture
def no_cycle_collector() -> Iterator[None]:
    """Only reference counting frees objects while a test runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_no_state_leaks_between_two_calls_of_one_runtime(tmp_path: Path) -> None:
    rt = make_runtime(write_skill(tmp_path / "s", STATEFUL, [{"name": "probe"}]), tmp_path / "state")
    try:
        texts = [rt.call_blocking("probe", {}).result.text for _ in range(3)]
    finally:
        rt.close()
    # `in`, not typeof: wx answers any name it lacks with a stub that names it (a function)
    assert texts == ["1,undefined,undefined,false"] * 3


def _pinned(risk: str) -> list[dict[str, Any]]:
    return [{"name": "probe", "_meta": {"x_skillc": {"risk": risk}}}]


def test_a_changed_skill_runs_its_new_code_and_risk(tmp_path: Path) -> None:
    root = tmp_path / "s"
    v1 = "wx.modelContext.registerAPI('probe', async () => ({ content: [{ type: 'text', text: 'v1' }] }))\n"
    first = make_runtime(write_skill(root, v1, _pinned("L0")), tmp_path / "state")
    try:
        before = [first.call_blocking("probe", {}) for _ in range(2)]
    finally:
        first.close()
    v2 = v1.replace("'v1'", "'v2'")
    second = make_runtime(write_skill(root, v2, _pinned("L3")), tmp_path / "state")
    try:
        after = second.call_blocking("probe", {})
    finally:
        second.close()
    assert [(o.result.text, o.risk) for o in before] == [("v1", RiskLevel.L0)] * 2
    # The new risk is assessed (approval needed, none given) and the new code is what would run.
    assert (after.risk, after.result.is_error) == (RiskLevel.L3, True)
    approved = make_runtime(root, tmp_path / "state", approver=lambda _request: True)
    try:
        assert approved.call_blocking("probe", {}).result.text == "v2"
    finally:
        approved.close()


def test_a_session_and_its_context_are_freed_without_the_cycle_collector(
    tmp_path: Path, no_cycle_collector: None
) -> None:
    class Host:
        def call_sync(self, name: str, args: Any) -> HostReply:
            return HostReply.done()

        async def call_async(self, name: str, args: Any) -> HostReply:
            return HostReply.done()

    limits = EngineLimits.of(RuntimeConfig(state_dir=tmp_path))
    session = JsSession(Host(), limits, Deadline.after(5.0), None, native=True)
    reply = session.call(session.pick("callSync"), "probe", "")
    assert reply.json() == '{"ok":true,"value":{},"error":null}'  # the host is reached through its weak link
    del reply
    session.close()
    gone = weakref.ref(session)
    del session
    assert gone() is None


def test_an_api_host_is_freed_without_the_cycle_collector(tmp_path: Path, no_cycle_collector: None) -> None:
    config = RuntimeConfig(state_dir=tmp_path)
    context = ApiCallContext(
        user_did="u", agent_did="a", merchant_did="m", skill_id="s", skill_scope="s", session_id="x", api_name="p"
    )
    host = ApiHost(context, config, Storage.of(config))
    assert host.call_sync("session.id", {}).value == "x"
    gone = weakref.ref(host)
    del host
    assert gone() is None


CYCLES = """
wx.modelContext.registerAPI('churn', async ({ rounds }) => {
  // Each round leaves a ~1 KB cycle behind: only the cycle collector can free it.
  for (let i = 0; i < rounds; i++) {
    const a = { pad: new Array(100).fill(i) }
    const b = { a }
    a.b = b
  }
  return { content: [{ type: 'text', text: 'done ' + rounds }] }
})
"""


def test_a_call_that_leaves_cycles_past_its_memory_limit_is_collected_in_time(tmp_path: Path) -> None:
    """The collector waits for 1/8 of the memory limit in a call's context, never for the limit:
    a call whose cyclic garbage adds up to 10x its limit still runs."""
    apis = [{"name": "churn", "inputSchema": {"type": "object", "properties": {"rounds": {"type": "integer"}}}}]
    rt = make_runtime(write_skill(tmp_path / "s", CYCLES, apis), tmp_path / "state", memory_limit=4 << 20)
    try:
        outcome = rt.call_blocking("churn", {"rounds": 40_000})
    finally:
        rt.close()
    assert [d.code for d in outcome.diagnostics] == []
    assert outcome.result.text == "done 40000"


def test_a_context_collects_late_for_its_first_job_and_at_the_default_after(tmp_path: Path) -> None:
    class Host:
        def call_sync(self, name: str, args: Any) -> HostReply:
            return HostReply.done()

        async def call_async(self, name: str, args: Any) -> HostReply:
            return HostReply.done()

    limits = EngineLimits.of(RuntimeConfig(state_dir=tmp_path, memory_limit=64 << 20))
    session = JsSession(Host(), limits, Deadline.after(5.0), None, native=True)
    try:
        native = session._native
        assert native is not None
        assert native.gc_threshold == 8 << 20
        session.collect_as_usual()  # a card, once mounted
        assert native.gc_threshold == 256 << 10
    finally:
        session.close()


def test_a_deadline_tripped_before_or_after_its_event_is_made_sets_it() -> None:
    """The event a waiter needs (a guard process's watcher) is made only when asked for; a trip
    from another thread sets it whether it came before or after, and the flag reads at once."""
    early = Deadline.after(60.0)
    early.trip()
    assert early.is_tripped() and early.expired() and early.remaining() == 0.0
    assert early.tripped.is_set()

    late = Deadline.after(60.0)
    event = late.tripped
    assert not event.is_set() and not late.expired() and late.remaining() > 0.0
    waiter = threading.Thread(target=late.trip)
    waiter.start()
    assert event.wait(10.0)
    waiter.join()
    assert late.tripped is event and late.is_tripped()
