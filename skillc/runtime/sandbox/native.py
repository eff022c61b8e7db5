"""Two things the quickjs-ng binding does not offer, reached through its exported C API with ctypes:
a wall-clock interrupt handler (the binding's own time limit counts process CPU time and forbids
host calls) and ``JS_Eval`` with a real file name (the binding always says ``<input>``).

Both read the binding's private object layout ``{PyObject_HEAD; JSRuntime*; JSContext*; ...}``, which
any release may change. :func:`self_check` proves the layout and the behaviour once per process;
when it fails, the engine falls back to the process guard (deadline) and ``<input>`` (file names).
"""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import _quickjs
import quickjs

_TAG_EXCEPTION = 6
_COMPILE_ONLY = 1 << 5  # JS_EVAL_FLAG_COMPILE_ONLY
_WRITE_BYTECODE = (1 << 0) | (1 << 4)  # JS_WRITE_OBJ_BYTECODE | JS_WRITE_OBJ_STRIP_SOURCE (keeps line numbers)
_READ_BYTECODE = 1 << 0  # JS_READ_OBJ_BYTECODE


class _JSValue(ctypes.Structure):
    _fields_ = [("u", ctypes.c_uint64), ("tag", ctypes.c_int64)]


_INTERRUPT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


@dataclass
class Deadline:
    """A wall-clock deadline that any thread may also trip early (cancel).

    A call makes several (one per slice of a card's work), the interrupt handler asks each many
    times, and almost none is ever tripped or waited on: the flag is a plain attribute, and the
    :class:`threading.Event` a waiter needs is made only when one asks for it."""

    expires_at: float
    seconds: float = 0.0  # the budget it was created with, for messages
    _tripped: bool = field(default=False, repr=False)
    _event: threading.Event | None = field(default=None, repr=False)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    @property
    def tripped(self) -> threading.Event:
        """An event set once the deadline is tripped (for a waiter in another thread or process)."""
        with _trip_lock:
            if self._event is None:
                self._event = threading.Event()
                if self._tripped:
                    self._event.set()
            return self._event

    def is_tripped(self) -> bool:
        return self._tripped

    def expired(self) -> bool:
        return self._tripped or time.monotonic() >= self.expires_at

    def remaining(self) -> float:
        return 0.0 if self._tripped else max(self.expires_at - time.monotonic(), 0.0)

    def trip(self) -> None:
        with _trip_lock:
            self._tripped = True
            if self._event is not None:
                self._event.set()


_trip_lock = threading.Lock()  # orders a trip against the making of its event: no waiter misses it


# The C side gets a small integer as the handler's opaque pointer; this table maps it back.
# One shared ctypes callback serves every context (creating one per context costs ~20 us).
_deadlines: dict[int, Deadline] = {}
_next_key = iter(range(1, 1 << 62))
_lock = threading.Lock()


def _on_interrupt(_rt: int | None, opaque: int | None) -> int:
    try:
        deadline = _deadlines.get(opaque or 0)
        return 1 if deadline is not None and deadline.expired() else 0
    except BaseException:  # a callback must never raise into C; interrupting is the safe answer
        return 1


_HANDLER = _INTERRUPT(_on_interrupt)
_NO_HANDLER = _INTERRUPT()  # a NULL function pointer: removes the handler


