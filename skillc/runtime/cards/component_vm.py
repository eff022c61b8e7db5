"""The Atomic Component VM: one long-lived QuickJS context per card instance.

A :class:`ComponentVm` loads the skill's modules, runs ``components/<name>/index.js`` (which
calls ``Component({...})``) and drives the instance: lifetimes, notifications, event handlers,
setData callbacks. Unlike the API VM the context lives as long as the card, so each slice of
work gets a fresh deadline; a dynamic card's timers are kept by the card host, which runs each
callback in a slice of its own (``fire_timer``). Create, use and close it on one thread: the card
host pins each card to a thread.

Every driver method returns ``None`` or the :class:`JsError` the component threw; only a fault
that ends the context (deadline, memory, stack) raises, as :class:`~skillc.runtime.sandbox.engine.JsFault`.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.cards.card_query import PreviewState, parse_state
from skillc.runtime.cards.component_host import ComponentHost
from skillc.runtime.contracts import ConsoleEntry
from skillc.runtime.host.calls import WX_JS, blocking
from skillc.runtime.host.unavailable import stubs_json
from skillc.runtime.sandbox.engine import EngineLimits, JsFault, JsFile, JsSession
from skillc.runtime.sandbox.modules import JsError, SkillCode, boot, define_modules
from skillc.runtime.sandbox.native import Deadline

COMPONENT_VM_JS = JsFile("skillc.runtime.cards", "component_vm.js")
# this.createSelectorQuery() and the 2d canvas (card_query.py answers and paints).
CARD_QUERY_JS = JsFile("skillc.runtime.cards", "card_query.js")

# The driver functions component_vm.js exports (only Python holds them).
_DRIVERS = (
    "defineModule",
    "defineJson",
    "setUnavailable",
    "runMain",
    "bootComponent",
    "create",
    "lifetime",
    "notify",
    "event",
    "take",
    "runCallbacks",
    "snapshot",
    "restore",
    "stopTimers",
    "fireTimer",
    "answerQueries",
    "purity",
)


@dataclass(frozen=True)
class Purity:
    """Whether an instance's state so far follows from its code and the notifications it was given
    alone (no host call but a replayable one, no console line, clock, randomness, render query,
    timer or work left), and what a card with no context must still know of it."""

    pure: bool
    listening: frozenset[str]  # the notification types it has handlers for
    detached: bool  # closing it runs a detached lifetime


@dataclass
class Slice:
    """What the instance did since the last take: the setData changes (in order) and late errors."""

    changes: dict[str, Any] = field(default_factory=dict)
    errors: list[JsError] = field(default_factory=list)
    callbacks: int = 0
    nbytes: int = 0  # the size of the changes as JSON (about: the text they crossed the bridge in)
    previews: PreviewState | None = None  # queries waiting for a render, canvases drawn on


class ComponentVm:
    def __init__(
        self,
        code: SkillCode,
        main: str,
        host: ComponentHost,
        limits: EngineLimits,
        loop: asyncio.AbstractEventLoop | None,
        *,
        native: bool,
        dynamic: bool,
        slice_timeout_s: float,
        max_data_index: int = 100_000,
    ) -> None:
        self._code = code
        self._main = main
        self._dynamic = dynamic
        self._max_index = max_data_index
        self._timeout = slice_timeout_s
        self._host = host
        self.session = JsSession(host, limits, Deadline.after(slice_timeout_s), loop, native=native)
        self._fns: dict[str, Any] = {}

    # -- loading -------------------------------------------------------------------------------

    def load(self) -> JsError | None:
        """Run the VM scripts, register the modules, seal, and run the component's index.js."""
        s = self._slice()
        boot(s, WX_JS, CARD_QUERY_JS, COMPONENT_VM_JS)
        self._fns = {name: s.pick(name) for name in _DRIVERS}
        s.call(self._fns["setUnavailable"], stubs_json("card", self._dynamic))
        s.call(self._fns["bootComponent"], self._dynamic, self._max_index)
        s.seal()
        error = define_modules(s, self._code, self._fns["defineModule"], self._fns["defineJson"])
        if error is not None:
            return self._fault_or(JsError.from_text(error))
        return self._result(s.call(self._fns["runMain"], self._main))

    # -- the instance ----------------------------------------------------------------------------

    def create(self) -> JsError | None:
        return self._result(self._slice().call(self._fns["create"]))

    def lifetime(self, name: str) -> JsError | None:
        return self._result(self._slice().call(self._fns["lifetime"], name))

    def notify(self, kind: str, payload: Any) -> JsError | None:
        return self.notify_text(kind, json.dumps(payload, ensure_ascii=False))

    def event(self, handler: str, event: Any) -> tuple[JsError | None, bool]:
        """Run a method with an event object; (error, whether the method exists)."""
        raw = self._slice().call(self._fns["event"], handler, json.dumps(event, ensure_ascii=False))
        if raw and json.loads(str(raw)).get("phase") == "missing":
            return None, False
        return self._result(raw), True

    def take(self) -> Slice:
        """Finish pending host calls (not sleeping timers), then take the queued setData changes."""
        s = self.session
        s.pump_idle(blocking)
        text = str(s.call(self._fns["take"]))
        raw = json.loads(text)
        changes = {str(k): v for k, v in raw["changes"]}
        errors = [self._fault_or(JsError.from_js(e)) for e in raw["errors"]]
        previews = parse_state(raw.get("previews"))
        return Slice(changes, errors, int(raw["callbacks"]), _utf8_size(text) if changes else 0, previews)

    def answer_queries(self, answers: list[list[Any]]) -> JsError | None:
        """Hand the waiting SelectorQueries their answers; their callbacks run now."""
        return self._result(self._slice().call(self._fns["answerQueries"], json.dumps(answers, ensure_ascii=False)))

    def purity(self) -> Purity:
        raw = json.loads(str(self._slice().call(self._fns["purity"])))
        pure = (
            # console lines count as host calls
            self.session.host_calls == self._host.replayable_calls
            and not raw["nondeterministic"]
            and not raw["queried"]
            and not raw["timers"]
            and not raw["pending"]
            and not self.session.pending_host_calls
        )
        return Purity(pure, frozenset(str(t) for t in raw["listening"]), bool(raw["detached"]))

    def notify_text(self, kind: str, payload_text: str) -> JsError | None:
        """:meth:`notify` with the payload already JSON."""
        return self._result(self._slice().call(self._fns["notify"], kind, payload_text))

    def run_callbacks(self) -> None:
        self._slice().call(self._fns["runCallbacks"])

    def snapshot(self) -> dict[str, Any]:
        value = json.loads(self.snapshot_text())
        return value if isinstance(value, dict) else {}

    def snapshot_text(self) -> str:
        """The instance's data as the JSON text JavaScript made of it."""
        return str(self._slice().call(self._fns["snapshot"]))

    def restore(self, data: dict[str, Any]) -> None:
        self._slice().call(self._fns["restore"], json.dumps(data, ensure_ascii=False))

    def stop_timers(self) -> None:
        self._slice().call(self._fns["stopTimers"])

    def fire_timer(self, timer_id: int) -> JsError | None:
        """Run one timer's callback in a slice of its own (a fresh deadline, as an event gets)."""
        return self._result(self._slice().call(self._fns["fireTimer"], timer_id))

    def console(self) -> list[ConsoleEntry]:
        entries = self.session.finish_console()
        self.session.console = []
        return entries

    def close(self) -> None:
        self.session.close()

    # -- helpers ---------------------------------------------------------------------------------

    def _slice(self) -> JsSession:
        self.session.renew(Deadline.after(self._timeout))
        return self.session

    def _result(self, raw: Any) -> JsError | None:
        if not raw:
            return None
        return self._fault_or(JsError.from_js(json.loads(str(raw))))

    def _fault_or(self, err: JsError) -> JsError:
        """An error that means the context is gone (out of memory, stack) ends it, like a fault."""
        if err.fault != "error":
            raise JsFault(err.fault, err.headline)
        return err if self._dynamic else static_card_error(err)


# A static card has no timers (typeof setTimeout is 'undefined', as a feature test expects), so
# calling one throws the engine's bare ReferenceError; the report says what was called and why.
_NO_TIMER = re.compile(r"(setTimeout|setInterval|clearTimeout|clearInterval) is not defined")


def static_card_error(err: JsError) -> JsError:
    """``err`` with a timer's ReferenceError in a static card named for what it is (V021)."""
    m = _NO_TIMER.fullmatch(err.message) if err.name == "ReferenceError" else None
    if m is None:
        return err
    message = (
        f'{m.group(1)} is not available in a static card: declare permissions["scope.dynamic"] in the '
        "component's components[] entry of mcp.json to give it timers (official rule V021)"
    )
    return err.model_copy(update={"name": "Error", "message": message})


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
