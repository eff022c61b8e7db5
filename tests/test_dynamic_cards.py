"""Dynamic cards (permissions["scope.dynamic"]) in `skillc run` and on the card host: timers outlive
the mount or event that set them and fire on a virtual clock that only `wait` steps move, each
callback giving patches like an event; they pause while hidden, stop on expiry and detach, are
bounded (count, minimum interval) and get an event's deadline. tests/fixtures/dynamic-cards/.
"""

from __future__ import annotations

import asyncio
import http.server
import itertools
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.diff import patches_to_plain
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_timers import VirtualClock
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.flows.flow import FlowRunner, FlowScript, load_flow
from skillc.runtime.host.storage import Storage
from skillc.runtime.state import StateUnavailable
from tests.conftest import FIXTURES

HERE = FIXTURES / "dynamic-cards"
PICKUP = HERE / "pickup-skill"
FLOWS = HERE / "flows"
T = TypeVar("T")

CARD_LINES = """\
  card card-1 components/countdown/index: 10 nodes, ~127px (max 375px), 1 live timer
    view root
      view 0
        text 0.0 "取餐倒计时"
        text 0.1 "3 秒"
        text 0.2 "制作中"
        button 0.3 "再等 10 秒" @tap=onMore
"""


def run_flow(flow: Path, *extra: str) -> tuple[int, str]:
    """The exit code and output of `skillc run`, its console lines' wall-clock times masked."""
    result = CliRunner().invoke(main, ["run", str(PICKUP), "--script", str(flow), *extra])
    return result.exit_code, re.sub(r"\b\d\d:\d\d:\d\d\.\d\d\d ", "HH:MM:SS.mmm ", result.output)


def on_host(
    work: Callable[[CardHost], Awaitable[T]], tmp_path: Path, *, max_cards: int = 64, slice_timeout_s: float = 5.0
) -> T:
    async def go() -> T:
        pkg = load_skill(PICKUP, DiagnosticSink())
        assert pkg is not None
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
        counter = itertools.count(1)
        host = CardHost(
            runtime,
            card_ids=lambda: f"card-{next(counter)}",
            clock=VirtualClock(),
            max_cards=max_cards,
            slice_timeout_s=slice_timeout_s,
        )
        try:
            return await work(host)
        finally:
            await host.close()
            runtime.close()

    return asyncio.run(go())


# -- skillc run: wait, visibility, expiry --------------------------------------------------------


def test_run_fires_timers_on_wait_pauses_them_while_hidden_and_stops_them_on_expiry() -> None:
    code, out = run_flow(FLOWS / "countdown.json")
    assert code == 0
    # Each callback's console.log goes under its timer, with file:line.
    assert out == (
        "[1] call startCountdown\n"
        "  startCountdown: ok (risk L0)\n"
        "    Your order is ready in 3 s.\n" + CARD_LINES + "[2] wait 1500 ms (0 -> 1500 ms)\n"
        "  timer 1 on card-1 at 1000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "2 秒"}\n'
        "    console:\n"
        "      HH:MM:SS.mmm log   components/countdown/index.js:26  tick 2\n"
        "[3] visibility hidden (every card)\n"
        "  timers paused: card-1\n"
        "[4] wait 5000 ms (1500 -> 6500 ms)\n"
        "  no timer fell due\n"
        "[5] visibility visible (every card)\n"
        "  timers resumed: card-1\n"
        "[6] tap onMore on card-1 (node 0.3)\n"
        "  handled: onMore\n"
        "  patches (1):\n"
        '    setText 0.1.0 {"text": "12 秒"}\n'
        # Paused with 500 ms to go: the beat comes 500 ms after the card is shown again.
        "[7] wait 1000 ms (6500 -> 7500 ms)\n"
        "  timer 1 on card-1 at 7000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "11 秒"}\n'
        "    console:\n"
        "      HH:MM:SS.mmm log   components/countdown/index.js:26  tick 11\n"
        "[8] expire card-1\n"
        "  patches (0):\n"
        "[9] wait 5000 ms (7500 -> 12500 ms)\n"
        "  no timer fell due\n"
    )


