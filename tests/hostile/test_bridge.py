"""The JS/Python bridge uses only what the runtime captured before skill code ran, and the
deadline holds for loops of host calls: polluted built-ins, hostile thrown values and host-call
loops all end as a plain result within the stated time, never as a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.hostile.harness import CLI_START_CPU_S, CLI_START_S, api, benign_skill, run_cli, serve, write_skill
from tests.waiting import bound_for

# Each API body is an async function's body; it may return a result or throw.
POLLUTIONS = {
    "toJSON-undefined": "Object.prototype.toJSON = function () { return undefined }",
    "toJSON-throws": "Object.prototype.toJSON = function () { throw new Error('no') }",
    "toJSON-string": "Object.prototype.toJSON = function () { return 'gotcha' }",
    "join-throws": "Array.prototype.join = function () { throw new Error('no join') }",
    "join-object": "Array.prototype.join = function () { return {} }",
    "stringify-replaced": "JSON.stringify = function () { return undefined }",
    "parse-replaced": "JSON.parse = function () { return { ok: true, value: 'forged' } }",
}

BRIDGE_USE = """
  console.log('a', { b: 1 }, [1, 2])
  wx.setStorageSync('k', { v: 1 })
  const back = wx.getStorageSync('k')
  return { content: [{ type: 'text', text: 'done ' + (back && back.v) }] }
