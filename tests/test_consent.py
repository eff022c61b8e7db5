"""Consent for L3/L4 APIs: only an answer that is exactly ``True`` approves a call.

An approval UI that answers "yes", 1 or ``{"approved": true}`` is a bug in that UI, and a bug
must never turn into a payment. Each refused call is also checked not to have run: the coffee
skill numbers its orders, so the first approved call after any refusals gets order MB000001.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime, Approver
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallOutcome, ApprovalRequest, AuditOutcome, RiskLevel

from .conftest import COFFEE

ORDER = {"drinkId": "d01"}
REFUSED_TEXT = (
    "confirmOrder needs the user's approval (risk L3) and was not approved; "
    "ask the user to confirm, then call it again."
)

# Truthy in Python or JavaScript, and none of them is True. 1 and 1.0 even compare equal to True.
TRUTHY_NOT_TRUE: list[Any] = ["yes", "true", 1, 1.0, {"approved": True}, [True], ["yes"]]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ApiRuntime]:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    yield rt
    rt.close()


def assert_refused(rt: ApiRuntime, outcome: ApiCallOutcome) -> None:
    assert outcome.risk is RiskLevel.L3
    assert outcome.approved is False
    assert outcome.result.is_error
    assert outcome.result.text == REFUSED_TEXT
    assert outcome.result.structured_content is None
    assert [d.code for d in outcome.diagnostics] == ["RUN019"]
    assert outcome.audit is not None and outcome.audit.outcome is AuditOutcome.REFUSED


def assert_approved_and_ran(outcome: ApiCallOutcome, order_id: str = "MB000001") -> None:
    assert outcome.approved is True
    assert not outcome.result.is_error, outcome.result.text
    assert outcome.diagnostics == []
    assert outcome.audit is not None and outcome.audit.outcome is AuditOutcome.OK
    assert outcome.result.structured_content is not None
    assert outcome.result.structured_content["order"]["orderId"] == order_id


def answering(value: Any) -> Approver:
    return lambda _request: value


@pytest.mark.parametrize("answer", TRUTHY_NOT_TRUE, ids=repr)
def test_a_truthy_answer_that_is_not_true_is_refused(runtime: ApiRuntime, answer: Any) -> None:
    assert bool(answer)  # the point of the case
    runtime.approver = answering(answer)
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))
    # The refused call did not run: the first call that is approved gets the first order number.
    runtime.approver = answering(True)
    assert_approved_and_ran(runtime.call_blocking("confirmOrder", ORDER))


@pytest.mark.parametrize("answer", TRUTHY_NOT_TRUE, ids=repr)
def test_a_truthy_answer_is_refused_on_the_async_path_and_per_call(runtime: ApiRuntime, answer: Any) -> None:
    async def calls() -> tuple[ApiCallOutcome, ApiCallOutcome]:
        per_call = await runtime.call("confirmOrder", ORDER, approver=answering(answer))
        runtime.approver = answering(answer)
        own = await runtime.call("confirmOrder", ORDER)
        return per_call, own

    for outcome in asyncio.run(calls()):
        assert_refused(runtime, outcome)
    assert_approved_and_ran(asyncio.run(runtime.call("confirmOrder", ORDER, approver=answering(True))))


@pytest.mark.parametrize("answer", [False, None, 0, "", [], {}, "no"], ids=repr)
def test_a_falsy_answer_is_refused(runtime: ApiRuntime, answer: Any) -> None:
    runtime.approver = answering(answer)
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))


def test_true_is_approved_and_the_call_runs(runtime: ApiRuntime) -> None:
    seen: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    runtime.approver = approve
    assert_approved_and_ran(runtime.call_blocking("confirmOrder", ORDER))
    assert_approved_and_ran(runtime.call_blocking("confirmOrder", ORDER), "MB000002")
    [first, _] = seen
    assert (first.risk, first.context.api_name, first.context.arguments["drinkId"]) == (
        RiskLevel.L3,
        "confirmOrder",
        "d01",
    )


def test_without_an_approver_an_l3_call_is_refused(runtime: ApiRuntime) -> None:
    assert runtime.approver is None
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))


def test_an_approver_that_raises_is_a_refusal(runtime: ApiRuntime) -> None:
    def broken(_request: ApprovalRequest) -> bool:
        raise RuntimeError("the approval dialog crashed")

    runtime.approver = broken
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))
    assert_refused(runtime, asyncio.run(runtime.call("confirmOrder", ORDER)))
    runtime.approver = answering(True)
    assert_approved_and_ran(runtime.call_blocking("confirmOrder", ORDER))


def test_an_awaitable_approver_is_awaited(runtime: ApiRuntime) -> None:
    async def approve(_request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return True

    runtime.approver = approve
    assert_approved_and_ran(runtime.call_blocking("confirmOrder", ORDER))  # on the runtime's host loop
    assert_approved_and_ran(asyncio.run(runtime.call("confirmOrder", ORDER)), "MB000002")  # on the caller's


@pytest.mark.parametrize("answer", ["yes", 1, {"approved": True}, [True]], ids=repr)
def test_an_awaitable_approver_answering_truthy_is_refused(runtime: ApiRuntime, answer: Any) -> None:
    async def approve(_request: ApprovalRequest) -> Any:
        await asyncio.sleep(0)
        return answer

    runtime.approver = approve
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))
    assert_refused(runtime, asyncio.run(runtime.call("confirmOrder", ORDER)))


def test_an_awaitable_approver_that_raises_is_a_refusal(runtime: ApiRuntime) -> None:
    async def broken(_request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        raise ConnectionError("the approval service is down")

    runtime.approver = broken
    assert_refused(runtime, runtime.call_blocking("confirmOrder", ORDER))
    assert_refused(runtime, asyncio.run(runtime.call("confirmOrder", ORDER)))


def test_every_refusal_is_audited(runtime: ApiRuntime) -> None:
    for answer in ("yes", 1, True):
        runtime.approver = answering(answer)
        runtime.call_blocking("confirmOrder", ORDER)
    outcomes = [(r.api_name, r.risk, r.outcome) for r in AuditLog.of(runtime.config).records()]
    assert outcomes == [
        ("confirmOrder", RiskLevel.L3, AuditOutcome.REFUSED),
        ("confirmOrder", RiskLevel.L3, AuditOutcome.REFUSED),
        ("confirmOrder", RiskLevel.L3, AuditOutcome.OK),
    ]


def test_l0_calls_never_ask(runtime: ApiRuntime) -> None:
    asked: list[ApprovalRequest] = []
    runtime.approver = lambda request: bool(asked.append(request))
    outcome = runtime.call_blocking("searchDrinks", {"keyword": "latte"})
    assert not outcome.result.is_error and outcome.approved is None and asked == []