class _Lib:
    def __init__(self) -> None:
        lib = ctypes.CDLL(_quickjs.__file__)
        vp = ctypes.c_void_p
        lib.JS_GetRuntimeOpaque.argtypes = [vp]
        lib.JS_GetRuntimeOpaque.restype = vp
        lib.JS_SetInterruptHandler.argtypes = [vp, _INTERRUPT, vp]
        lib.JS_SetInterruptHandler.restype = None
        lib.JS_UpdateStackTop.argtypes = [vp]
        lib.JS_UpdateStackTop.restype = None
        lib.JS_Eval.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int]
        lib.JS_Eval.restype = _JSValue
        lib.JS_FreeValue.argtypes = [vp, _JSValue]
        lib.JS_FreeValue.restype = None
        lib.JS_GetException.argtypes = [vp]
        lib.JS_GetException.restype = _JSValue
        lib.JS_GetGlobalObject.argtypes = [vp]
        lib.JS_GetGlobalObject.restype = _JSValue
        lib.JS_SetPropertyStr.argtypes = [vp, _JSValue, ctypes.c_char_p, _JSValue]
        lib.JS_SetPropertyStr.restype = ctypes.c_int
        lib.JS_WriteObject.argtypes = [vp, ctypes.POINTER(ctypes.c_size_t), _JSValue, ctypes.c_int]
        lib.JS_WriteObject.restype = vp
        lib.JS_ReadObject.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
        lib.JS_ReadObject.restype = _JSValue
        lib.JS_EvalFunction.argtypes = [vp, _JSValue]
        lib.JS_EvalFunction.restype = _JSValue
        lib.js_free.argtypes = [vp, vp]
        lib.js_free.restype = None
        lib.JS_SetGCThreshold.argtypes = [vp, ctypes.c_size_t]
        lib.JS_SetGCThreshold.restype = None
        lib.JS_GetGCThreshold.argtypes = [vp]
        lib.JS_GetGCThreshold.restype = ctypes.c_size_t
        self.lib = lib


_lib: _Lib | None = None


def _load() -> _Lib | None:
    global _lib
    if _lib is None:
        try:
            _lib = _Lib()
        except (OSError, AttributeError):
            return None
    return _lib


class NativeContext:
    """The C pointers behind one ``quickjs.Context``, checked before use."""

    def __init__(self, ctx: quickjs.Context) -> None:
        loaded = _load()
        if loaded is None:
            raise RuntimeError("the quickjs binding does not export the C API skillc needs")
        lib = loaded.lib
        base = id(ctx) + object.__basicsize__
        rt = ctypes.c_void_p.from_address(base).value
        jsctx = ctypes.c_void_p.from_address(base + ctypes.sizeof(ctypes.c_void_p)).value
        # The binding stores the Context object as the runtime's opaque pointer: a cheap proof
        # that the first field really is the JSRuntime*.
        if not rt or not jsctx or lib.JS_GetRuntimeOpaque(rt) != id(ctx):
            raise RuntimeError("unexpected quickjs.Context layout")
        self._ctx = ctx  # keeps the pointers alive
        self._lib = lib
        self._rt = rt
        self._jsctx = jsctx
        self._key = 0

    def set_deadline(self, deadline: Deadline) -> None:
        with _lock:
            if self._key:  # a renewed deadline reuses the installed handler and its key
                _deadlines[self._key] = deadline
                return
            self._key = next(_next_key)
            _deadlines[self._key] = deadline
        self._lib.JS_SetInterruptHandler(self._rt, _HANDLER, self._key)

    def set_gc_threshold(self, size: int) -> None:
        """Run QuickJS's cycle collector only once ``size`` bytes are allocated (its default is
        256 KB). Reference counting frees everything acyclic at once either way; the collector
        finds cycles only. A context that lives for one call, as every API VM's does, is freed
        whole at its end, so collections on the way (a few per call at the default) find nothing
        to free and cost ~8 % of the call. Kept below the memory limit, a context that does make
        cyclic garbage is still collected before the limit is reached."""
        self._lib.JS_SetGCThreshold(self._rt, size)

    @property
    def gc_threshold(self) -> int:
        return int(self._lib.JS_GetGCThreshold(self._rt))

    def release(self) -> None:
        """Forget the deadline; the context must not run JS afterwards without a new one."""
        if self._key:
            self._lib.JS_SetInterruptHandler(self._rt, _NO_HANDLER, None)
            with _lock:
                _deadlines.pop(self._key, None)
            self._key = 0

    def eval_named(self, source: str, filename: str) -> str | None:
        """Evaluate ``source`` as a script named ``filename``; the result is dropped.

        Each (file name, source) is compiled once per process; later contexts load the bytecode,
        which is several times faster than parsing. Returns None on success, else the exception
        as ``String(e) + "\\n" + e.stack``.
        """
        lib, jsctx = self._lib, self._jsctx
        lib.JS_UpdateStackTop(self._rt)  # the stack-overflow check must measure this thread
        key = (filename, source)
        data = _bytecode.get(key)
        if data is None:
            compiled = self.compile(source, filename)
            if isinstance(compiled, str):
                return compiled
            data = compiled
            _remember(key, data)
        fn = lib.JS_ReadObject(jsctx, data, len(data), _READ_BYTECODE)
        if fn.tag == _TAG_EXCEPTION:
            return self._exception()
        value = lib.JS_EvalFunction(jsctx, fn)  # takes fn
        if value.tag == _TAG_EXCEPTION:
            return self._exception()
        lib.JS_FreeValue(jsctx, value)
        return None

    def compile(self, source: str, filename: str) -> bytes | str:
        """``source`` compiled (JS_EVAL_FLAG_COMPILE_ONLY) to bytecode, or the exception text:
        the one compile step of the VMs, which ``check`` (JS007) uses too."""
        lib, jsctx = self._lib, self._jsctx
        text = source.encode("utf-8", "surrogatepass")
        fn = lib.JS_Eval(jsctx, text, len(text), filename.encode("utf-8", "replace"), _COMPILE_ONLY)
        if fn.tag == _TAG_EXCEPTION:
            return self._exception()
        size = ctypes.c_size_t()
        ptr = lib.JS_WriteObject(jsctx, ctypes.byref(size), fn, _WRITE_BYTECODE)
        lib.JS_FreeValue(jsctx, fn)
        if not ptr:
            return self._exception()
        data = ctypes.string_at(ptr, size.value)
        lib.js_free(jsctx, ptr)
        return data

    def _exception(self) -> str:
        lib, jsctx = self._lib, self._jsctx
        exc = lib.JS_GetException(jsctx)
        glob = lib.JS_GetGlobalObject(jsctx)
        lib.JS_SetPropertyStr(jsctx, glob, b"__skillc_evalError", exc)  # takes exc
        lib.JS_FreeValue(jsctx, glob)
        text: Any = self._ctx.eval(
            "(function(){ const e = globalThis.__skillc_evalError; delete globalThis.__skillc_evalError;"
            " try { return [String(e), String((e && e.stack) || '')].join('\\n') } catch (_) { return 'Error' } })()"
        )
        return str(text)


