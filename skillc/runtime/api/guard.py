"""The process guard: the fallback deadline when the in-process interrupt handler cannot be trusted.

Each call runs the ordinary VM in a child Python process (``python -m skillc.runtime.api.guard``, the
job on stdin, the :class:`VmRun` on stdout) and the parent kills the child when the deadline
passes. It costs a process start per call, but it holds for any binding, and it also stops long
native builtins that no interrupt handler reaches.
"""

from __future__ import annotations

import asyncio
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
# Starting Python and importing skillc is not the skill's time.
START_ALLOWANCE_S = 5.0


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


def run_guarded(job: GuardJob, deadline: Deadline) -> VmRun:
    """Run one call in a child process; kill it at the deadline. Blocks the calling thread."""
    child = subprocess.Popen(
        [sys.executable, "-m", "skillc.runtime.api.guard"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = child.communicate(
            job.model_dump_json().encode(), timeout=deadline.remaining() + START_ALLOWANCE_S + KILL_GRACE_S
        )
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return VmRun(state="fault", fault="timeout", error=JsError(name="InternalError", message="interrupted"))
    try:
        return VmRun.model_validate_json(out)
    except ValidationError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        message = f"the guard process failed (exit code {child.returncode}) {tail[0]}".strip()
        return VmRun(state="fault", fault="error", error=JsError(name="InternalError", message=message))


def _main() -> None:
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
