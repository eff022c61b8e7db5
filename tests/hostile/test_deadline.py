"""The deadline holds where the interrupt cannot reach: a long native built-in is answered at its
deadline plus a grace (RUN012 with RUN044), the skill's next calls run in guard processes while
the stuck worker finishes, and other skills never wait for it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillc.runtime.api.overrun import GRACE_S
from tests.hostile.harness import (
    CLI_START_CPU_S,
    CLI_START_S,
    api,
    benign_skill,
    run_cli,
    serve,
    while_attacking,
    write_skill,
)
from tests.waiting import bound_for

# Built-ins that walk 2**32 - 1 indices (minutes each). Those that run in C without polling the
# interrupt (True) are answered by the overrun watch; the others by the interrupt itself.
NATIVE = {
    "join": ("Array(2 ** 32 - 1).join('')", True),
    "array-like-join": ("Array.prototype.join.call({ length: 2 ** 32 - 1 }, '')", True),
    "toString": ("String(Array(2 ** 32 - 1))", True),
    "indexOf": ("Array(2 ** 32 - 1).indexOf(1)", False),
    "lastIndexOf": ("Array(2 ** 32 - 1).lastIndexOf(1)", False),
    "includes": ("Array(2 ** 32 - 1).includes(1)", False),
}

OVERRAN = (
    "kept running past its deadline inside a native built-in, where the interrupt cannot reach; until it ends, "
    "this skill's calls run in guard processes"
)


def _skill(root: Path, body: str) -> Path:
    index = (
        "const skill = wx.modelContext.createSkill('native')\n"
        f"skill.registerAPI('run', async () => {{ {body}; return {{ content: [{{ type: 'text', text: 'done' }}] }} }})\n"
        "skill.registerAPI('ok', async () => ({ content: [{ type: 'text', text: 'ok' }] }))\n"
    )
    return write_skill(root, "native", index, [api("run"), api("ok")])


@pytest.mark.parametrize(("body", "overruns"), list(NATIVE.values()), ids=list(NATIVE))
def test_a_native_built_in_is_answered_at_its_deadline(tmp_path: Path, body: str, overruns: bool) -> None:
    skill = _skill(tmp_path, body)
    cmd = [sys.executable, "-m", "skillc", "call", str(skill), "run", "--json", "--timeout", "1"]
    proc, took, cpu = run_cli([*cmd, "--state-dir", str(tmp_path / "state")])
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1
    outcome = json.loads(proc.stdout)
    assert outcome["result"]["content"][0]["text"] == "run did not finish within 1 s and was stopped."
    codes = [(d["code"], d["message"]) for d in outcome["diagnostics"]]
    assert (("RUN044", f"run {OVERRAN}") in codes) is overruns
    # Unbounded, these run for minutes: of CPU (the built-in runs on until the process exits,
    # which it does without waiting for it), of the call's own duration and of the process's.
    assert cpu < 1 + GRACE_S + CLI_START_CPU_S, f"{cpu:.1f} CPU seconds for a 1 s deadline"
    assert outcome["durationMs"] < 1000 * bound_for(1), f"{outcome['durationMs']} ms for a 1 s deadline"
    assert took < bound_for(1) + CLI_START_S


def test_a_stuck_skill_keeps_answering_and_blocks_no_other_skill(tmp_path: Path) -> None:
    attacker = _skill(tmp_path, NATIVE["join"][0])
    with serve(attacker, benign_skill(tmp_path), state=tmp_path / "state", args=("--timeout", "3")) as served:
        attack, probe = while_attacking(served, ("run", {}), ("ping", {}), attack_lasts=True)
        assert probe.text == "pong"
        assert attack.text == "run did not finish within 3 s and was stopped." and attack.seconds < bound_for(3)
        # The worker is still inside join: the skill's next calls run in guard processes, whose
        # start-up is not part of the skill's 3 s.
        ok = served.call("ok")
        assert ok.text == "ok", ok.result
        again = served.call("run")
        assert again.text == "run did not finish within 3 s and was stopped."
        assert again.seconds < bound_for(3)
        assert served.call("ping").text == "pong"