def test_run_json_keeps_each_timer_callback_with_its_patches_and_console() -> None:
    code, out = run_flow(FLOWS / "countdown.json", "--json")
    assert code == 0
    steps = json.loads(out)
    mounted = steps[0]["cards"][0]
    assert (mounted["pendingTimers"], mounted["cursor"]) == (1, "u1.0")
    wait = steps[1]
    assert (wait["kind"], wait["patches"]) == ("wait", [])
    (firing,) = wait["timers"]
    assert {k: firing[k] for k in ("cardId", "timerId", "atMs", "patches", "timers", "cursor")} == {
        "cardId": "card-1",
        "timerId": 1,
        "atMs": 1000.0,
        "patches": [{"op": "setText", "id": "0.1.0", "text": "2 秒"}],
        "timers": 1,
        "cursor": "u1.1",
    }
    assert [(c["text"], c["file"], c["line"]) for c in firing["console"]] == [
        ("tick 2", "components/countdown/index.js", 26)
    ]
    assert steps[2]["visibility"] == ["card-1"] and steps[3]["timers"] == []


def test_run_stops_the_timers_of_a_card_expired_by_expire_previous_cards() -> None:
    code, out = run_flow(FLOWS / "replace.json")
    assert code == 0
    tail = out.split("[4] ")[1]
    assert tail == (
        "wait 2000 ms (1000 -> 3000 ms)\n"
        "  timer 1 on card-2 at 2000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "4 秒"}\n'
        "    console:\n"
        "      HH:MM:SS.mmm log   components/countdown/index.js:26  tick 4\n"
        "  timer 1 on card-2 at 3000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "3 秒"}\n'
        "    console:\n"
        "      HH:MM:SS.mmm log   components/countdown/index.js:26  tick 3\n"
    )
    assert (
        '  action expirePreviousCards {"cardId": "card-2", "componentPaths": ["components/countdown/index"], '
        '"expired": ["card-1"]}\n' in out
    )


# -- polling -----------------------------------------------------------------------------------


@pytest.fixture
def status_server() -> Iterator[str]:
    """A shop's status endpoint on loopback: cooking, delivering, then delivered from then on."""
    answers = iter(["cooking", "delivering"])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"status": next(answers, "delivered"), "path": self.path}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_run_polls_an_allow_listed_server_from_a_timer(status_server: str, tmp_path: Path) -> None:
    flow = tmp_path / "poll.json"
    steps = [{"call": "trackOrder", "arguments": {"orderId": "A7", "statusUrl": status_server + "/status"}}]
    steps += [{"wait": 2000}, {"wait": 2000}, {"wait": 2000}, {"wait": 4000}]
    flow.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    code, out = run_flow(flow, "--allow-host", status_server)
    assert code == 0, out
    assert out.split("[2] ", 1)[1] == (
        "wait 2000 ms (0 -> 2000 ms)\n"
        "  timer 1 on card-1 at 2000 ms: patches (2):\n"
        '    setText 0.1.0 {"text": "制作中"}\n'
        '    setText 0.2.0 {"text": "已查询 1 次"}\n'
        "[3] wait 2000 ms (2000 -> 4000 ms)\n"
        "  timer 2 on card-1 at 4000 ms: patches (2):\n"
        '    setText 0.1.0 {"text": "配送中"}\n'
        '    setText 0.2.0 {"text": "已查询 2 次"}\n'
        "[4] wait 2000 ms (4000 -> 6000 ms)\n"
        "  timer 3 on card-1 at 6000 ms: patches (2):\n"
        '    setText 0.1.0 {"text": "已送达"}\n'
        '    setText 0.2.0 {"text": "已查询 3 次"}\n'
        # Delivered: the card sets no further timeout, so nothing more runs.
        "[5] wait 4000 ms (6000 -> 10000 ms)\n"
        "  no timer fell due\n"
    )


