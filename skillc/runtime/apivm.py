"""The Atomic API VM: one fresh context per call runs index.js, then the API's middleware and handler.

:func:`run_api` is synchronous and runs entirely on the calling thread (a context must never be
shared between threads); async host calls are awaited on the ``loop`` it is given. It returns a
:class:`VmRun`, plain data the call chain turns into an AtomicApiResult. Nothing here raises on
anything a skill does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillc.diagnostics import Diagnostic
from skillc.frontend.package import SkillPackage
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, CardAction, ConsoleEntry, Registration
from skillc.runtime.engine import EngineLimits, FaultKind, JsFault, JsSession, classify, script
from skillc.runtime.host import ApiHost
from skillc.runtime.native import Deadline
from skillc.runtime.storage import Storage

# Line 1 of every module carries this prefix, so line numbers in stack traces match the file.
_WRAP_HEAD = "globalThis.__skillc_m = (function (exports, require, module, __filename, __dirname) {"
_WRAP_TAIL = "\n})"
_FRAME = re.compile(r"\(?([^()\s]+):(\d+):(\d+)\)?\s*$")


@dataclass(frozen=True)
class SkillCode:
    """The files require() can reach, each .js wrapped once as a module body."""

    scripts: tuple[tuple[str, str], ...]
    json_files: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, pkg: SkillPackage, *, components: bool = False) -> SkillCode:
        """Every .js and .json outside components/ (the API VM), or every one (a card's VM, whose
        index.js may require helpers)."""
        scripts, data = [], []
        for path, text in sorted(pkg.sources.items()):
            if path.startswith("components/") and not components:
                continue
            if path.endswith(".js"):
                scripts.append((path, _WRAP_HEAD + text + _WRAP_TAIL))
            elif path.endswith(".json"):
                data.append((path, text))
        return cls(tuple(scripts), tuple(data))


def boot(session: JsSession, vm_script: str) -> None:
    """Run the loader, the wx.* surface and one VM script; their failure is a fault, not the skill's."""
    for name in ("loader.js", "wx.js", vm_script):
        error = session.run_script(script(name), f"skillc:{name}")
        if error is not None:
            raise JsFault(classify(error), error)


def define_modules(session: JsSession, code: SkillCode, define: Any, define_json: Any) -> str | None:
    """Register every module of ``code`` with the loader; the error text of the first that fails."""
    for path, wrapped in code.scripts:
        error = session.run_script(wrapped, path)
        if error is not None:
            return error
        if not session.call(define, path):
            return f"SyntaxError: {path} is not a module body\n    at {path}:1:1"
    for path, text in code.json_files:
        session.call(define_json, path, text)
    return None


class JsError(BaseModel):
    """A JS exception, with where it was thrown in the skill."""

    name: str = "Error"
    message: str = ""
    stack: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def headline(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name

    @property
    def fault(self) -> FaultKind:
        """What the error means for its context: a plain "error", or the fault that ends it."""
        # QuickJS throws null when the heap is so exhausted it cannot allocate the error object; a
        # skill that throws null itself is reported as out of memory too (docs/runtime.md says so).
        if self.message == "a non-Error value was thrown: null":
            return "memory"
        return classify(self.headline)

    @classmethod
    def from_js(cls, raw: dict[str, Any]) -> JsError:
        at = raw.get("at") or {}
        return cls(
            name=str(raw.get("name") or "Error"),
            message=str(raw.get("message") or ""),
            stack=str(raw.get("stack") or ""),
            file=at.get("file"),
            line=at.get("line"),
            column=at.get("column"),
        )

    @classmethod
    def from_text(cls, text: str) -> JsError:
        """From an engine error text: ``Name: message`` then the stack frames."""
        head, _, stack = text.partition("\n")
        name, sep, message = head.partition(": ")
        err = cls(name=name if sep else "Error", message=message if sep else head, stack=stack)
        for line in stack.splitlines():
            m = _FRAME.search(line)
            if m and not m.group(1).startswith("skillc:"):
                err.file, err.line, err.column = m.group(1), int(m.group(2)), int(m.group(3))
                break
        return err


RunState = Literal["returned", "threw", "missing", "unserializable", "load_failed", "fault", "loaded"]


class VmRun(BaseModel):
    """What one run of the VM produced, before the call chain interprets it."""

    state: RunState
    value_json: str | None = None
    error: JsError | None = None
    fault: FaultKind | None = None
    registrations: list[Registration] = Field(default_factory=list)
    console: list[ConsoleEntry] = Field(default_factory=list)
    card_actions: list[CardAction] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)


