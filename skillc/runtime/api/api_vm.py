"""The Atomic API VM: one fresh context per call runs index.js, then the API's middleware and handler.

:func:`run_api` is synchronous and runs entirely on the calling thread (a context must never be
shared between threads); async host calls are awaited on the ``loop`` it is given. It returns a
:class:`VmRun`, plain data the call chain turns into an AtomicApiResult. Nothing here raises on
anything a skill does.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillc.diagnostics import Diagnostic
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, AuditRecord, CardAction, ConsoleEntry, Registration
from skillc.runtime.host.api_host import ApiHost
from skillc.runtime.host.calls import WX_JS
from skillc.runtime.host.payment import PaymentProvider
from skillc.runtime.host.standins import StandInAudit
from skillc.runtime.host.storage import Storage
from skillc.runtime.host.unavailable import stubs_json
from skillc.runtime.sandbox.engine import EngineLimits, FaultKind, JsFault, JsFile, JsSession, classify
from skillc.runtime.sandbox.modules import JsError, SkillCode, boot, define_modules
from skillc.runtime.sandbox.native import Deadline

API_VM_JS = JsFile("skillc.runtime.api", "api_vm.js")


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
    stand_in_audit: list[AuditRecord] = Field(default_factory=list)


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
    payments: PaymentProvider | None = None,
    audit_stand_in: StandInAudit | None = None,
) -> VmRun:
    """Load the skill in a fresh context and, when ``api_name`` is given, call that API.
    ``payments`` and ``audit_stand_in`` serve the wx stand-ins (host/standins.py)."""
    host = ApiHost(context, config, storage, payments=payments, audit_stand_in=audit_stand_in, app_id=code.app_id)
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
    run.stand_in_audit = host.stand_in_audit
    run.diagnostics = host.diagnostics + run.diagnostics
    return run


def _drive(
    session: JsSession, code: SkillCode, api_name: str | None, arguments: dict[str, Any], context: ApiCallContext
) -> VmRun:
    boot(session, WX_JS)
    # The stubs of the wx APIs skillc lacks, before api_vm.js builds the context's wx from them.
    session.call(session.pick("setUnavailable"), stubs_json("api"))
    error = session.run_script(API_VM_JS.source, API_VM_JS.filename)
    if error is not None:
        raise JsFault(classify(error), error)
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
    # Only a load reports what index.js registered; a call never reads it, and building the models
    # costs as much as the call itself.
    regs = [] if api_name is not None else [Registration.model_validate(r) for r in _loads(session.call(registrations))]
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
    try:
        box = json.loads(str(session.call(poll)))
    except (ValueError, RecursionError):
        box = None
    if not isinstance(box, dict) or not isinstance(box.get("state"), str):
        # never expected (the box is the prelude's envelope); a call result, not a traceback
        err = JsError(name="Error", message="the API VM's outcome could not be read")
        return VmRun(state="threw", error=err, registrations=regs, console=[_console_error(err)])
    state = box["state"]
    if state == "returned":
        return VmRun(state="returned", value_json=box.get("json"), registrations=regs)
    if state == "missing":
        return VmRun(state="missing", registrations=regs)
    err = JsError.from_js(box.get("error") or {})
    if err.fault != "error":
        return VmRun(state="fault", fault=err.fault, error=err, registrations=regs)
    return VmRun(state=state, error=err, registrations=regs, console=[_console_error(err)])


def _loads(text: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(str(text))
    return found


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
