"""The process guard: the fallback deadline when the in-process interrupt handler cannot be trusted.

Each call runs the ordinary VM in a child Python process (``python -m skillc.runtime.api.guard``, the
job on stdin, the :class:`VmRun` on stdout) and the parent kills the child when the deadline
passes. It costs a process start per call, but it holds for any binding, and it also stops long
native builtins that no interrupt handler reaches.

Starting Python and importing skillc is not the skill's time: on a busy machine it can take longer
than a short timeout, and a skill that would finish in time must not be stopped for it. The child
says when it is ready (one byte on stdout), and only then gets the job and its seconds. The start
has a bound of its own, so a child that never starts still ends the call.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import subprocess
import sys
import threading
from typing import Any

from pydantic import BaseModel, ValidationError

from skillc.runtime.api.api_vm import VmRun, run_api
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.modules import JsError, SkillCode
from skillc.runtime.sandbox.native import Deadline

# The child reports host-wait timeouts itself; this grace lets it before the parent kills it.
KILL_GRACE_S = 0.5
# How long a child may take to start (an idle machine: a quarter of a second). Generous: past it,
# the call fails although the skill never ran.
START_TIMEOUT_S = 60.0
# What the child writes once it has imported everything and is ready for its job.
READY = b"R"


class GuardJob(BaseModel):
    scripts: list[tuple[str, str]]
    json_files: list[tuple[str, str]]
    api_name: str | None
    arguments: dict[str, Any]
    context: ApiCallContext
    config: RuntimeConfig
    seconds: float
    app_id: str | None = None


def make_job(
    code: SkillCode,
    api_name: str | None,
    arguments: dict[str, Any],
    context: ApiCallContext,
    config: RuntimeConfig,
    seconds: float,
) -> GuardJob:
    return GuardJob(
        scripts=list(code.scripts),
        json_files=list(code.json_files),
        api_name=api_name,
        arguments=arguments,
        context=context,
        config=config,
        seconds=seconds,
        app_id=code.app_id,
    )


def run_guarded(job: GuardJob, cancelled: threading.Event | None = None) -> VmRun:
    """Run one call in a child process; kill it ``job.seconds`` after it started (plus a grace),
    or as soon as ``cancelled`` is set (the call's deadline tripped from outside: a cancelled
    debugger turn, a server that stops). Blocks the calling thread."""
    child = subprocess.Popen(
        _command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if not _ready(child, START_TIMEOUT_S):
        child.kill()
        child.communicate()
        message = f"the guard process did not start within {START_TIMEOUT_S:g} s"
        return VmRun(state="fault", fault="error", error=JsError(name="InternalError", message=message))
    finished = threading.Event()
    if cancelled is not None:
        threading.Thread(target=_kill_when, args=(child, cancelled, finished), daemon=True).start()
    try:
        out, err = child.communicate(job.model_dump_json().encode(), timeout=job.seconds + KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return _INTERRUPTED
    finally:
        finished.set()
    if cancelled is not None and cancelled.is_set():
        return _INTERRUPTED
    try:
        return VmRun.model_validate_json(out)
    except ValidationError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        message = f"the guard process failed (exit code {child.returncode}) {tail[0]}".strip()
        return VmRun(state="fault", fault="error", error=JsError(name="InternalError", message=message))


_INTERRUPTED = VmRun(state="fault", fault="timeout", error=JsError(name="InternalError", message="interrupted"))
CANCEL_POLL_S = 0.05  # how soon a cancelled call's guard process is killed


def _kill_when(child: subprocess.Popen[bytes], cancelled: threading.Event, finished: threading.Event) -> None:
    """Kill ``child`` once ``cancelled`` is set, unless the call finished first."""
    while not finished.is_set():
        if cancelled.wait(CANCEL_POLL_S):
            child.kill()
            return


def _command() -> list[str]:
    return [sys.executable, "-m", "skillc.runtime.api.guard"]


def _ready(child: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Whether the child said it is ready, or exited (its error comes with its output), within
    ``timeout_s``. Read from the descriptor, past the file object's buffer, so that
    ``communicate`` later reads the rest of stdout whole."""
    assert child.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            return False
    os.read(child.stdout.fileno(), len(READY))  # READY, or b"" from a child that died starting
    return True


def _main() -> None:
    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    job = GuardJob.model_validate_json(sys.stdin.buffer.read())
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    storage = Storage.of(job.config)
    code = SkillCode(tuple(job.scripts), tuple(job.json_files), app_id=job.app_id)
    deadline = Deadline.after(job.seconds)
    # The stand-ins' audit records are written here; the payment provider lives in the parent, so a
    # payment made from a guard process fails (host/standins.py says so in its diagnostic).
    audit = AuditLog.of(job.config).stand_in_writer(job.context)
    run = run_api(
        code,
        job.api_name,
        job.arguments,
        job.context,
        job.config,
        storage,
        deadline,
        loop,
        native=False,
        audit_stand_in=audit,
    )
    sys.stdout.write(run.model_dump_json())
    sys.stdout.flush()


if __name__ == "__main__":
    _main()
