"""Consent cannot be stretched: an answer approves one call (no replay, no expiry overrun, no
forgery), and ``--approve`` names one tool, never a same-named API of another skill."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_types import ElicitResult

from skillc.frontend.manifest import ApiSpec
from skillc.runtime.contracts import RiskLevel
from skillc.server.consent import CONSENT_KEY, ConsentPolicy
from skillc.server.tools import ServedApi
from tests.hostile.harness import api, write_skill

YES = {CONSENT_KEY: ElicitResult(action="accept", content={"approve": True})}


def _api(skill: str, name: str, tool: str | None = None) -> ServedApi:
    spec = ApiSpec.model_validate({"name": name, "description": "d", "inputSchema": {"type": "object"}})
    return ServedApi(tool or name, skill, spec, RiskLevel.L3, False, None)


def _state(policy: ConsentPolicy, api: ServedApi, args: dict[str, Any]) -> str:
    state = policy.ask(api, args).request_state
    assert state is not None
    return state


def test_a_consent_approves_one_call_only() -> None:
    policy, api = ConsentPolicy(), _api("lab", "secret")
    state = _state(policy, api, {"n": 1})
    assert policy.answer(api, {"n": 1}, YES, state) is True
    assert policy.answer(api, {"n": 1}, YES, state) is False  # replayed
    assert policy.answer(api, {"n": 1}, YES, _state(policy, api, {"n": 1})) is True  # a new question, a new answer


def test_a_consent_for_other_arguments_or_another_tool_approves_nothing_and_is_not_spent() -> None:
    policy, api, other = ConsentPolicy(), _api("lab", "secret"), _api("lab", "other")
    state = _state(policy, api, {"n": 1})
    assert policy.answer(api, {"n": 2}, YES, state) is False
    assert policy.answer(other, {"n": 1}, YES, state) is False
    assert policy.answer(api, {"n": 1}, YES, state) is True  # the real call still gets its answer


def test_an_expired_consent_is_refused() -> None:
    now = [time.time()]
    policy, api = ConsentPolicy(clock=lambda: now[0]), _api("lab", "secret")
    state = _state(policy, api, {"n": 1})
    now[0] += 601
    assert policy.answer(api, {"n": 1}, YES, state) is False


@pytest.mark.parametrize(
    "forged",
    [
        "0" * 64,
        "",
        "nonce.99999999999999.mac",
        "a.b.c",
        "x" * 10_000,
    ],
)
def test_a_forged_state_is_refused(forged: str) -> None:
    policy, api = ConsentPolicy(), _api("lab", "secret")
    assert policy.answer(api, {"n": 1}, YES, forged) is False


def test_a_state_with_a_later_expiry_spliced_in_is_refused() -> None:
    policy, api = ConsentPolicy(), _api("lab", "secret")
    body, mac = _state(policy, api, {"n": 1}).split(".")
    sealed = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    sealed["expires"] += 10**9
    spliced = base64.urlsafe_b64encode(json.dumps(sealed).encode()).decode().rstrip("=")
    assert policy.answer(api, {"n": 1}, YES, f"{spliced}.{mac}") is False


def test_approve_names_one_tool_not_every_skill_with_that_api() -> None:
    # Two skills declare `secret`: the server names them a__secret and b__secret.
    a, b = _api("a", "secret", "a__secret"), _api("b", "secret", "b__secret")
    assert not ConsentPolicy(approve=frozenset({"secret"})).allows(a)
    assert not ConsentPolicy(approve=frozenset({"secret"})).allows(b)
    assert ConsentPolicy(approve=frozenset({"a/secret"})).allows(a)
    assert not ConsentPolicy(approve=frozenset({"a/secret"})).allows(b)
    assert ConsentPolicy(approve=frozenset({"b__secret"})).allows(b)
    assert not ConsentPolicy(approve=frozenset({"b__secret"})).allows(a)
    assert ConsentPolicy(approve=frozenset({"secret", "a/secret", "nope"})).unknown([a, b]) == ["nope", "secret"]


def test_a_unique_api_is_approved_by_its_plain_name() -> None:
    pay = _api("coffee-skill", "payOrder")
    assert ConsentPolicy(approve=frozenset({"payOrder"})).allows(pay)
    assert ConsentPolicy(approve=frozenset({"coffee-skill/payOrder"})).allows(pay)
    assert ConsentPolicy(approve=frozenset({"payOrder"})).unknown([pay]) == []


def test_serve_refuses_an_approve_name_that_matches_no_tool(tmp_path: Path) -> None:
    index = "const s = wx.modelContext.createSkill('x')\ns.registerAPI('secret', async () => ({ content: [] }))\n"
    a = write_skill(tmp_path, "a", index, [api("secret")])
    b = write_skill(tmp_path, "b", index, [api("secret")])
    cmd = [sys.executable, "-m", "skillc", "serve", str(a), str(b), "--port", "0", "--approve", "secret"]
    proc = subprocess.run([*cmd, "--state-dir", str(tmp_path / "state")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-3:] == [
        "skillc: error: --approve secret: no served tool has that name (use a tool name from the list below, "
        "or SKILL/API)",
        "  a__secret  (a/secret)",
        "  b__secret  (b/secret)",
    ]
