"""The Atomic Component VM: one long-lived QuickJS context per card instance.

A :class:`ComponentVm` loads the skill's modules, runs ``components/<name>/index.js`` (which
calls ``Component({...})``) and drives the instance: lifetimes, notifications, event handlers,
setData callbacks. Unlike the API VM the context lives as long as the card, so each slice of
work gets a fresh deadline, and async host calls a timer is sleeping on stay in flight between
slices. Create, use and close it on one thread: the card host pins each card to a thread.

Every driver method returns ``None`` or the :class:`JsError` the component threw; only a fault
that ends the context (deadline, memory, stack) raises, as :class:`~skillc.runtime.engine.JsFault`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from skillc.frontend.package import SkillPackage
from skillc.runtime.apivm import JsError
from skillc.runtime.contracts import ConsoleEntry
from skillc.runtime.engine import EngineLimits, JsFault, JsSession, classify, script
from skillc.runtime.native import Deadline

# Line 1 of every module carries this prefix, so line numbers in stack traces match the file.
_WRAP_HEAD = "globalThis.__skillc_m = (function (exports, require, module, __filename, __dirname) {"
_WRAP_TAIL = "\n})"
_VM_SCRIPTS = ("loader.js", "wx.js", "component_vm.js")
# Host calls an event waits for before it returns; a sleeping timer is not one of them.
_SLICE_WAITS = frozenset({"request", "login", "checkSession"})


@dataclass(frozen=True)
class ComponentCode:
    """Every .js and .json file of the skill, wrapped once; a card's index.js may require helpers."""

    scripts: tuple[tuple[str, str], ...]
    json_files: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, pkg: SkillPackage) -> ComponentCode:
        return _code_of(tuple(sorted(pkg.sources.items())))


@cache
def _code_of(sources: tuple[tuple[str, str], ...]) -> ComponentCode:
    scripts = tuple((p, _WRAP_HEAD + t + _WRAP_TAIL) for p, t in sources if p.endswith(".js"))
    data = tuple((p, t) for p, t in sources if p.endswith(".json"))
    return ComponentCode(scripts, data)


@dataclass
class Slice:
    """What the instance did since the last take: the setData changes (in order) and late errors."""

    changes: dict[str, Any] = field(default_factory=dict)
    errors: list[JsError] = field(default_factory=list)
    callbacks: int = 0


def _waits(name: str) -> bool:
    return name in _SLICE_WAITS or name.startswith("storage.")


class ComponentVm:
    def __init__(
        self,
        code: ComponentCode,
        main: str,
        host: Any,
        limits: EngineLimits,
        loop: asyncio.AbstractEventLoop | None,
        *,
        native: bool,
        dynamic: bool,
        slice_timeout_s: float,
    ) -> None:
        self._code = code
        self._main = main
        self._dynamic = dynamic
        self._timeout = slice_timeout_s
        self.session = JsSession(host, limits, Deadline.after(slice_timeout_s), loop, native=native)
        self._fns: dict[str, Any] = {}

    # -- loading -------------------------------------------------------------------------------

    def load(self) -> JsError | None:
        """Run the VM scripts, register the modules, seal, and run the component's index.js."""
        s = self._slice()
        for name in _VM_SCRIPTS:
            error = s.run_script(script(name), f"skillc:{name}")
            if error is not None:
                raise JsFault(classify(error), error)
        for name in ("defineModule", "defineJson", "runMain", "bootComponent", "create", "lifetime", "notify"):
            self._fns[name] = s.pick(name)
        for name in ("event", "take", "runCallbacks", "snapshot", "restore", "stopTimers"):
            self._fns[name] = s.pick(name)
        s.call(self._fns["bootComponent"], self._dynamic)
        s.seal()
        for path, wrapped in self._code.scripts:
            error = s.run_script(wrapped, path)
            if error is not None:
                return self._fault_or(JsError.from_text(error))
            if not s.call(self._fns["defineModule"], path):
                return JsError(name="SyntaxError", message=f"{path} is not a module body", file=path, line=1)
        for path, text in self._code.json_files:
            s.call(self._fns["defineJson"], path, text)
        return self._result(s.call(self._fns["runMain"], self._main))

    # -- the instance ----------------------------------------------------------------------------

    def create(self) -> JsError | None:
        return self._result(self._slice().call(self._fns["create"]))

    def lifetime(self, name: str) -> JsError | None:
        return self._result(self._slice().call(self._fns["lifetime"], name))

    def notify(self, kind: str, payload: Any) -> JsError | None:
        text = json.dumps(payload, ensure_ascii=False)
        return self._result(self._slice().call(self._fns["notify"], kind, text))

    def event(self, handler: str, event: Any) -> tuple[JsError | None, bool]:
        """Run a method with an event object; (error, whether the method exists)."""
        raw = self._slice().call(self._fns["event"], handler, json.dumps(event, ensure_ascii=False))
        if raw and json.loads(str(raw)).get("phase") == "missing":
            return None, False
        return self._result(raw), True

    def take(self) -> Slice:
        """Finish pending host calls (not sleeping timers), then take the queued setData changes."""
        s = self.session
        s.pump_idle(_waits)
        raw = json.loads(str(s.call(self._fns["take"])))
        changes = {str(k): v for k, v in raw["changes"]}
        errors = [self._fault_or(JsError.from_js(e)) for e in raw["errors"]]
        return Slice(changes, errors, int(raw["callbacks"]))

    def run_callbacks(self) -> None:
        self._slice().call(self._fns["runCallbacks"])

    def snapshot(self) -> dict[str, Any]:
        value = json.loads(str(self._slice().call(self._fns["snapshot"])))
        return value if isinstance(value, dict) else {}

    def restore(self, data: dict[str, Any]) -> None:
        self._slice().call(self._fns["restore"], json.dumps(data, ensure_ascii=False))

    def stop_timers(self) -> None:
        self._slice().call(self._fns["stopTimers"])

    def settle_timers(self) -> None:
        """Run the callbacks of timers that have fired since the last slice."""
        self._slice()
        self.session.pump_idle(_waits)

    @property
    def pending_timers(self) -> int:
        return self.session.pending_host_calls

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

    @staticmethod
    def _fault_or(err: JsError) -> JsError:
        """An error that means the context is gone (out of memory, stack) ends it, like a fault."""
        kind = "memory" if err.message == "a non-Error value was thrown: null" else classify(err.headline)
        if kind != "error":
            raise JsFault(kind, err.headline)
        return err
