"""The one call chain every API call goes through, from the CLI, the MCP server or a card's api/call.

    declared? -> arguments: depth bound, surrogates -> inputSchema (defaults, RE2 patterns) -> risk:
    approval for L3/L4 -> VM (fresh context on a worker thread, middleware + handler under one
    deadline) -> AtomicApiResult rules -> outputSchema (warn) -> audit record for L2+

:meth:`ApiRuntime.call` runs the argument checks on a worker thread under the call's deadline, so
no argument or schema can stall the caller's event loop.

Each step that fails produces an ``isError`` result and a diagnostic; nothing raises on what a skill
or a caller sends.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from skillc.diagnostics import Diagnostic, Span
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.package import SkillPackage
from skillc.frontend.risk import assess
from skillc.frontend.upload_formats import refusal, uploads_given
from skillc.ir.render import copy_json
from skillc.runtime.api.api_vm import VmRun, run_api
from skillc.runtime.api.audit import AuditLog, call_record
from skillc.runtime.api.cancel import tracked
from skillc.runtime.api.guard import make_job, run_guarded
from skillc.runtime.api.overrun import GRACE_S, Overruns
from skillc.runtime.api.result import normalise_json
from skillc.runtime.api.schema import SchemaCheck
from skillc.runtime.api.values import clean, clean_text, replaced_note, too_deep, value_depth
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import (
    ApiCallContext,
    ApiCallOutcome,
    ApprovalRequest,
    AtomicApiResult,
    AuditOutcome,
    ConsoleEntry,
    LoadReport,
    RiskLevel,
)
from skillc.runtime.host.payment import PaymentProvider, ScriptedPaymentProvider
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.engine import BackgroundLoop
from skillc.runtime.sandbox.modules import SkillCode
from skillc.runtime.sandbox.native import Deadline, self_check
from skillc.runtime.state import StateError
from skillc.threadnames import name_os_thread

Approver = Callable[[ApprovalRequest], bool | Awaitable[bool]]


def _span(line: int | None, column: int | None) -> Span | None:
    return Span.point(line, column or 1) if line and line >= 1 else None


def api_risk(spec: ApiSpec, config: RuntimeConfig, package: SkillPackage | None = None) -> tuple[RiskLevel, str | None]:
    """The risk level of an API: configuration, then a pinned level (``_meta.x_skillc.risk``,
    ``_meta.anp.risk``, ``x_anp.risk``), else the level inferred from its name, description and,
    given the package, the code its handler runs (frontend/risk.py), never below
    ``config.default_risk``.

    A pinned value that is not a level counts as L4; the second item then says what was wrong.
    """
    if spec.name in config.risk_overrides:
        return config.risk_overrides[spec.name], None
    found = assess(spec, package.sources if package else None, package.code_root if package else None)
    if found.pinned is not None:
        if found.invalid is not None:
            return RiskLevel.L4, f"{spec.name}: {found.pinned} is {found.invalid!r}, not one of L0-L4; treated as L4"
        return RiskLevel(found.level), None
    inferred = RiskLevel(found.level)
    return max(inferred, config.default_risk, key=lambda level: level.rank), None


def _stopped(api_name: str, seconds: float) -> str:
    return f"{api_name} did not finish within {seconds:g} s and was stopped"


def _sentence(message: str) -> str:
    return message + "."


class ApiRuntime:
    """Runs the atomic APIs of one loaded skill. Share one per skill; calls may run concurrently."""

    def __init__(
        self,
        package: SkillPackage,
        config: RuntimeConfig | None = None,
        *,
        approver: Approver | None = None,
        payments: PaymentProvider | None = None,
    ) -> None:
        self.package = package
        self.config = config or RuntimeConfig()
        self.approver = approver
        # Who answers wx.requestPayment: the scripted test provider unless the host plugs in its own.
        self.payments: PaymentProvider = payments or ScriptedPaymentProvider()
        self.code = SkillCode.of(package)
        # What storage and cards are scoped by: a copy of the skill in another folder gets its own.
        folder = hashlib.sha256(str(package.root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self.skill_scope = f"{package.name}@{folder}"
        self.storage = Storage.of(self.config)
        self.audit = AuditLog.of(self.config)
        self.diagnostics: list[Diagnostic] = []
        self.mode = self._deadline_mode()
        self._executor = ThreadPoolExecutor(
            max_workers=self.config.workers, thread_name_prefix="skillc-js", initializer=name_os_thread
        )
        self._overruns = Overruns(self.config.workers)
        self._host_loop = BackgroundLoop()
        self._inputs: dict[str, SchemaCheck] = {}
        self._outputs: dict[str, SchemaCheck] = {}
        # The package and the configuration are fixed for the runtime's life, so is each API's risk
        # (assessing it scans the handler's code: far more than the rest of a call's checks).
        self._risks: dict[str, tuple[RiskLevel, str | None]] = {}
        self.depth_limit = self.config.value_depth  # nesting bound of arguments and results

    def _deadline_mode(self) -> str:
        if self.config.deadline_mode != "auto":
            return self.config.deadline_mode
        check = self_check()
        if check.ok:
            return "interrupt"
        self.diagnostics.append(
            Diagnostic.make(
                "RUN023",
                f"the in-process deadline failed its self-check ({check.reason}); calls run in guard processes",
                hint="pin quickjs-ng to the version in pyproject.toml",
            )
        )
        return "process"

    # -- the public surface --------------------------------------------------------------------

    def context(
        self,
        api_name: str = "",
        arguments: dict[str, Any] | None = None,
        *,
        user_did: str | None = None,
        session_id: str | None = None,
        capability_token: str | None = None,
    ) -> ApiCallContext:
        """A call context from the configured identity (what the CLI uses); ``capability_token``:
        a wx.login token the caller presents."""
        ident = self.config.identity
        return ApiCallContext(
            user_did=user_did or ident.user_did,
            agent_did=ident.agent_did,
            merchant_did=ident.merchant_did,
            skill_id=self.package.name,
            skill_scope=self.skill_scope,
            session_id=session_id or f"session-{uuid.uuid4().hex[:16]}",
            api_name=api_name,
            arguments=arguments or {},
            capability_token=capability_token,
        )

    async def call(
        self,
        api_name: str,
        arguments: Any = None,
        context: ApiCallContext | None = None,
        *,
        timeout_s: float | None = None,
        approver: Approver | None = None,
    ) -> ApiCallOutcome:
        """Run one call: approval on the caller's loop, the VM on a worker thread.

        ``approver`` decides this call's approval instead of the runtime's own (a card host
        passes the user's answer for one api/call).
        """
        seconds = timeout_s if timeout_s is not None else self.config.timeout_s
        deadline = Deadline.after(seconds)
        # Whoever started this work (a chat turn, a server shutting down) may stop it through the
        # deadline: skillc.runtime.api.cancel.
        with tracked(deadline):
            return await self._call(api_name, arguments, context, deadline, approver)

    async def _call(
        self,
        api_name: str,
        arguments: Any,
        context: ApiCallContext | None,
        deadline: Deadline,
        approver: Approver | None,
    ) -> ApiCallOutcome:
        loop = asyncio.get_running_loop()
        seconds = deadline.seconds
        started = time.perf_counter()
        if self.mode != "process" and not self._overruns.active:
            # One trip to a worker for the checks and the VM together: every hop between the loop and
            # a worker thread costs tens of microseconds of CPU, a sizeable share of a trivial call.
            return await self._checked_and_run(api_name, arguments, context, deadline, approver)
        prepared = loop.run_in_executor(self._pool(), self._prepare, api_name, arguments, context)
        try:
            chain = await asyncio.wait_for(prepared, max(deadline.remaining(), 0.001))
        except TimeoutError:
            late = _Chain(self, api_name, started)
            return late.fail("RUN012", _stopped(api_name, seconds))
        if isinstance(chain, ApiCallOutcome):
            return chain
        return await self._approved_and_run(chain, deadline, approver)

    async def _checked_and_run(
        self,
        api_name: str,
        arguments: Any,
        context: ApiCallContext | None,
        deadline: Deadline,
        approver: Approver | None,
    ) -> ApiCallOutcome:
        """The checks and, unless the API needs approval, the VM on one worker (interrupt mode)."""
        loop = asyncio.get_running_loop()
        chain = _Chain(self, api_name, time.perf_counter())
        work = loop.run_in_executor(self._pool(), self._prepare_and_run, chain, arguments, context, deadline)
        try:
            done = await asyncio.wait_for(asyncio.shield(work), deadline.remaining() + GRACE_S)
        except TimeoutError:
            return self._late(chain, work, deadline)
        except asyncio.CancelledError:
            deadline.trip()
            raise
        return done if done is not None else await self._approved_and_run(chain, deadline, approver)

    def _late(self, chain: _Chain, work: Future[Any] | asyncio.Future[Any], deadline: Deadline) -> ApiCallOutcome:
        """The answer when the worker of :meth:`_prepare_and_run` is not done at the deadline and its grace."""
        deadline.trip()  # the worker starts no VM now, or stops it at its next interrupt check
        if not chain.vm_started:  # still checking the arguments: answered on a chain of its own
            late = _Chain(self, chain.api_name, chain.started)
            return late.fail("RUN012", _stopped(chain.api_name, deadline.seconds))
        return self._overrun(chain, work, deadline.seconds)

    def _prepare_and_run(
        self, chain: _Chain, arguments: Any, context: ApiCallContext | None, deadline: Deadline
    ) -> ApiCallOutcome | None:
        """The outcome, or None when the call waits for the user's approval first."""
        prepared = self._prepare(chain.api_name, arguments, context, chain)
        if isinstance(prepared, ApiCallOutcome):
            return prepared
        if chain.risk.needs_approval:
            return None
        if deadline.is_tripped():  # the caller was answered while the arguments were checked
            late = _Chain(self, chain.api_name, chain.started)  # nobody reads it: no audit, no shared state
            return late.fail("RUN012", _stopped(chain.api_name, deadline.seconds))
        chain.vm_started = True
        return self._execute(chain, deadline)

    async def _approved_and_run(self, chain: _Chain, deadline: Deadline, approver: Approver | None) -> ApiCallOutcome:
        seconds = deadline.seconds
        if chain.risk.needs_approval:
            if not await self._ask(chain, approver or self.approver):
                return chain.refused()
            deadline = Deadline.after(seconds)  # the user's time to answer does not count
            with tracked(deadline):
                return await self._run_approved(chain, deadline)
        return await self._run_approved(chain, deadline)

    async def _run_approved(self, chain: _Chain, deadline: Deadline) -> ApiCallOutcome:
        loop = asyncio.get_running_loop()
        seconds = deadline.seconds
        chain.guarded = self.mode == "process" or self._overruns.active
        work = loop.run_in_executor(self._pool(), self._execute, chain, deadline)
        if chain.guarded:
            # The guard process is killed at the deadline, so nothing can overrun; and its start-up
            # is not the skill's time, which a wait bounded by the deadline here would count.
            return await work
        try:
            return await asyncio.wait_for(asyncio.shield(work), deadline.remaining() + GRACE_S)
        except TimeoutError:
            deadline.trip()
            return self._overrun(chain, work, seconds)
        except asyncio.CancelledError:
            deadline.trip()  # the worker stops at its next interrupt check instead of running on
            raise

    def _overrun(self, chain: _Chain, work: Future[Any] | asyncio.Future[Any], seconds: float) -> ApiCallOutcome:
        """Past the deadline and its grace: a native built-in the interrupt cannot reach. Answer
        now; the worker runs on, and the skill's calls use guard processes until it is back."""
        self._overruns.track(work)
        chain.diagnostics.append(
            Diagnostic.make(
                "RUN044",
                f"{chain.api_name} kept running past its deadline inside a native built-in, where the interrupt "
                "cannot reach; until it ends, this skill's calls run in guard processes",
            )
        )
        return chain.fail("RUN012", _stopped(chain.api_name, seconds), AuditOutcome.TIMEOUT)

    def _pool(self) -> ThreadPoolExecutor:
        """The workers for the next call: the guard pool while a worker is stuck past its deadline."""
        return self._overruns.guard_pool if self._overruns.active else self._executor

    def call_blocking(
        self,
        api_name: str,
        arguments: Any = None,
        context: ApiCallContext | None = None,
        *,
        timeout_s: float | None = None,
    ) -> ApiCallOutcome:
        """Run one call from code without an event loop: the same chain as :meth:`call`, on the same
        workers, answered at the deadline (plus its grace) here too when a call is stuck in a native
        built-in. An approval and the process mode go through :meth:`call` on the runtime's own
        host loop."""
        loop = self._host_loop.loop
        if self.mode == "process" or self._overruns.active:  # a guard process: see _approved_and_run
            work = self.call(api_name, arguments, context, timeout_s=timeout_s)
            return asyncio.run_coroutine_threadsafe(work, loop).result()
        deadline = Deadline.after(timeout_s if timeout_s is not None else self.config.timeout_s)
        chain = _Chain(self, api_name, time.perf_counter())
        job = self._pool().submit(self._prepare_and_run, chain, arguments, context, deadline)
        try:
            done = job.result(deadline.remaining() + GRACE_S)
        except TimeoutError:
            return self._late(chain, job, deadline)
        if done is not None:
            return done
        return asyncio.run_coroutine_threadsafe(self._approved_and_run(chain, deadline, None), loop).result()

    @property
    def overrunning(self) -> bool:
        """Whether a worker is still running past its deadline (a process should exit without it)."""
        return self._overruns.active

    async def load(self, context: ApiCallContext | None = None) -> LoadReport:
        """Run index.js once and compare what it registers with what mcp.json declares."""
        ctx = context or self.context()
        deadline = Deadline.after(self.config.timeout_s)
        loop = asyncio.get_running_loop()
        guarded = self.mode == "process" or self._overruns.active
        run = await loop.run_in_executor(self._executor, self._run, None, {}, ctx, deadline, guarded)
        report = LoadReport(registrations=run.registrations, console=run.console, diagnostics=list(self.diagnostics))
        diags = report.diagnostics
        if run.state != "loaded":
            err = run.error
            where = f" ({err.file}:{err.line})" if err and err.file else ""
            what = err.headline if err else run.state
            diags.append(
                Diagnostic.make("RUN001", f"index.js failed to load{where}: {what}", file=err.file if err else None)
            )
            return report
        declared = {a.name for a in self.package.manifest.apis} if self.package.manifest else set()
        seen: set[str] = set()
        for reg in run.registrations:
            span = _span(reg.line, 1)
            if not reg.is_function:
                message = f'registerAPI("{reg.name}", ...) was given something that is not a function'
                diags.append(Diagnostic.make("RUN004", message, file=reg.file, span=span))
            elif reg.name not in declared:
                message = f'index.js registered "{reg.name}", which mcp.json does not declare; it cannot be called'
                diags.append(Diagnostic.make("RUN003", message, file=reg.file, span=span))
            if reg.name in seen:
                message = f'"{reg.name}" is registered more than once; the last registration wins'
                diags.append(Diagnostic.make("RUN005", message, file=reg.file, span=span))
            seen.add(reg.name)
        registered = {r.name for r in run.registrations if r.is_function}
        for name in sorted(declared - registered):
            diags.append(
                Diagnostic.make(
                    "RUN002",
                    f'mcp.json declares "{name}" but running index.js did not register it',
                    file="mcp.json",
                    hint=f"call skill.registerAPI('{name}', handler) in index.js",
                )
            )
        return report

    def close(self) -> None:
        # A worker stuck in a native built-in would hold the shutdown for minutes: leave it.
        self._executor.shutdown(wait=not self._overruns.active, cancel_futures=True)
        self._overruns.close()
        self._host_loop.close()

    # -- steps ---------------------------------------------------------------------------------

    def _prepare(
        self, api_name: str, arguments: Any, context: ApiCallContext | None, chain: _Chain | None = None
    ) -> _Chain | ApiCallOutcome:
        chain = chain or _Chain(self, api_name, time.perf_counter())
        spec = self.package.manifest.api(api_name) if self.package.manifest else None
        if spec is None:
            declared = ", ".join(a.name for a in self.package.manifest.apis) if self.package.manifest else ""
            return chain.fail("RUN011", f'no API named "{api_name}" is declared in mcp.json (declared: {declared})')
        chain.spec = spec
        chain.risk, problem = self._risk(spec)
        if problem is not None:
            chain.diagnostics.append(Diagnostic.make("RUN024", problem, file="mcp.json"))
        # consent is the chain's to give (in _ask), never the caller's to claim
        chain.context = (context or self.context()).model_copy(update={"api_name": api_name, "consent": None})
        if chain.context.anonymous and chain.risk.rank >= RiskLevel.L1.rank:
            # Before the arguments and any approval: nobody is asked to consent for a caller no one is.
            message = (
                f"{api_name} needs a signed-in user (risk {chain.risk.value}) and the caller is anonymous; "
                "call it with a user DID (skillc call / run / serve --user DID)"
            )
            return chain.fail("RUN060", message, AuditOutcome.REFUSED)
        checked = self._checked_arguments(api_name, spec, arguments)
        if checked.replaced:
            note = f"{api_name}: {replaced_note(checked.replaced, 'the arguments')}"
            chain.diagnostics.append(Diagnostic.make("RUN042", note))
        if checked.refusal is not None:
            code, message = checked.refusal
            return chain.fail(code, message, AuditOutcome.INVALID, checked.args)
        assert checked.args is not None
        args = checked.args
        chain.args = args
        chain.context = chain.context.model_copy(update={"arguments": args})
        return chain

    def _risk(self, spec: ApiSpec) -> tuple[RiskLevel, str | None]:
        found = self._risks.get(spec.name)
        if found is None:
            found = self._risks[spec.name] = api_risk(spec, self.config, self.package)
        return found

    def refuses_arguments(self, api_name: str, arguments: Any) -> bool:
        """Whether a call of ``api_name`` with ``arguments`` stops at its arguments (RUN010, RUN040,
        RUN041, RUN081) before consent matters: a server then asks nobody to approve it."""
        spec = self.package.manifest.api(api_name) if self.package.manifest else None
        return spec is None or self._checked_arguments(api_name, spec, arguments).refusal is not None

    def _checked_arguments(self, api_name: str, spec: ApiSpec, arguments: Any) -> _CheckedArguments:
        """The arguments as the call chain takes them (copied, lone surrogates replaced, defaults
        filled), or the refusal (code, message) they earn: depth, shape, inputSchema, uploads."""
        depth = value_depth(arguments, self.depth_limit)
        if depth > self.depth_limit:
            nested = too_deep(depth, self.depth_limit, at_least=True)
            return _CheckedArguments(refusal=("RUN041", f"the arguments of {api_name} are too deeply nested: {nested}"))
        copied = {} if arguments is None else copy_json(arguments)
        if not isinstance(copied, dict):
            return _CheckedArguments(refusal=("RUN010", f"the arguments of {api_name} must be a JSON object"))
        args, replaced = clean(copied)
        check = self._input_check(spec)
        if check.unsupported:
            listed = "; ".join(str(u) for u in check.unsupported[:3])
            message = (
                f"the inputSchema of {api_name} has a pattern RE2 cannot run (backreference or lookaround?): "
                f"{listed}; the call is refused"
            )
            return _CheckedArguments(args, replaced, ("RUN040", message))
        problems = check.problems(args)
        if problems:
            listed = "; ".join(str(p) for p in problems[:5])
            return _CheckedArguments(args, replaced, ("RUN010", f"invalid arguments for {api_name}: {listed}"))
        uploads = uploads_given(check.uploads, args)
        if uploads:
            return _CheckedArguments(args, replaced, ("RUN081", refusal(api_name, uploads)))
        return _CheckedArguments(args, replaced)

    def _input_check(self, spec: ApiSpec) -> SchemaCheck:
        check = self._inputs.get(spec.name)
        if check is None:
            check = self._inputs[spec.name] = SchemaCheck(spec.input_schema, fill_defaults=True)
        return check

    def output_check(self, spec: ApiSpec) -> SchemaCheck | None:
        if spec.output_schema is None:
            return None
        check = self._outputs.get(spec.name)
        if check is None:
            check = self._outputs[spec.name] = SchemaCheck(spec.output_schema, fill_defaults=False)
        return check

    async def _ask(self, chain: _Chain, approver: Approver | None) -> bool:
        assert chain.context is not None and chain.spec is not None
        request = ApprovalRequest(context=chain.context, risk=chain.risk, description=chain.spec.description)
        approved = False
        if approver is not None:
            try:
                answer = approver(request)
                if inspect.isawaitable(answer):
                    answer = await answer
                approved = answer is True
            except Exception:  # a broken approval UI must mean "not approved", never "approved"
                approved = False
        chain.approved = approved
        if approved:  # what the wx stand-ins check their own level against
            chain.context = chain.context.model_copy(update={"consent": chain.risk})
        return approved

    def _execute(self, chain: _Chain, deadline: Deadline) -> ApiCallOutcome:
        assert chain.context is not None and chain.spec is not None
        run = self._run(chain.api_name, chain.args, chain.context, deadline, chain.guarded)
        return chain.finish(run, chain.spec, deadline)

    def _run(
        self, api_name: str | None, args: dict[str, Any], ctx: ApiCallContext, deadline: Deadline, guarded: bool
    ) -> VmRun:
        if guarded:
            return run_guarded(
                make_job(self.code, api_name, args, ctx, self.config, deadline.remaining()), deadline.tripped
            )
        loop = self._host_loop.loop
        return run_api(
            self.code,
            api_name,
            args,
            ctx,
            self.config,
            self.storage,
            deadline,
            loop,
            native=True,
            payments=self.payments,
            audit_stand_in=self.audit.stand_in_writer(ctx),
        )


def _clean_console(entries: list[ConsoleEntry]) -> tuple[list[ConsoleEntry], int]:
    """Console entries with lone surrogates in their text and args replaced by U+FFFD."""
    total = 0
    out: list[ConsoleEntry] = []
    for entry in entries:
        text, n = clean_text(entry.text)
        args, m = clean(entry.args)
        file, k = clean_text(entry.file) if entry.file else (entry.file, 0)
        if n or m or k:
            entry = entry.model_copy(update={"text": text, "args": args, "file": file})
            total += n + m + k
        out.append(entry)
    return out, total


@dataclass(frozen=True)
class _CheckedArguments:
    """What the argument checks made of a call's arguments: ``args`` (None when they could not be
    read as an object), how many lone surrogates were ``replaced``, and the ``refusal`` (code,
    message) when the call stops there."""

    args: dict[str, Any] | None = None
    replaced: int = 0
    refusal: tuple[str, str] | None = None


class _Chain:
    """The state of one call as it moves through the steps, and how it ends."""

    def __init__(self, runtime: ApiRuntime, api_name: str, started: float) -> None:
        self.runtime = runtime
        self.api_name = api_name
        self.started = started
        self.risk = RiskLevel.L0
        self.approved: bool | None = None
        self.context: ApiCallContext | None = None
        self.spec: ApiSpec | None = None
        self.args: dict[str, Any] = {}
        self.diagnostics: list[Diagnostic] = []
        self.vm_started = False  # set by the worker as it hands the call to the VM
        # Whether the VM runs in a guard process, decided once per call: the caller's wait and the
        # worker must agree on it.
        self.guarded = False

    def refused(self) -> ApiCallOutcome:
        return self.fail(
            "RUN019",
            f"{self.api_name} needs the user's approval (risk {self.risk.value}) and was not approved; "
            "ask the user to confirm, then call it again",
            AuditOutcome.REFUSED,
            self.args,
        )

    def fail(
        self, code: str, message: str, audit: AuditOutcome | None = None, args: dict[str, Any] | None = None
    ) -> ApiCallOutcome:
        self.diagnostics.append(Diagnostic.make(code, message))
        outcome = ApiCallOutcome(
            api_name=self.api_name,
            result=AtomicApiResult.error(_sentence(message)),
            diagnostics=self.diagnostics,
            risk=self.risk,
            approved=self.approved,
        )
        return self._close(outcome, audit, args, message)

    def finish(self, run: VmRun, spec: ApiSpec, deadline: Deadline) -> ApiCallOutcome:
        diags = self.diagnostics + run.diagnostics
        audit = AuditOutcome.ERROR
        if run.state == "returned":
            page = spec.meta.ui.page_path if spec.meta and spec.meta.ui else None
            normal = normalise_json(self.api_name, run.value_json, self.runtime.depth_limit, page_path=page)
            result = normal.result
            diags += normal.diagnostics
            if not result.is_error:
                audit = AuditOutcome.OK
                diags += self._output_problems(spec, result)
        else:
            code, message = self._failure(run, deadline)
            if run.state == "fault" and run.fault == "timeout":
                audit = AuditOutcome.TIMEOUT
            message, replaced = clean_text(message)
            if replaced:
                diags.append(Diagnostic.make("RUN042", f"{self.api_name}: {replaced_note(replaced, 'the error')}"))
            err = run.error
            span = _span(err.line, err.column) if err else None
            diags.append(Diagnostic.make(code, message, file=err.file if err else None, span=span))
            result = AtomicApiResult.error(_sentence(message))
        console, replaced = _clean_console(run.console)
        if replaced:
            diags.append(Diagnostic.make("RUN042", f"{self.api_name}: {replaced_note(replaced, 'the console')}"))
        outcome = ApiCallOutcome(
            api_name=self.api_name,
            result=result,
            console=console,
            diagnostics=diags,
            card_actions=run.card_actions,
            risk=self.risk,
            approved=self.approved,
            stand_in_audit=run.stand_in_audit or None,
        )
        return self._close(outcome, audit, self.args, result.text[:500] if result.is_error else None)

    def _failure(self, run: VmRun, deadline: Deadline) -> tuple[str, str]:
        name = self.api_name
        err = run.error
        what = err.headline if err else "unknown error"
        where = f" at {err.file}:{err.line}" if err and err.file and err.line else ""
        if run.state == "missing":
            return "RUN002", f"{name} is declared in mcp.json but index.js does not register it"
        if run.state == "load_failed":
            return "RUN001", f"index.js failed to load, so {name} could not run: {what}{where}"
        if run.state == "unserializable":
            return "RUN022", f"the result of {name} is not JSON-serializable: {what}"
        if run.state == "threw":
            return "RUN013", f"{name} threw {what}{where}"
        if run.fault == "timeout":
            return "RUN012", _stopped(name, deadline.seconds)
        if run.fault == "memory":
            limit = self.runtime.config.memory_limit >> 20
            return "RUN017", f"{name} ran out of memory (limit {limit} MB) and was stopped"
        if run.fault == "stack":
            return "RUN018", f"{name} exceeded the stack size (recursion too deep){where}"
        if run.fault == "stalled":
            return "RUN021", f"the promise returned by {name} never settled"
        return "RUN013", f"{name} failed: {what}{where}"

    def _output_problems(self, spec: ApiSpec, result: AtomicApiResult) -> list[Diagnostic]:
        check = self.runtime.output_check(spec)
        if check is None or result.structured_content is None:
            return []
        return [
            Diagnostic.make("RUN016", f"{spec.name}: structuredContent does not match outputSchema at {p}")
            for p in check.problems(result.structured_content)[:5]
        ]

    def _close(
        self, outcome: ApiCallOutcome, audit: AuditOutcome | None, args: dict[str, Any] | None, detail: str | None
    ) -> ApiCallOutcome:
        outcome.duration_ms = round((time.perf_counter() - self.started) * 1000, 3)
        if audit is not None and self.risk.audited and self.context is not None:
            c = self.context
            record = call_record(
                c,
                api_name=self.api_name,
                risk=self.risk,
                arguments=args if args is not None else c.arguments,
                outcome=audit,
                detail=detail,
                duration_ms=outcome.duration_ms,
            )
            try:
                self.runtime.audit.write(record)
            except StateError as err:
                # The call ran (a payment may have gone through): its outcome is answered, and the
                # record the store could not take is logged whole instead of lost with the call.
                logging.getLogger("skillc.server").error(
                    "SRV052 the audit record of %s was not written (%s): %s",
                    self.api_name,
                    err,
                    record.model_dump_json(),
                )
            outcome.audit = record
        return outcome