def test_a_poll_off_the_allow_list_fails_inside_the_timer(status_server: str, tmp_path: Path) -> None:
    flow = tmp_path / "poll.json"
    steps = [{"call": "trackOrder", "arguments": {"orderId": "A7", "statusUrl": status_server + "/status"}}]
    flow.write_text(json.dumps({"steps": [*steps, {"wait": 2000}]}), encoding="utf-8")
    code, out = run_flow(flow)
    assert code == 0
    assert out.split("[2] ", 1)[1] == (
        "wait 2000 ms (0 -> 2000 ms)\n"
        "  timer 1 on card-1 at 2000 ms: patches (2):\n"
        '    setText 0.1.0 {"text": "查询失败"}\n'
        '    setText 0.2.0 {"text": "已查询 1 次"}\n'
        "    console:\n"
        f"      HH:MM:SS.mmm warn  components/order-status/index.js:29  request:fail url not in domain list: "
        f"{status_server}/status?id=A7\n"
        f"  warning[RUN020]: wx.request refused: url not in domain list: {status_server}/status?id=A7\n"
        "    = hint: add the host to the allow list (skillc call --allow-host HOST)\n"
    )


# -- limits --------------------------------------------------------------------------------------


def test_run_reports_too_many_and_too_fast_timers_at_the_call() -> None:
    code, out = run_flow(FLOWS / "busy.json")
    assert code == 0
    assert out.split('        text 0.1 "0 / 0"\n', 1)[1] == (
        "  components/busy-timers/index.js:11:9: warning[CMPVM041]: setInterval: 200 ms is shorter than the "
        "minimum interval of a card's timers; it runs every 1000 ms (card_timer_min_interval_ms)\n"
        "   11 |         setInterval(() => this.beat(), 200)\n"
        "      |         ^\n"
        "  \n"
        "  components/busy-timers/index.js:12:53: warning[CMPVM040]: setTimeout: components/busy-timers/index "
        "already has 8 live timers, the most a card may have (card_max_timers); this timer was not started\n"
        "   12 |         for (let i = 0; i < 8; i++) this.waits.push(setTimeout(() => {}, 60000))\n"
        "      |                                                     ^\n"
        "[2] wait 2000 ms (0 -> 2000 ms)\n"
        "  timer 1 on card-1 at 1000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "1 / 0"}\n'
        "  timer 1 on card-1 at 2000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "2 / 0"}\n'
        "  timer 10 on card-1 at 2000 ms: patches (1):\n"
        '    setText 0.1.0 {"text": "2 / 1"}\n'
        "  components/busy-timers/index.js:20:7: warning[CMPVM041]: setTimeout: 0 ms is shorter than the minimum "
        "interval of a card's timers; inside a timer callback it waits 1000 ms (card_timer_min_interval_ms)\n"
        "   20 |       setTimeout(() => this.setData({ echoes: this.data.echoes + 1 }), 0)\n"
        "      |       ^\n"
    )


def test_a_timer_callback_has_an_events_deadline(tmp_path: Path) -> None:
    async def work(host: CardHost) -> Any:
        shown = await host.call("runaway", {})
        first = await host.advance(1000)
        second = await host.advance(1000)
        third = await host.advance(3000)
        return shown, first, second, third, await host.card("card-1")

    shown, first, second, third, card = on_host(work, tmp_path, slice_timeout_s=0.3)
    assert shown.card is not None and shown.card.pending_timers == 1
    (one,) = first
    assert patches_to_plain(one.outcome.patches) == [{"op": "setText", "id": "0.0.0", "text": "1"}]
    assert [(d.code, d.message, d.file, d.span.line if d.span else None) for d in one.outcome.diagnostics] == [
        (
            "CMPVM004",
            "components/runaway/index: a timer callback threw: Error: beat 1 failed "
            "(at components/runaway/index.js:10)",
            "components/runaway/index.js",
            10,
        )
    ]
    (two,) = second
    assert [(d.code, d.message) for d in two.outcome.diagnostics] == [
        ("CMPVM011", "components/runaway/index ran past its 0.3 s deadline and was stopped")
    ]
    assert two.outcome.timers == 0
    assert third == []  # the stopped card runs no more callbacks
    assert card is not None and card.data == {"beats": 1}  # rebuilt from its last good data, no timers
    assert card.pending_timers == 0


# -- detach, visibility of one card, order -----------------------------------------------------------


