"""A skill's storage and cards belong to its folder: a copy under the same name elsewhere, sharing
the state directory, starts empty and cannot read the original's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hostile.harness import api, write_skill

INDEX = """\
const skill = wx.modelContext.createSkill('vault')
skill.registerAPI('put', async (args) => { wx.setStorageSync('secret', args.v); return { content: [{ type: 'text', text: 'stored' }] } })
skill.registerAPI('get', async () => ({ content: [{ type: 'text', text: 'got:' + JSON.stringify(wx.getStorageSync('secret')) }] }))
"""


def _call(skill: Path, state: Path, name: str, args: dict[str, object] | None = None) -> str:
    cmd = [sys.executable, "-m", "skillc", "call", str(skill), name, "--json", "--state-dir", str(state)]
    proc = subprocess.run([*cmd, "--args", json.dumps(args or {})], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text: str = json.loads(proc.stdout)["result"]["content"][0]["text"]
    return text


def test_a_copy_of_a_skill_cannot_read_the_originals_storage(tmp_path: Path) -> None:
    state = tmp_path / "state"
    original = write_skill(tmp_path / "a", "vault", INDEX, [api("put"), api("get")])
    copy = write_skill(tmp_path / "b", "vault", INDEX, [api("put"), api("get")])
    assert _call(original, state, "put", {"v": "s3cret"}) == "stored"
    assert _call(original, state, "get") == 'got:"s3cret"'
    assert _call(copy, state, "get") == 'got:""'  # same name, same state directory, another folder
    assert _call(copy, state, "put", {"v": "mine"}) == "stored"
    assert _call(original, state, "get") == 'got:"s3cret"'


def test_the_same_folder_by_another_path_is_the_same_skill(tmp_path: Path) -> None:
    state = tmp_path / "state"
    skill = write_skill(tmp_path, "vault", INDEX, [api("put"), api("get")])
    assert _call(skill, state, "put", {"v": 1}) == "stored"
    assert _call(tmp_path / "." / "vault" / ".." / "vault", state, "get") == "got:1"
