"""The QuickJS engine every VM builds on: one locked-down context, used by one thread.

A :class:`JsSession` owns a fresh ``quickjs.Context`` with a memory limit, a 2-4 MB stack, a
wall-clock :class:`Deadline` (interrupt handler, tripped by time or by another thread), ``eval`` and
the Function constructors removed, and a structured console. Only JSON strings cross the boundary
(the binding mangles big ints, dicts and NUL bytes); host functions never raise into JS, they answer
``{ok, value | error}``. Async host calls (``wx.request``, timers, async storage) run as coroutines on
the caller's asyncio loop; their replies settle JS promises by id while this thread drains jobs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, Protocol

import quickjs
from pydantic import BaseModel, ValidationError

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ConsoleEntry
from skillc.runtime.sandbox.native import Deadline, NativeContext
from skillc.threadnames import named

FaultKind = Literal["timeout", "memory", "stack", "stalled", "error"]


# The cycle collector's threshold while a context does its first job, as a share of the memory
# limit (8 MB of the default 64 MB): well above what a call allocates, well below the limit
# (native.NativeContext.set_gc_threshold). A context that lives on goes back to QuickJS's own.
GC_THRESHOLD_SHARE = 8
QUICKJS_GC_THRESHOLD = 256 << 10


class JsFault(Exception):
    """The context cannot go on: deadline, memory or stack exhausted, or nothing left to wait for."""

    def __init__(self, kind: FaultKind, message: str) -> None:
        super().__init__(message)
        self.kind: FaultKind = kind
        self.message = message


class HostReply(BaseModel):
    """The only shape a host function answers with."""

    ok: bool
    value: Any = None
    error: str | None = None

    @classmethod
    def fail(cls, error: str) -> HostReply:
        return cls(ok=False, error=error)

    @classmethod
    def done(cls) -> HostReply:
        """Success with nothing to say (``{}``, so JS can spread it into its result)."""
        return cls(ok=True, value={})

    def wire(self) -> str:
        """The reply as the JSON text JS reads. A value that pydantic's serialiser refuses (a lone
        surrogate a skill stored, nesting past its depth limit) still crosses, as JSON with
        ``\\uXXXX`` escapes that JS reads back as the same string; one that nothing can serialise
        is a named failure, so no value a skill or a server chose can raise out of a host call."""
        try:
            return self.model_dump_json()
        except ValueError:  # PydanticSerializationError is one
            pass
        try:
            return json.dumps({"ok": self.ok, "value": self.value, "error": self.error})
        except (ValueError, TypeError, RecursionError):
            return HostReply.fail("the reply is nested too deep to reach JS").model_dump_json()


class HostFunctions(Protocol):
    """What a VM offers its context: named sync and async host calls taking JSON-decoded args."""

    def call_sync(self, name: str, args: Any) -> HostReply: ...

    def call_async(self, name: str, args: Any) -> Coroutine[Any, Any, HostReply]: ...


@dataclass(frozen=True)
class EngineLimits:
    memory_limit: int
    stack_size: int
    max_console_entries: int = 500
    max_console_text: int = 8192

    @classmethod
    def of(cls, config: RuntimeConfig) -> EngineLimits:
        return cls(config.memory_limit, config.stack_size, config.max_console_entries, config.max_console_text)


@dataclass(frozen=True)
class JsFile:
    """One of the runtime's own JS files, kept beside the Python module that loads it."""

    package: str
    name: str

    @property
    def source(self) -> str:
        return _read(self.package, self.name)

    @property
    def filename(self) -> str:
        """The name stack traces give it; ``skillc:`` frames are never blamed on the skill."""
        return f"skillc:{self.name}"


@cache
def _read(package: str, name: str) -> str:
    return (resources.files(package) / name).read_text(encoding="utf-8")


log = logging.getLogger("skillc.runtime")
_PAST_DEADLINE = '{"ok":false,"value":null,"error":"the deadline passed"}'

PRELUDE_JS = JsFile("skillc.runtime.sandbox", "prelude.js")


