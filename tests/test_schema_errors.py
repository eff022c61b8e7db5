"""Arguments that break exactly one inputSchema rule: the exact diagnostic, everywhere it is shown.

The message format is skillc/runtime/api/schema.py's ``SchemaProblem``: ``<JSON pointer>: <message>``
("/" for the whole object), after ``invalid arguments for <api>: ``; the result text adds a period.
Multi-violation messages are tested in test_runtime.py and test_server.py; this file makes sure one
violation alone is enough to stop a call, and is worded the same way, without node.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApprovalRequest, AuditOutcome
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import COFFEE, ROOT

# (api, arguments, the one problem): each breaks one rule of the coffee skill's inputSchema.
SINGLE = [
    ("searchDrinks", {"limit": 50}, "/limit: 50 is greater than the maximum of 20"),
    ("searchDrinks", {"limit": 0}, "/limit: 0 is less than the minimum of 1"),
    ("searchDrinks", {"limit": 1.5}, "/limit: 1.5 is not of type 'integer'"),
    ("searchDrinks", {"keyword": 5}, "/keyword: 5 is not of type 'string'"),
    ("searchDrinks", {"category": "juice"}, "/category: 'juice' is not one of ['coffee', 'tea', 'other']"),
    ("confirmOrder", {}, "/: 'drinkId' is a required property"),
    ("confirmOrder", {"drinkId": "d01", "quantity": 10}, "/quantity: 10 is greater than the maximum of 9"),
    ("confirmOrder", {"drinkId": "d01", "size": "huge"}, "/size: 'huge' is not one of ['tall', 'grande', 'venti']"),
    ("payOrder", {"orderId": 7}, "/orderId: 7 is not of type 'string'"),
]
IDS = [f"{api}-{json.dumps(args)}" for api, args, _ in SINGLE]


def message(api: str, problem: str) -> str:
    return f"invalid arguments for {api}: {problem}"


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ApiRuntime]:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    yield rt
    rt.close()


@pytest.mark.parametrize(("api", "args", "problem"), SINGLE, ids=IDS)
def test_one_violation_stops_the_call_with_the_exact_diagnostic(
    runtime: ApiRuntime, api: str, args: dict[str, Any], problem: str
) -> None:
    asked: list[ApprovalRequest] = []
    runtime.approver = lambda request: bool(asked.append(request)) or True
    outcome = runtime.call_blocking(api, args)
    [diag] = outcome.diagnostics
    assert (diag.code, diag.severity, diag.message) == ("RUN010", Severity.ERROR, message(api, problem))
    assert outcome.result.is_error is True
    assert outcome.result.text == message(api, problem) + "."
    assert outcome.result.structured_content is None
    assert outcome.console == []  # neither the middleware nor the handler ran
    assert asked == []  # invalid arguments are refused before anyone is asked to approve them
    if outcome.risk.audited:
        assert outcome.audit is not None and outcome.audit.outcome is AuditOutcome.INVALID
        assert [r.outcome for r in AuditLog.of(runtime.config).records()] == [AuditOutcome.INVALID]
    else:
        assert outcome.audit is None


def test_the_same_call_without_the_violation_runs(runtime: ApiRuntime) -> None:
    """The baseline of the cases above: with the one bad value fixed, each call goes through."""
    runtime.approver = lambda _request: True
    for api, args in [
        ("searchDrinks", {"limit": 20}),
        ("searchDrinks", {"keyword": "latte"}),
        ("searchDrinks", {"category": "tea"}),
        ("confirmOrder", {"drinkId": "d01", "quantity": 9, "size": "venti"}),
    ]:
        outcome = runtime.call_blocking(api, args)
        assert not outcome.result.is_error and outcome.diagnostics == [], (api, args, outcome.result.text)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skillc", "call", str(COFFEE), *args, "--state-dir", str(tmp_path)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_skillc_call_prints_the_single_violation(tmp_path: Path) -> None:
    text = message("searchDrinks", "/limit: 50 is greater than the maximum of 20")
    done = _cli(tmp_path, "searchDrinks", "--args", '{"limit": 50}')
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("searchDrinks: error (risk L0, ")
    assert lines[1:] == [f"  {text}.", f"{COFFEE}: error[RUN010]: {text}"]

    as_json = json.loads(_cli(tmp_path, "searchDrinks", "--args", '{"limit": 50}', "--json").stdout)
    assert as_json["result"] == {"isError": True, "content": [{"type": "text", "text": text + "."}]}
    assert as_json["diagnostics"] == [{"code": "RUN010", "severity": "error", "message": text}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("s")))
    with ServeHandle.start(options) as handle:
        yield handle


@pytest.mark.parametrize(("api", "args", "problem"), SINGLE[:6], ids=IDS[:6])
def test_an_mcp_tool_call_gets_the_single_violation(
    server: ServeHandle, api: str, args: dict[str, Any], problem: str
) -> None:
    async def call() -> Any:
        async with Client(server.url, mode="legacy") as client:
            return await client.call_tool(api, args)

    result = asyncio.run(call())
    assert result.is_error is True
    assert [(b.type, b.text) for b in result.content] == [("text", message(api, problem) + ".")]
    assert result.structured_content is None