def test_an_evicted_card_is_detached_and_its_timers_stop(tmp_path: Path) -> None:
    async def work(host: CardHost) -> Any:
        await host.call("startCountdown", {"seconds": 9})
        await host.call("startCountdown", {"seconds": 5})  # max_cards=1: card-1 is evicted, detached
        ctx = host.runtime.context()
        return await host.advance(3000), (ctx.user_did, ctx.merchant_did, ctx.scope)

    fired, scope = on_host(work, tmp_path, max_cards=1)
    assert [(f.card_id, f.at_ms) for f in fired] == [("card-2", 1000.0), ("card-2", 2000.0), ("card-2", 3000.0)]
    # detached ran for card-1 at its eviction (9 s left, none ticked) and for card-2 at close.
    storage = Storage.of(RuntimeConfig(state_dir=tmp_path))
    assert storage.scope(*scope).get("detached") == "[9, 2]"


def test_one_hidden_card_pauses_alone_and_equal_due_times_fire_in_the_order_set(tmp_path: Path) -> None:
    async def work(host: CardHost) -> Any:
        await host.call("startCountdown", {"seconds": 9})
        await host.call("startCountdown", {"seconds": 5})
        both = await host.advance(1000)
        paused, diags = await host.set_visibility(True, ["card-1"])
        one = await host.advance(2000)
        await host.set_visibility(False, ["card-1"])
        again = await host.advance(1000)
        hidden_host = await host.set_visibility(True)
        late = await host.call("startCountdown", {"seconds": 4})  # mounted while the host is hidden
        none = await host.advance(5000)
        return both, (paused, diags), one, again, hidden_host, late, none

    both, (paused, diags), one, again, hidden_host, late, none = on_host(work, tmp_path)
    assert [(f.card_id, f.at_ms) for f in both] == [("card-1", 1000.0), ("card-2", 1000.0)]
    assert (paused, diags) == (["card-1"], [])
    assert [(f.card_id, f.at_ms) for f in one] == [("card-2", 2000.0), ("card-2", 3000.0)]
    assert [(f.card_id, f.at_ms) for f in again] == [("card-1", 4000.0), ("card-2", 4000.0)]
    assert [patches_to_plain(f.outcome.patches)[0]["text"] for f in again] == ["7 秒", "1 秒"]
    assert hidden_host == (["card-1", "card-2"], [])
    assert late.card is not None and late.card.pending_timers == 1
    assert none == []


def test_a_static_card_keeps_no_timers_and_its_host_no_stream(tmp_path: Path) -> None:
    async def work(host: CardHost) -> Any:
        shown = await host.call("staticNote", {})
        stream = await host.updates("card-1", None)
        return shown, stream, await host.advance(5000)

    shown, (view, diags), fired = on_host(work, tmp_path)
    assert shown.card is not None
    assert (shown.card.data, shown.card.cursor, shown.card.pending_timers) == (
        {"label": "static", "timers": "undefined"},
        None,
        0,
    )
    assert "cursor" not in shown.card.wire()
    assert view is None and [(d.code, d.message) for d in diags] == [
        ("CMPVM012", "card card-1 has no update stream: its component does not declare scope.dynamic")
    ]
    assert fired == []


# -- flow scripts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"steps": [{"wait": 0}]}', "1:21: flow script /steps/0/wait: wait step: Input should be greater than 0"),
        (
            '{"steps": [{"visibility": "dim"}]}',
            "1:27: flow script /steps/0/visibility: visibility step: Input should be 'hidden' or 'visible'",
        ),
        ('{"steps": [{"wait": 5, "card": "x"}]}', "1:24: flow script /steps/0/card: wait step: unknown key 'card'"),
        (
            '{"steps": [{"tick": 5}]}',
            "1:12: flow script /steps/0: a step needs exactly one of call, tap, follow, expire, wait, visibility "
            "(none of them)",
        ),
    ],
)
def test_bad_wait_and_visibility_steps_are_refused_at_their_place(text: str, expected: str) -> None:
    script, diags = load_flow(text, "f.json")
    assert script is None
    assert [f"{d.span.line}:{d.span.column}: {d.message}" for d in diags if d.span] == [expected]
    assert {d.code for d in diags} == {"RUN043"}