class _ConsoleIn(BaseModel):
    level: Literal["log", "info", "warn", "error", "debug"]
    text: str
    args: list[Any]
    at: dict[str, Any] | None = None


def classify(text: str) -> FaultKind:
    if "interrupted" in text:
        return "timeout"
    if "out of memory" in text or text.strip() in ("null", "null\nundefined"):
        return "memory"
    if "Maximum call stack size exceeded" in text or "stack overflow" in text:
        return "stack"
    return "error"


class BackgroundLoop:
    """An asyncio loop on its own daemon thread, where async host calls run.

    The VM thread blocks on their futures, so the loop must never be the VM's own thread; owning
    one per runtime keeps the VM independent of whoever called it (a server loop, or none).
    """

    START_TIMEOUT_S = 60.0

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        running = threading.Event()
        self.loop.call_soon(running.set)
        self._thread = threading.Thread(target=named(self.loop.run_forever), name="skillc-host", daemon=True)
        self._thread.start()
        # Until the loop runs, is_running() is False, and a close() in that window would close a
        # loop the thread is about to run: wait for it, so close() always sees the loop's state.
        if not running.wait(self.START_TIMEOUT_S):
            if not self._thread.is_alive():
                self.loop.close()  # nothing will run it: do not leave it for the collector to warn about
            raise RuntimeError(f"the loop for async host calls did not start within {self.START_TIMEOUT_S:g} s")

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5.0)
        if not self.loop.is_running():
            self.loop.close()