"""


def _index(apis: dict[str, str]) -> str:
    lines = ["const skill = wx.modelContext.createSkill('bridge')"]
    for name, body in apis.items():
        lines.append(f"skill.registerAPI('{name}', async () => {{\n{body}\n}})")
    return "\n".join(lines) + "\n"


def _call(skill: Path, state: Path, name: str, *extra: str) -> tuple[int, dict[str, object], float, float]:
    """`skillc call`: its exit code, its JSON outcome, its wall and its CPU seconds."""
    cmd = [sys.executable, "-m", "skillc", "call", str(skill), name, "--json", "--state-dir", str(state), *extra]
    proc, took, cpu = run_cli(cmd)
    assert "Traceback" not in proc.stderr and "Fatal Python error" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), took, cpu


def _held_one_second(outcome: dict[str, object], took: float, cpu: float) -> None:
    """A call with a 1 s deadline was stopped by it: it burned about a second of CPU, and its answer
    came (and the process ended) within a bound that grows with the load, not with the loop."""
    assert cpu < 1 + CLI_START_CPU_S, f"{cpu:.1f} CPU seconds for a 1 s deadline"
    duration = outcome["durationMs"]
    assert isinstance(duration, (int, float)) and duration < 1000 * bound_for(1), f"{duration} ms for a 1 s deadline"
    assert took < bound_for(1) + CLI_START_S


@pytest.mark.parametrize("pollution", list(POLLUTIONS.values()), ids=list(POLLUTIONS))
def test_polluted_builtins_do_not_reach_the_bridge(tmp_path: Path, pollution: str) -> None:
    skill = write_skill(tmp_path, "bridge", _index({"run": pollution + BRIDGE_USE}), [api("run")])
    code, outcome, _, _ = _call(skill, tmp_path / "state", "run")
    result = outcome["result"]
    assert isinstance(result, dict)
    # The skill's own result may be broken by its own pollution; the host calls are not.
    if code == 0:
        assert result["content"][0]["text"] == "done 1"
    else:
        assert result["isError"] is True and "internal error" not in json.dumps(outcome)
    console = outcome["console"]
    assert (isinstance(console, list) and any(e["text"] == 'a {"b":1} [1,2]' for e in console)) or code != 0


THROWN = {
    "toString-throws": "throw { toString() { throw new Error('nope') } }",
    "toJSON-throws": "throw { toJSON() { throw new Error('nope') } }",
    "proxy": "throw new Proxy({}, { get() { throw new Error('trap') }, getPrototypeOf() { throw new Error('trap') } })",
    "error-getters": (
        "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('m') } }); throw e"
    ),
    "symbol": "throw Symbol('s')",
    "null": "throw undefined",
}


@pytest.mark.parametrize("throw", list(THROWN.values()), ids=list(THROWN))
def test_a_hostile_thrown_value_becomes_a_plain_error_result(tmp_path: Path, throw: str) -> None:
    skill = write_skill(tmp_path, "thrown", _index({"run": throw}), [api("run")])
    code, outcome, _, _ = _call(skill, tmp_path / "state", "run")
    assert code == 1
    result = outcome["result"]
    assert isinstance(result, dict) and result["isError"] is True
    assert result["content"][0]["text"].startswith("run threw ")


def test_a_thrown_value_whose_tostring_loops_ends_at_the_deadline(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "thrown",
        _index({"run": "throw { toString() { for (;;) {} } , toJSON() { return undefined } }"}),
        [api("run")],
    )
    code, outcome, took, cpu = _call(skill, tmp_path / "state", "run", "--timeout", "1")
    assert code == 1
    _held_one_second(outcome, took, cpu)
    result = outcome["result"]
    assert isinstance(result, dict) and result["content"][0]["text"] == "run did not finish within 1 s and was stopped."


# Loops of host calls: each call is cheap in instructions, so only the host can stop them in time.
HOST_LOOPS = {
    "setStorageSync-big": "const big = 'x'.repeat(900000); for (;;) { try { wx.setStorageSync('k', big) } catch (e) {} }",
    "getStorageSync": "for (;;) { wx.getStorageSync('k') }",
    "getStorageInfoSync": "for (;;) { try { wx.getStorageInfoSync() } catch (e) {} }",
    "setStorage-await": "const big = 'y'.repeat(500000); for (;;) { try { await wx.setStorage({ key: 'k', data: big }) } catch (e) {} }",
    "console-big": "const big = 'z'.repeat(60000); for (;;) { console.log(big, big, big) }",
    "session-id": "for (;;) { wx.modelContext.getSessionId() }",
}


@pytest.mark.parametrize("loop", list(HOST_LOOPS.values()), ids=list(HOST_LOOPS))
def test_a_loop_of_host_calls_ends_at_the_deadline(tmp_path: Path, loop: str) -> None:
    skill = write_skill(tmp_path, "loop", _index({"run": loop}), [api("run")])
    code, outcome, took, cpu = _call(skill, tmp_path / "state", "run", "--timeout", "1")
    assert code == 1
    result = outcome["result"]
    assert isinstance(result, dict) and result["content"][0]["text"] == "run did not finish within 1 s and was stopped."
    _held_one_second(outcome, took, cpu)  # unbounded, these loops ran 7-47 s


def test_the_server_keeps_answering_while_a_host_call_loop_runs(tmp_path: Path) -> None:
    loop = HOST_LOOPS["setStorageSync-big"]
    attacker = write_skill(tmp_path, "loop", _index({"run": loop}), [api("run")])
    with serve(attacker, benign_skill(tmp_path), state=tmp_path / "state", args=("--timeout", "2")) as served:
        from tests.hostile.harness import while_attacking

        attack, probe = while_attacking(served, ("run", {}), ("ping", {}), attack_lasts=True)
        assert probe.text == "pong"
        assert attack.result["isError"] is True and attack.seconds < bound_for(2)
        assert attack.text == "run did not finish within 2 s and was stopped."


# Long strings built with + are ropes inside QuickJS, which the binding cannot read: every text the
# runtime hands to Python must be flattened first.
ROPES = {
    "console": "let s = ''; for (let i = 0; i < 2000; i++) s += 'chunk' + i; console.log(s); "
    "return { content: [{ type: 'text', text: 'logged' }] }",
    "throw": "let s = 'E'; for (let i = 0; i < 2000; i++) s += 'message' + i; throw new Error(s)",
    "throw-string": "let s = 'E'; for (let i = 0; i < 2000; i++) s += 'message' + i; throw s",
    "result": "let s = ''; for (let i = 0; i < 2000; i++) s += 'text' + i; "
    "return { content: [{ type: 'text', text: s.slice(0, 6) }] }",
}


@pytest.mark.parametrize("body", list(ROPES.values()), ids=list(ROPES))
def test_long_concatenated_strings_cross_the_bridge(tmp_path: Path, body: str) -> None:
    skill = write_skill(tmp_path, "rope", _index({"run": body}), [api("run")])
    code, outcome, _, _ = _call(skill, tmp_path / "state", "run")
    result = outcome["result"]
    assert isinstance(result, dict)
    if code == 0:
        assert result["content"][0]["text"] in ("logged", "text0t")
    else:
        assert result["content"][0]["text"].startswith("run threw ")


def test_a_load_error_with_a_long_message_is_reported(tmp_path: Path) -> None:
    index = "let s = 'E'; for (let i = 0; i < 2000; i++) s += 'boom' + i; throw new Error(s)\n"
    skill = write_skill(tmp_path, "rope", index, [api("run")])
    code, outcome, _, _ = _call(skill, tmp_path / "state", "run")
    assert code == 1
    text = outcome["result"]["content"][0]["text"]  # type: ignore[index]
    assert text.startswith("index.js failed to load, so run could not run: Error: Eboom0boom1")