def run_api(
    code: SkillCode,
    api_name: str | None,
    arguments: dict[str, Any],
    context: ApiCallContext,
    config: RuntimeConfig,
    storage: Storage,
    deadline: Deadline,
    loop: asyncio.AbstractEventLoop | None,
    *,
    native: bool,
) -> VmRun:
    """Load the skill in a fresh context and, when ``api_name`` is given, call that API."""
    host = ApiHost(context, config, storage)
    session: JsSession | None = None
    run = VmRun(state="loaded")
    try:
        session = JsSession(host, EngineLimits.of(config), deadline, loop, native=native)
        run = _drive(session, code, api_name, arguments, context)
    except JsFault as fault:
        run = VmRun(state="fault", fault=fault.kind, error=JsError.from_text(fault.message))
    finally:
        if session is not None:
            run.console = session.finish_console() + run.console
            session.close()
    run.card_actions = host.card_actions
    run.diagnostics = host.diagnostics + run.diagnostics
    return run


def _drive(
    session: JsSession, code: SkillCode, api_name: str | None, arguments: dict[str, Any], context: ApiCallContext
) -> VmRun:
    boot(session, "api_vm.js")
    define = session.pick("defineModule")
    define_json = session.pick("defineJson")
    run_main = session.pick("runMain")
    registrations = session.pick("registrations")
    invoke = session.pick("invoke")
    poll = session.pick("poll")
    session.seal()

    error = define_modules(session, code, define, define_json)
    if error is not None:
        return _load_failed(error)

    thrown = str(session.call(run_main, "index.js") or "")
    session.drain()
    regs = [Registration.model_validate(r) for r in json.loads(str(session.call(registrations)))]
    if thrown:
        err = JsError.from_js(json.loads(thrown))
        if err.fault != "error":
            return VmRun(state="fault", fault=err.fault, error=err, registrations=regs)
        return VmRun(state="load_failed", error=err, registrations=regs, console=[_console_error(err)])
    if api_name is None:
        return VmRun(state="loaded", registrations=regs)

    args_json = json.dumps(arguments, ensure_ascii=False)
    session.call(invoke, api_name, args_json, context.skill_id)
    session.pump(lambda: bool(session.call(poll)))
    box = json.loads(str(session.call(poll)))
    state = box["state"]
    if state == "returned":
        return VmRun(state="returned", value_json=box.get("json"), registrations=regs)
    if state == "missing":
        return VmRun(state="missing", registrations=regs)
    err = JsError.from_js(box.get("error") or {})
    if err.fault != "error":
        return VmRun(state="fault", fault=err.fault, error=err, registrations=regs)
    return VmRun(state=state, error=err, registrations=regs, console=[_console_error(err)])


def _load_failed(error_text: str) -> VmRun:
    kind = classify(error_text)
    err = JsError.from_text(error_text)
    if kind != "error":
        return VmRun(state="fault", fault=kind, error=err)
    return VmRun(state="load_failed", error=err, console=[_console_error(err)])


def _console_error(err: JsError) -> ConsoleEntry:
    text = err.headline + ("\n" + err.stack.rstrip() if err.stack else "")
    return ConsoleEntry(
        level="error", text=text, file=err.file, line=err.line, column=err.column, timestamp=int(time.time() * 1000)
    )