def _weakly(method: Callable[..., Any], gone: Any) -> Callable[..., Any]:
    """``method`` through a weak reference; ``gone`` once its object is (JS never outlives its session)."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> Any:
        fn = ref()
        return gone if fn is None else fn(*args)

    return call


class JsSession:
    """One context. Create it, use it and close it on the same thread."""

    def __init__(
        self,
        host: HostFunctions,
        limits: EngineLimits,
        deadline: Deadline,
        loop: asyncio.AbstractEventLoop | None,
        *,
        native: bool,
    ) -> None:
        self._thread = threading.get_ident()
        self._host = host
        self._limits = limits
        self.deadline = deadline
        self._loop = loop
        self.console: list[ConsoleEntry] = []
        self._console_dropped = 0
        self._outbox: list[tuple[int, str, Any]] = []
        self._inflight: dict[concurrent.futures.Future[HostReply], tuple[int, str]] = {}
        self._next_id = 1
        # Every call JS made out of the context (host calls and console lines): a card's mount that
        # made none is a function of its code and notifications (kept_mounts.py).
        self.host_calls = 0
        ctx = quickjs.Context()
        ctx.set_memory_limit(limits.memory_limit)
        ctx.set_max_stack_size(limits.stack_size)
        self._ctx = ctx
        self._native: NativeContext | None = None
        if native:
            self._native = NativeContext(ctx)
            self._native.set_deadline(deadline)
        self.collect_late()
        # Through weak references: the context holding the session's methods would make a cycle, and
        # every context would then wait for the cycle collector instead of being freed with its session.
        ctx.add_callable("__skillc_host_sync", _weakly(self._host_sync, _PAST_DEADLINE))
        ctx.add_callable("__skillc_host_async", _weakly(self._host_async, 0))
        ctx.add_callable("__skillc_console", _weakly(self._console, None))
        self._gate: Any = None  # the prelude's host gate, once the prelude has run
        error = self.run_script(PRELUDE_JS.source, PRELUDE_JS.filename)
        if error is not None:
            raise JsFault(classify(error), f"the engine prelude failed: {error}")
        self._pick = ctx.get("__skillc_pick")
        self._settle = self.pick("settle")
        self._gate = self.pick("gate")

    # -- scripts and driver functions ------------------------------------------------------

    def run_script(self, source: str, filename: str) -> str | None:
        """Evaluate a script; None on success, else the error text (file names are real when native)."""
        self._check_thread()
        if self._native is not None:
            gate = self._gate
            if gate is not None:
                self.call(gate, False)
            try:
                return self._native.eval_named(source, filename)
            finally:
                if gate is not None:
                    self.call(gate, True)
        try:
            self._ctx.eval(source)
        except quickjs.JSException as exc:
            return str(exc)
        except ValueError as exc:  # the binding refuses sources with NUL bytes
            return f"SyntaxError: {exc}"
        return None

    def collect_late(self) -> None:
        """Collect cycles only past 1/8 of the memory limit: while the context sets itself up and
        does its first job (an API call's whole life, a card's mount), where collections find
        nearly nothing (the runtime and the skill's modules are all alive), and for a card's last
        job (detached) before its release, which frees everything anyway."""
        if self._native is not None:
            self._native.set_gc_threshold(self._limits.memory_limit // GC_THRESHOLD_SHARE)

    def collect_as_usual(self) -> None:
        """The context outlives its first job (a card between taps): collect cycles at QuickJS's
        own threshold from now on, so garbage a long-lived card makes is not kept for long."""
        if self._native is not None:
            self._native.set_gc_threshold(QUICKJS_GC_THRESHOLD)

    def pick(self, name: str) -> Any:
        """A driver function the prelude or a VM script exported (only Python holds these)."""
        return self._pick(name)

    def seal(self) -> None:
        """Drop the globals that lead to driver functions; call before any skill code runs."""
        self.call(self._ctx.eval, "delete globalThis.__skillc_pick; delete globalThis.__skillc_internal")

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call into JS; a failure that ends the context becomes a :class:`JsFault`."""
        self._check_thread()
        try:
            return fn(*args)
        except quickjs.JSException as exc:
            text = str(exc)
            kind: FaultKind = "stack" if isinstance(exc, quickjs.StackOverflow) else classify(text)
            if kind == "timeout" or self.deadline.expired():
                raise JsFault("timeout", "the deadline passed") from None
            raise JsFault(kind, text) from None

    # -- the job queue and async host calls ---------------------------------------------------

    def drain(self) -> None:
        while self.call(self._ctx.execute_pending_job):
            pass

    def pump(self, done: Callable[[], bool]) -> None:
        """Run jobs and async host calls until ``done()``; raises :class:`JsFault` otherwise."""
        while True:
            self.drain()
            if done():
                return
            self._flush_outbox()
            if not self._inflight:
                raise JsFault("stalled", "the returned promise never settled and no host call is pending")
            self._wait_some()

    def _flush_outbox(self) -> None:
        for call_id, name, args in self._outbox:
            if self._loop is None:
                self.call(self._settle, call_id, HostReply.fail("async host calls are unavailable").model_dump_json())
                continue
            future = asyncio.run_coroutine_threadsafe(self._host.call_async(name, args), self._loop)
            self._inflight[future] = (call_id, name)
        self._outbox.clear()

    def _wait_some(self) -> None:
        while not self.deadline.expired():
            slice_s = min(self.deadline.remaining(), 0.05)  # short slices: a trip from another thread is seen
            done, _ = concurrent.futures.wait(
                list(self._inflight), timeout=slice_s, return_when=concurrent.futures.FIRST_COMPLETED
            )
            if not done:
                continue
            for future in done:
                self._settle_one(future)
            return
        raise JsFault("timeout", "the deadline passed")

    def _settle_one(self, future: concurrent.futures.Future[HostReply]) -> None:
        call_id, _name = self._inflight.pop(future)
        try:
            reply = future.result()
        except Exception as err:  # a host coroutine bug must not take the call down
            reply = _failure(_name, err)
        self.call(self._settle, call_id, reply.wire())

    def pump_idle(self, waits: Callable[[str], bool]) -> None:
        """Run jobs and async host calls until no call that ``waits(name)`` holds back is in flight.

        A long-lived context (a card) must return between events while its timers sleep: those
        stay in flight and are settled by a later ``pump_idle`` once they are done.
        """
        while True:
            self.drain()
            self._flush_outbox()
            done = [f for f in self._inflight if f.done()]
            for future in done:
                self._settle_one(future)
            if done:
                continue
            if not any(waits(name) for _id, name in self._inflight.values()):
                return
            self._wait_some()

    @property
    def pending_host_calls(self) -> int:
        return len(self._inflight)

    def renew(self, deadline: Deadline) -> None:
        """A new deadline for the next slice of work (a long-lived context gets one per event)."""
        self._check_thread()
        self.deadline = deadline
        if self._native is not None:
            self._native.set_deadline(deadline)

    # -- host callables (called by JS; must never raise) -----------------------------------

    def _host_sync(self, name: Any, args_json: Any) -> str:
        self.host_calls += 1
        if self.deadline.expired():
            # The interrupt handler is polled every few thousand instructions, and a loop of host
            # calls runs few instructions per call: refuse, and stop the context at the next poll.
            self.deadline.trip()
            # The prelude spins on this answer until the interrupt; without the native handler
            # nothing would end the spin, so that context only gets a failure.
            return _PAST_DEADLINE if self._native is not None else HostReply.fail("deadline passed").model_dump_json()
        try:
            args = json.loads(str(args_json))
        except ValueError:  # the prelude always sends JSON; anything else is refused, not a bug
            return HostReply.fail("parameter error: the arguments are not JSON").model_dump_json()
        try:
            reply = self._host.call_sync(str(name), args)
        except Exception as err:  # a bug of ours: logged, and a plain failure for the skill
            reply = _failure(name, err)
        return reply.wire()

    def _host_async(self, name: Any, args_json: Any) -> int:
        self.host_calls += 1
        if self.deadline.expired():
            self.deadline.trip()
        try:
            args = json.loads(str(args_json))
        except ValueError:
            args = None
        call_id = self._next_id
        self._next_id += 1
        self._outbox.append((call_id, str(name), args))
        return call_id

    def _console(self, entry_json: Any) -> None:
        self.host_calls += 1
        try:
            if len(self.console) >= self._limits.max_console_entries:
                self._console_dropped += 1
                return
            # json.loads, not model_validate_json: pydantic's parser refuses a lone surrogate escape,
            # which a skill may well log; the call chain replaces those with U+FFFD (RUN042).
            raw = _ConsoleIn.model_validate(json.loads(str(entry_json)))
            text = raw.text
            cap = self._limits.max_console_text
            args = raw.args
            if len(text) > cap:
                text = text[:cap] + f"... ({len(raw.text) - cap} more characters)"
                args = []
            at = raw.at or {}
            self.console.append(
                ConsoleEntry(
                    level=raw.level,
                    text=text,
                    args=args,
                    file=at.get("file"),
                    line=at.get("line"),
                    column=at.get("column"),
                    timestamp=int(time.time() * 1000),
                )
            )
        except (ValidationError, ValueError):
            pass

    def finish_console(self) -> list[ConsoleEntry]:
        """The captured console, with a note when entries were dropped at the cap."""
        if self._console_dropped:
            self.console.append(
                ConsoleEntry(
                    level="warn",
                    text=f"console output truncated: {self._console_dropped} more entries were dropped",
                    timestamp=int(time.time() * 1000),
                )
            )
            self._console_dropped = 0
        return self.console

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        for future in self._inflight:
            future.cancel()
        self._inflight.clear()
        if self._native is not None:
            self._native.release()
            self._native = None

    def _check_thread(self) -> None:
        if threading.get_ident() != self._thread:
            # Two threads in one context segfault; this is a programming error, not user input.
            raise RuntimeError("a JsSession is used from a thread other than the one that created it")


def _failure(name: object, err: Exception) -> HostReply:
    """The skill's view of a host call that raised. A state-store fault (its ``code`` is one of
    SRV050-SRV069, skillc/diagnostics.py) is named, so the call's error says the store failed, not
    skillc; anything else is a bug of ours, logged with its traceback."""
    code = getattr(err, "code", None)
    if isinstance(code, str) and code.startswith("SRV0") and "050" <= code[3:] <= "069":
        log.warning("host call %s: %s", name, err)
        return HostReply.fail(f"{code} the state store did not answer")
    log.exception("host call %s failed", name)
    return HostReply.fail(f"internal error: {type(err).__name__}")