def test_a_visibility_step_naming_no_card_fails(tmp_path: Path) -> None:
    flow = tmp_path / "f.json"
    flow.write_text('{"steps": [{"visibility": "hidden", "card": "nope"}]}', encoding="utf-8")
    code, out = run_flow(flow)
    assert code == 1
    assert out == "[1] visibility hidden (nope) FAILED\n  error[CMPVM012]: no card matches 'nope'\n"


def test_a_wait_needs_a_virtual_clock(tmp_path: Path) -> None:
    async def go() -> Any:
        pkg = load_skill(PICKUP, DiagnosticSink())
        assert pkg is not None
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
        host = CardHost(runtime)  # a real clock, as serve has: timers fire on their own
        try:
            return await FlowRunner(host, runtime.context()).run(FlowScript.model_validate({"steps": [{"wait": 10}]}))
        finally:
            await host.close()
            runtime.close()

    (record,) = asyncio.run(go())
    assert record.failed
    assert [d.message for d in record.diagnostics] == [
        "a wait step needs a card host on a virtual clock (skillc run builds one)"
    ]


# -- a dynamic card on two instances sharing one state store -------------------------------------


def test_a_countdown_tapped_on_another_instance_keeps_ticking_once_per_beat(tmp_path: Path) -> None:
    """A's countdown set its interval in the Result handler, which a rebuilt copy never runs. After
    B applies a tap, A's copy takes B's data in place (CMPVM051) and its interval goes on; the beat
    due then is skipped (the card moved on elsewhere), later beats are applied once each."""

    def left(patches: list[Any]) -> list[str]:
        plain = patches_to_plain(patches)
        return [p["text"] for p in plain if p.get("op") == "setText" and p["id"] == "0.1.0"]

    async def work() -> dict[str, Any]:
        pkg = load_skill(PICKUP, DiagnosticSink())
        assert pkg is not None
        runtimes = [ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path)) for _ in "AB"]
        a, b = (CardHost(rt, card_ids=lambda: "card-1", clock=VirtualClock()) for rt in runtimes)
        try:
            await a.call("startCountdown", {"seconds": 30})
            got: dict[str, Any] = {"a_first": [left(f.outcome.patches) for f in await a.advance(2000)]}
            on_b = await b.event("card-1", "0.3")  # B never saw the card: rebuilt, no timer of its own
            got["b_tap"] = (left(on_b.patches), [d.code for d in on_b.diagnostics])
            got["a_skipped"] = await a.advance(1000)
            got["a_next"] = [left(f.outcome.patches) for f in await a.advance(2000)]
            got["b_pending"] = await b.advance(5000)
            again = await b.event("card-1", "0.3")  # B's copy is behind A's two beats: it catches up
            got["b_again"] = (left(again.patches), [d.code for d in again.diagnostics])
            return got
        finally:
            for host, rt in zip((a, b), runtimes, strict=True):
                await host.close()
                rt.close()

    got = asyncio.run(work())
    assert got["a_first"] == [["29 秒"], ["28 秒"]]
    assert got["b_tap"] == (["38 秒"], ["CMPVM014"])
    assert got["a_skipped"] == []  # took B's 38 in place; the beat due at 3 s was B's turn
    assert got["a_next"] == [["37 秒"], ["36 秒"]]
    assert got["b_pending"] == []  # the rebuilt copy set no timer: the card ticks on A alone
    assert got["b_again"] == (["46 秒"], ["CMPVM051"])


def test_a_call_that_ran_answers_though_the_cards_it_expires_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """expireAllCards after the API ran: a store fault then leaves the cards live (logged, SRV052)
    but never turns the completed call into a failure."""

    def unreachable(*_args: Any) -> Any:
        raise StateUnavailable("the state store did not answer")

    async def work(host: CardHost) -> Any:
        monkeypatch.setattr(host.store, "session_cards", unreachable)
        with caplog.at_level(logging.WARNING, logger="skillc.runtime"):
            return await host.call("pickedUp", {})

    out = on_host(work, tmp_path)
    assert not out.api.result.is_error and out.api.result.text == "Picked up."
    assert [a.expired for a in out.actions] == [[]]
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("SRV052 pickup-skill/pickedUp")]
    assert logged == [
        "SRV052 pickup-skill/pickedUp: its cards could not be expired after it ran: the state store did not answer"
    ]