# Bytecode by (file name, source). Bounded: a long-lived server that loads many skills starts over.
_bytecode: dict[tuple[str, str], bytes] = {}
_bytecode_size = 0
_BYTECODE_BUDGET = 128 << 20


def _remember(key: tuple[str, str], data: bytes) -> None:
    global _bytecode_size
    if _bytecode_size + len(data) > _BYTECODE_BUDGET:
        _bytecode.clear()
        _bytecode_size = 0
    _bytecode[key] = data
    _bytecode_size += len(data)


@dataclass(frozen=True)
class SelfCheck:
    ok: bool
    reason: str


_self_check: SelfCheck | None = None
_check_lock = threading.Lock()


def self_check() -> SelfCheck:
    """Prove, once per process, that the deadline holds and file names reach stack traces."""
    global _self_check
    with _check_lock:
        if _self_check is None:
            _self_check = _run_self_check()
        return _self_check


def _run_self_check() -> SelfCheck:
    box: list[SelfCheck] = []

    def probe() -> None:
        try:
            box.append(_probe())
        except Exception as err:
            box.append(SelfCheck(False, f"{type(err).__name__}: {err}"))

    # On a probe thread: if a changed binding ignores the handler, the loop spins there, not here.
    worker = threading.Thread(target=probe, name="skillc-quickjs-self-check", daemon=True)
    worker.start()
    worker.join(3.0)
    return box[0] if box else SelfCheck(False, "a while(true) loop was not interrupted within 3 s")


def _probe() -> SelfCheck:
    ctx = quickjs.Context()
    native = NativeContext(ctx)
    err = native.eval_named("(function probe(){ throw new Error('x') })()", "skillc-self-check.js")
    if err is None or "skillc-self-check.js:1" not in err:
        return SelfCheck(False, f"JS_Eval did not report the file name: {err!r}")
    native.set_deadline(Deadline.after(0.02))
    started = time.monotonic()
    try:
        ctx.eval("while (true) {}")
    except quickjs.JSException as exc:
        if "interrupted" not in str(exc):
            return SelfCheck(False, f"the loop ended with {exc}")
    finally:
        native.release()
    elapsed = time.monotonic() - started
    if elapsed > 1.0:
        return SelfCheck(False, f"the deadline fired after {elapsed:.2f} s")
    return SelfCheck(True, "interrupt handler and named eval work")
