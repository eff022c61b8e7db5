"""The stand-ins for WeChat-only APIs (skillc/runtime/host/standins.py): wx.requestPayment answered
by a payment provider, wx.getPhoneNumber / chooseAddress / getLocation / getFuzzyLocation answered
from the user profile (--profile), each only with the call's consent at its level, each use in
the audit log, in WeChat's callback and promise forms.

Fixture: tests/fixtures/stand-ins/locker-skill. Its helper apis/both.js calls a wx API with
success / fail / complete callbacks, then as a promise, and reports what each form saw, so every
answer below is the QuickJS side's own view of the call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp_types import ElicitResult

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime, api_risk
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import AuditOutcome, RiskLevel
from skillc.runtime.host.profile import load_profile
from skillc.runtime.host.unavailable import BY_NAME, stubs, unavailable_uses
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import COFFEE, FIXTURES

HERE = FIXTURES / "stand-ins"
SKILL = HERE / "locker-skill"
PROFILE = HERE / "profile.json"

OK_PAY = '{"errMsg":"requestPayment:ok"}'
PHONE = '{"phoneNumber":"13800138000","purePhoneNumber":"13800138000","countryCode":"86","errMsg":"getPhoneNumber:ok"}'
# The profile's default address (the second one), in WeChat's keys.
ADDRESS = (
    '{"userName":"林小满","telNumber":"13800138000","provinceName":"浙江省","cityName":"杭州市",'
    '"countyName":"西湖区","streetName":"北山街道","detailInfo":"北山街 12 号","postalCode":"310007",'
    '"nationalCode":"330106","detailInfoNew":"北山街 12 号","errMsg":"chooseAddress:ok"}'
)


def both(answer: str, errmsg: str, *, ok: bool = True) -> list[str]:
    """What apis/both.js reports for one answer, seen by the callbacks and then the promise."""
    if ok:
        return [f"success {answer}", f"complete {errmsg}", f"then {answer}"]
    return [f"fail {answer}", f"complete {errmsg}", f"catch {answer}"]


def failed(errmsg: str) -> list[str]:
    return both(json.dumps({"errMsg": errmsg}, ensure_ascii=False, separators=(",", ":")), errmsg, ok=False)


def call(state: Path, api: str, *options: str, args: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    """``skillc call SKILL API --format json``: the exit code and the whole outcome."""
    argv = ["call", str(SKILL), api, "--state-dir", str(state), "--format", "json", *options]
    if args is not None:
        argv += ["--args", json.dumps(args)]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def seen(outcome: dict[str, Any]) -> list[str]:
    return list(outcome["result"]["structuredContent"]["seen"])


def diags(outcome: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(d["code"], d["message"], d.get("hint")) for d in outcome["diagnostics"]]


def stand_in_audit(outcome: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    return [(a["wxApi"], a["risk"], a["outcome"], a.get("detail")) for a in outcome.get("standInAudit") or []]


def audit_log(state: Path) -> list[tuple[str, str | None, RiskLevel, AuditOutcome]]:
    """The audit log as written, read back from the state database."""
    return [(r.api_name, r.wx_api, r.risk, r.outcome) for r in AuditLog.of(RuntimeConfig(state_dir=state)).records()]


# -- wx.requestPayment ----------------------------------------------------------------------------


def test_a_consented_payment_succeeds_in_both_forms_and_is_audited(tmp_path: Path) -> None:
    code, outcome = call(tmp_path, "payDeposit", "--approve")
    assert code == 0
    assert outcome["result"]["structuredContent"] == {
        "returned": "undefined",
        "seen": both(OK_PAY, "requestPayment:ok"),
    }
    paid = ("wx.requestPayment", "L3", "ok", "paid through the test payment provider")
    assert stand_in_audit(outcome) == [paid, paid]
    assert diags(outcome) == []
    # Each payment is written when it is made, then the call's own record.
    assert audit_log(tmp_path) == [
        ("payDeposit", "wx.requestPayment", RiskLevel.L3, AuditOutcome.OK),
        ("payDeposit", "wx.requestPayment", RiskLevel.L3, AuditOutcome.OK),
        ("payDeposit", None, RiskLevel.L3, AuditOutcome.OK),
    ]


@pytest.mark.parametrize(
    ("payment", "errmsg", "why", "audited"),
    [
        (
            "fail",
            "requestPayment:fail payment declined (scripted)",
            "wx.requestPayment did not succeed: the test payment provider answered fail: payment declined (scripted)",
            AuditOutcome.ERROR,
        ),
        (
            "cancel",
            "requestPayment:fail cancel",
            "wx.requestPayment did not succeed: the test payment provider answered cancel: "
            "the user cancelled (scripted)",
            AuditOutcome.REFUSED,
        ),
    ],
)
def test_the_provider_can_fail_or_cancel_a_payment(
    tmp_path: Path, payment: str, errmsg: str, why: str, audited: AuditOutcome
) -> None:
    code, outcome = call(tmp_path, "payDeposit", "--approve", "--payment", payment)
    assert code == 0  # the skill handled the failure: its result is not an error
    assert seen(outcome) == failed(errmsg)
    assert diags(outcome) == [("RUN103", f"{why}; it failed with {errmsg}", None)]
    assert stand_in_audit(outcome) == [("wx.requestPayment", "L3", audited.value, why)] * 2
    assert [row[3] for row in audit_log(tmp_path)] == [audited, audited, AuditOutcome.OK]


def test_payment_options_are_checked_against_wechat_s_parameters(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "payUnsigned", "--approve")
    assert seen(outcome) == failed("requestPayment:fail parameter error: paySign: Field required")
    assert "standInAudit" not in outcome  # nothing was paid or refused: the options never reached the host


def test_an_unapproved_payment_api_never_runs(tmp_path: Path) -> None:
    code, outcome = call(tmp_path, "payDeposit")
    assert code == 1
    assert [d[0] for d in diags(outcome)] == ["RUN019"]
    assert audit_log(tmp_path) == [("payDeposit", None, RiskLevel.L3, AuditOutcome.REFUSED)]


def test_a_payment_without_consent_at_l3_fails_as_a_cancel(tmp_path: Path) -> None:
    # quickPay pins its risk at L2: nobody is asked, so the payment has no consent.
    code, outcome = call(tmp_path, "quickPay", "--approve")
    assert code == 0
    assert seen(outcome) == failed("requestPayment:fail cancel")
    why = "wx.requestPayment needs the user's consent at L3, and quickPay ran without the user's consent"
    hint = 'pin quickPay at L3 ("_meta": {"x_skillc": {"risk": "L3"}}) so the user is asked'
    assert diags(outcome) == [("RUN100", f"{why}; it failed with requestPayment:fail cancel", hint)]
    assert audit_log(tmp_path) == [
        ("quickPay", "wx.requestPayment", RiskLevel.L3, AuditOutcome.REFUSED),
        ("quickPay", "wx.requestPayment", RiskLevel.L3, AuditOutcome.REFUSED),
        ("quickPay", None, RiskLevel.L2, AuditOutcome.OK),
    ]


def test_a_guard_process_cannot_reach_the_payment_provider(tmp_path: Path) -> None:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path, deadline_mode="process"), approver=lambda _r: True)
    try:
        outcome = runtime.call_blocking("payDeposit", {})
    finally:
        runtime.close()
    assert outcome.result.structured_content == {
        "returned": "undefined",
        "seen": failed("requestPayment:fail no payment provider"),
    }
    why = "wx.requestPayment did not succeed: no payment provider is reachable (the call ran in a guard process)"
    assert [(d.code, d.message) for d in outcome.diagnostics] == [
        ("RUN103", f"{why}; it failed with requestPayment:fail no payment provider")
    ]
    # The guard process wrote the records itself.
    assert audit_log(tmp_path)[:2] == [("payDeposit", "wx.requestPayment", RiskLevel.L3, AuditOutcome.ERROR)] * 2


def test_a_caller_cannot_claim_consent_the_chain_did_not_give(tmp_path: Path) -> None:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    try:
        claimed = runtime.context("quickPay").model_copy(update={"consent": RiskLevel.L4})
        outcome = runtime.call_blocking("quickPay", {}, claimed)
    finally:
        runtime.close()
    assert outcome.result.structured_content == {"returned": "undefined", "seen": failed("requestPayment:fail cancel")}
    assert [d.code for d in outcome.diagnostics] == ["RUN100"]


# -- the profile stand-ins ----------------------------------------------------------------------


def test_get_phone_number_answers_from_the_profile(tmp_path: Path) -> None:
    code, outcome = call(tmp_path, "myPhone", "--approve", "--profile", str(PROFILE))
    assert code == 0
    assert seen(outcome) == both(PHONE, "getPhoneNumber:ok")
    assert stand_in_audit(outcome) == [("wx.getPhoneNumber", "L4", "ok", None)] * 2
    assert audit_log(tmp_path)[-1] == ("myPhone", None, RiskLevel.L4, AuditOutcome.OK)


def test_a_foreign_number_carries_its_country_code(tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text('{"phone": {"purePhoneNumber": "2025550143", "countryCode": "1"}}', "utf-8")
    _code, outcome = call(tmp_path, "myPhone", "--approve", "--profile", str(profile))
    answer = (
        '{"phoneNumber":"+12025550143","purePhoneNumber":"2025550143","countryCode":"1","errMsg":"getPhoneNumber:ok"}'
    )
    assert seen(outcome) == both(answer, "getPhoneNumber:ok")


def test_choose_address_picks_the_default_address(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "shipTo", "--approve", "--profile", str(PROFILE))
    assert seen(outcome) == both(ADDRESS, "chooseAddress:ok")
    assert stand_in_audit(outcome) == [("wx.chooseAddress", "L4", "ok", None)] * 2


@pytest.mark.parametrize(
    ("kind", "latitude", "longitude"),
    [
        ("wgs84", 39.915, 116.404),
        # GCJ-02, the published test point of the conversion every open implementation shares.
        ("gcj02", 39.91640428150164, 116.41024449916938),
    ],
)
def test_get_location_answers_in_the_coordinates_asked_for(
    tmp_path: Path, kind: str, latitude: float, longitude: float
) -> None:
    _code, outcome = call(tmp_path, "whereAmI", "--approve", "--profile", str(PROFILE), args={"type": kind})
    answer = {
        "latitude": latitude,
        "longitude": longitude,
        "speed": 0,
        "accuracy": 30,
        "altitude": 44.5,
        "verticalAccuracy": 0,
        "horizontalAccuracy": 65,
        "errMsg": "getLocation:ok",
    }
    assert seen(outcome) == both(json.dumps(answer, separators=(",", ":")), "getLocation:ok")
    assert stand_in_audit(outcome) == [("wx.getLocation", "L4", "ok", None)] * 2


def test_a_bad_location_type_is_a_parameter_error(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "whereAmI", "--approve", "--profile", str(PROFILE), args={"type": "bd09"})
    assert seen(outcome) == failed("getLocation:fail parameter error: type: Input should be 'wgs84' or 'gcj02'")


def test_get_fuzzy_location_rounds_to_two_decimals(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "nearbyArea", "--approve", "--profile", str(PROFILE))
    answer = '{"latitude":39.91,"longitude":116.4,"errMsg":"getFuzzyLocation:ok"}'
    assert seen(outcome) == both(answer, "getFuzzyLocation:ok")
    assert stand_in_audit(outcome) == [("wx.getFuzzyLocation", "L4", "ok", None)] * 2


def test_profile_stand_ins_without_consent_at_l4_fail_the_wechat_way(tmp_path: Path) -> None:
    # peekLocation pins L1 (never asked); reservePhone pins L3 (asked, but below the L4 a phone needs).
    _code, peek = call(tmp_path, "peekLocation", "--approve", "--profile", str(PROFILE))
    assert seen(peek) == failed("getLocation:fail auth deny")
    why = "wx.getLocation needs the user's consent at L4, and peekLocation ran without the user's consent"
    hint = 'pin peekLocation at L4 ("_meta": {"x_skillc": {"risk": "L4"}}) so the user is asked'
    assert diags(peek) == [("RUN100", f"{why}; it failed with getLocation:fail auth deny", hint)]
    _code, reserve = call(tmp_path, "reservePhone", "--approve", "--profile", str(PROFILE))
    assert seen(reserve) == failed("getPhoneNumber:fail user deny")
    why = "wx.getPhoneNumber needs the user's consent at L4, and reservePhone was approved at L3 only"
    hint = 'pin reservePhone at L4 ("_meta": {"x_skillc": {"risk": "L4"}}) so the user is asked'
    assert diags(reserve) == [("RUN100", f"{why}; it failed with getPhoneNumber:fail user deny", hint)]
    assert [(r[0], r[1], r[3]) for r in audit_log(tmp_path) if r[1] is not None] == [
        ("peekLocation", "wx.getLocation", AuditOutcome.REFUSED),
        ("peekLocation", "wx.getLocation", AuditOutcome.REFUSED),
        ("reservePhone", "wx.getPhoneNumber", AuditOutcome.REFUSED),
        ("reservePhone", "wx.getPhoneNumber", AuditOutcome.REFUSED),
    ]


def test_without_a_profile_they_fail_and_say_why(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "myPhone", "--approve")
    assert seen(outcome) == failed("getPhoneNumber:fail no user profile")
    why = (
        "wx.getPhoneNumber answers from the user profile the host supplies, and there is none (no phone number "
        "to give); it failed with getPhoneNumber:fail no user profile"
    )
    hint = "pass --profile FILE (a JSON with phone, addresses, location; docs/runtime.md)"
    assert diags(outcome) == [("RUN101", why, hint)]
    assert stand_in_audit(outcome)[0][:3] == ("wx.getPhoneNumber", "L4", "error")


def test_a_profile_without_the_field_asked_for(tmp_path: Path) -> None:
    profile = tmp_path / "phone-only.json"
    profile.write_text('{"phone": {"purePhoneNumber": "13800138000"}}', "utf-8")
    _code, outcome = call(tmp_path, "shipTo", "--approve", "--profile", str(profile))
    assert seen(outcome) == failed("chooseAddress:fail the user profile has no address")
    why = (
        "wx.chooseAddress answers from the user profile, which has no addresses; "
        "it failed with chooseAddress:fail the user profile has no address"
    )
    assert diags(outcome) == [("RUN101", why, 'add "addresses" to the --profile file')]


def test_can_i_use_says_yes_to_the_stand_ins(tmp_path: Path) -> None:
    _code, outcome = call(tmp_path, "canI")
    assert seen(outcome) == [
        "requestPayment true",
        "getPhoneNumber true",
        "chooseAddress true",
        "getLocation true",
        "getFuzzyLocation true",
        "getRealtimePhoneNumber false",
    ]


# -- the profile file -------------------------------------------------------------------------------


def test_a_malformed_profile_is_a_usage_error_with_each_problem_located() -> None:
    bad = str(HERE / "bad-profile.json")
    result = CliRunner().invoke(main, ["call", str(SKILL), "myPhone", "--approve", "--profile", bad])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert lines == [
        f"{bad}:2:33: error[RUN102]: user profile /phone/purePhoneNumber: "
        "String should match pattern '^[0-9]{5,15}$'",
        f"{bad}:3:17: error[RUN102]: user profile /addresses/0/telNumber: missing key 'telNumber'",
        f"{bad}:4:3: error[RUN102]: user profile /locaton: unknown key 'locaton'",
        f"skillc: error: {bad} is not a usable user profile",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{ "location": { "latitude": 91, "longitude": 116.404 } }',
            ("RUN102", 1, 29, "user profile /location/latitude: Input should be less than or equal to 90"),
        ),
        (
            '["phone"]',
            ("RUN102", 1, 1, "user profile /: expected an object with description, phone, addresses, location"),
        ),
        ('{"phone": ', ("JSON001", 1, 11, "unexpected end of file, expected a value")),
    ],
)
def test_profile_problems_are_located(text: str, expected: tuple[str, int, int, str]) -> None:
    profile, problems = load_profile(text, "p.json")
    assert profile is None
    assert [(d.code, d.span.line, d.span.column, d.message) for d in problems if d.span] == [expected]


def test_an_unreadable_profile_file_says_so(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.json")
    result = CliRunner().invoke(main, ["call", str(SKILL), "myPhone", "--profile", missing])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{missing}: error[RUN102]: cannot read the user profile: No such file or directory",
        f"skillc: error: {missing} is not a usable user profile",
    ]


def test_serve_refuses_a_malformed_profile_before_it_serves() -> None:
    bad = str(HERE / "out-of-range-profile.json")
    # --stdio with nothing on stdin: a server that started anyway would end at once, not hang the test.
    result = CliRunner().invoke(main, ["serve", str(SKILL), "--stdio", "--profile", bad], input="")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"{bad}:1:29: error[RUN102]: user profile /location/latitude: Input should be less than or equal to 90"
    )


# -- where they are offered; risk inference ------------------------------------------------------------


def test_cards_get_stubs_that_say_the_stand_ins_belong_to_apis() -> None:
    assert BY_NAME["requestPayment"].message("card") == (
        "wx.requestPayment is not available in cards (skillc offers it to APIs only, behind the user's consent)"
    )
    assert BY_NAME["getLocation"].message("card") == (
        "wx.getLocation is not available in cards (WeChat offers it to APIs only)"
    )
    stand_ins = {"requestPayment", "getPhoneNumber", "chooseAddress", "getLocation", "getFuzzyLocation"}
    assert stand_ins.isdisjoint(".".join(s.path) for s in stubs("api"))
    assert stand_ins <= {".".join(s.path) for s in stubs("card")}
    text = "wx.requestPayment({})\nwx.chooseAddress({})\n"
    assert unavailable_uses("apis/a.js", text, card=False) == []
    assert [(d.code, d.span.line if d.span else None) for d in unavailable_uses("c/index.js", text, card=True)] == [
        ("JS008", 1),
        ("JS008", 2),
    ]


def test_code_that_reads_the_user_s_profile_is_inferred_l4() -> None:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None and pkg.manifest is not None
    levels = {a.name: api_risk(a, RuntimeConfig(), pkg)[0].value for a in pkg.manifest.apis}
    assert levels == {
        "payDeposit": "L3",
        "payUnsigned": "L3",
        "myPhone": "L4",
        "shipTo": "L4",
        "whereAmI": "L4",
        "nearbyArea": "L4",
        "peekLocation": "L1",
        "quickPay": "L2",
        "reservePhone": "L3",
        "canI": "L0",
    }


# -- skillc run -------------------------------------------------------------------------------------


def run_flow(tmp_path: Path, skill: Path, steps: list[dict[str, Any]], *options: str) -> tuple[int, list[Any]]:
    script = tmp_path / "flow.json"
    script.write_text(json.dumps({"steps": steps}), "utf-8")
    state = tmp_path / "state"
    argv = ["run", str(skill), "--script", str(script), "--state-dir", str(state), "--json", *options]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def step_seen(step: dict[str, Any]) -> list[str]:
    return list(step["api"][0]["result"]["structuredContent"]["seen"])


def test_a_flow_scripts_the_payment_outcome_per_step(tmp_path: Path) -> None:
    code, steps = run_flow(
        tmp_path,
        SKILL,
        [
            {"call": "payDeposit", "approve": True, "payment": "cancel"},
            {"call": "payDeposit", "approve": True},
            {"call": "payDeposit", "approve": True, "payment": "fail"},
            {"call": "payDeposit", "approve": False, "payment": "success"},
        ],
    )
    assert code == 1  # the last step is refused (RUN019, an error)
    assert step_seen(steps[0]) == failed("requestPayment:fail cancel")
    assert step_seen(steps[1]) == both(OK_PAY, "requestPayment:ok")  # back to the default
    assert step_seen(steps[2]) == failed("requestPayment:fail payment declined (scripted)")
    assert [d["code"] for d in steps[3]["diagnostics"]] == ["RUN019", "RUN104"]
    assert steps[3]["diagnostics"][1]["message"] == (
        'payment: "success" was not applied: no wx.requestPayment ran during this step'
    )
    assert [s["failed"] for s in steps] == [False, False, False, True]


def test_a_flow_reads_the_profile_with_consent_only(tmp_path: Path) -> None:
    code, steps = run_flow(
        tmp_path,
        SKILL,
        [
            {"call": "myPhone", "approve": True},
            {"call": "shipTo", "approve": True},
            {"call": "whereAmI", "approve": True},
            {"call": "nearbyArea", "approve": True, "arguments": {"type": "gcj02"}},
            {"call": "peekLocation"},
            {"call": "myPhone"},
        ],
        "--profile",
        str(PROFILE),
    )
    assert code == 1
    assert step_seen(steps[0]) == both(PHONE, "getPhoneNumber:ok")
    assert step_seen(steps[1]) == both(ADDRESS, "chooseAddress:ok")
    assert step_seen(steps[2])[-1].startswith('then {"latitude":39.915,"longitude":116.404,')
    fuzzy = '{"latitude":39.92,"longitude":116.41,"errMsg":"getFuzzyLocation:ok"}'  # GCJ-02, rounded
    assert step_seen(steps[3]) == both(fuzzy, "getFuzzyLocation:ok")
    assert step_seen(steps[4]) == failed("getLocation:fail auth deny")
    assert [d["code"] for d in steps[4]["diagnostics"]] == ["RUN100"]
    assert steps[5]["api"][0]["result"]["content"][0]["text"] == (
        "myPhone needs the user's approval (risk L4) and was not approved; ask the user to confirm, then call it again."
    )
    audited = [(r[0], r[1], r[3]) for r in audit_log(tmp_path / "state")]
    assert audited[-3:] == [
        ("peekLocation", "wx.getLocation", AuditOutcome.REFUSED),
        ("peekLocation", "wx.getLocation", AuditOutcome.REFUSED),
        ("myPhone", None, AuditOutcome.REFUSED),
    ]


def test_a_bad_payment_outcome_in_a_flow_is_located(tmp_path: Path) -> None:
    script = tmp_path / "flow.json"
    script.write_text('{"steps": [\n  {"call": "payDeposit", "payment": "refund"}\n]}\n', "utf-8")
    result = CliRunner().invoke(main, ["run", str(SKILL), "--script", str(script)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"{script}:2:37: error[RUN043]: flow script /steps/0/payment: call step: "
        "Input should be 'success', 'fail' or 'cancel'"
    )


def test_the_coffee_order_whose_payment_fails(tmp_path: Path) -> None:
    flow = COFFEE / "flows" / "order-payment-fails.json"
    state = tmp_path / "state"
    result = CliRunner().invoke(main, ["run", str(COFFEE), "--script", str(flow), "--state-dir", str(state), "--json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)
    pay = steps[-1]
    api = pay["api"][0]
    assert (api["apiName"], api["approved"], api["result"]["isError"]) == ("payOrder", True, False)
    assert api["result"]["structuredContent"] == {
        "status": "failed",
        "orderId": "MB000001",
        "paidAmount": 0,
        "reason": "支付失败：payment declined (scripted)",
    }
    assert pay["cards"][0]["data"]["status"] == "failed"
    assert [d["code"] for d in pay["diagnostics"]] == ["RUN103"]
    assert [(r[0], r[1], r[3]) for r in audit_log(state)][-2:] == [
        ("payOrder", "wx.requestPayment", AuditOutcome.ERROR),
        ("payOrder", None, AuditOutcome.OK),
    ]


# -- skillc serve ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeHandle, RuntimeConfig]]:
    state = tmp_path_factory.mktemp("stand-ins-state")
    profile, problems = load_profile(PROFILE.read_text("utf-8"), str(PROFILE))
    assert problems == []
    config = RuntimeConfig(state_dir=state, profile=profile)
    with ServeHandle.start(ServeOptions(paths=(SKILL,), port=0, runtime=config)) as handle:
        yield handle, config  # the server's store: a test's own RuntimeConfig may name another


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_serve_asks_by_elicitation_before_a_profile_stand_in_answers(
    server: tuple[ServeHandle, RuntimeConfig], action: Literal["accept", "decline"]
) -> None:
    handle, config = server
    asked: list[str] = []

    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message.splitlines()[0])
        return ElicitResult(action=action, content={"approve": True} if action == "accept" else None)

    async def session() -> Any:
        async with Client(handle.url, elicitation_callback=answer) as client:
            return await client.call_tool("myPhone", {})

    before = len(AuditLog.of(config).records())
    result = asyncio.run(session())
    assert asked == ["myPhone (risk L4) needs your consent."]
    log = AuditLog.of(config)
    written = [(r.api_name, r.wx_api, r.outcome) for r in log.records()[before:]]
    if action == "accept":
        assert result.structured_content["seen"] == both(PHONE, "getPhoneNumber:ok")
        assert written == [
            ("myPhone", "wx.getPhoneNumber", AuditOutcome.OK),
            ("myPhone", "wx.getPhoneNumber", AuditOutcome.OK),
            ("myPhone", None, AuditOutcome.OK),
        ]
    else:
        assert result.is_error is True
        assert written == [("myPhone", None, AuditOutcome.REFUSED)]
