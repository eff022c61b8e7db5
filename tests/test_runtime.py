"""The Atomic API VM and its call chain: coffee example, loader, middleware, limits, storage, audit, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api import guard
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.api.cancel import CallGroup, calls_in
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApprovalRequest, AuditOutcome
from skillc.runtime.sandbox.native import self_check

from .conftest import COFFEE, ROOT
from .waiting import PATIENCE_S, bound_for, wait_until


def make_runtime(skill: Path, state: Path, **kw: Any) -> ApiRuntime:
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    approver = kw.pop("approver", None)
    return ApiRuntime(pkg, RuntimeConfig(state_dir=state, **kw), approver=approver)


def write_skill(root: Path, index_js: str, apis: list[dict[str, Any]], files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text("# test\n\nA skill written by a test.\n")
    for api in apis:
        api.setdefault("description", "A test API.")
        api.setdefault("inputSchema", {"type": "object", "properties": {}})
    (root / "mcp.json").write_text(json.dumps({"apis": apis}))
    (root / "index.js").write_text(index_js)
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def coffee(tmp_path: Path) -> Any:
    rt = make_runtime(COFFEE, tmp_path / "state")
    yield rt
    rt.close()


def test_the_deadline_self_check_passes_on_the_pinned_binding() -> None:
    check = self_check()
    assert check.ok, check.reason


def test_search_drinks_returns_a_valid_result(coffee: ApiRuntime, snapshot: Any) -> None:
    outcome = coffee.call_blocking("searchDrinks", {"keyword": "latte"})
    assert outcome.diagnostics == []
    assert snapshot == json.dumps(outcome.result.wire(), ensure_ascii=False, indent=2)
    # The middleware's console.log is captured with its place in the source.
    [entry] = outcome.console
    assert (entry.level, entry.file, entry.line) == ("log", "index.js", 11)
    assert entry.text.startswith("[coffee-skill] searchDrinks took ")


def test_input_defaults_are_applied_before_the_handler_runs(tmp_path: Path) -> None:
    rt = make_runtime(COFFEE, tmp_path, approver=lambda _r: True)
    outcome = rt.call_blocking("confirmOrder", {"drinkId": "d03"})
    rt.close()
    assert outcome.result.structured_content is not None
    line = outcome.result.structured_content["order"]["lines"][0]
    assert (line["spec"], line["quantity"]) == ("大杯 / 热 / 标准糖", 1)


def test_invalid_arguments_name_the_json_pointer(coffee: ApiRuntime) -> None:
    outcome = coffee.call_blocking("searchDrinks", {"limit": 50, "category": "juice"})
    assert outcome.result.is_error
    [diag] = outcome.diagnostics
    assert diag.code == "RUN010"
    assert diag.message == (
        "invalid arguments for searchDrinks: /category: 'juice' is not one of ['coffee', 'tea', 'other'];"
        " /limit: 50 is greater than the maximum of 20"
    )


def test_an_undeclared_api_is_refused(coffee: ApiRuntime) -> None:
    outcome = coffee.call_blocking("dropTables", {})
    assert [d.code for d in outcome.diagnostics] == ["RUN011"]
    assert outcome.result.text == (
        'no API named "dropTables" is declared in mcp.json (declared: searchDrinks, confirmOrder, payOrder).'
    )


def test_l3_without_approval_is_refused_and_audited(coffee: ApiRuntime) -> None:
    outcome = coffee.call_blocking("confirmOrder", {"drinkId": "d01"})
    assert outcome.result.is_error and outcome.approved is False
    assert [d.code for d in outcome.diagnostics] == ["RUN019"]
    [record] = AuditLog.of(coffee.config).records()
    assert (record.api_name, record.risk.value, record.outcome) == ("confirmOrder", "L3", AuditOutcome.REFUSED)
    assert record.user_did == "did:example:user" and record.arguments_digest.startswith("sha256:")


def test_l3_with_async_approval_runs_and_is_audited(tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    rt = make_runtime(COFFEE, tmp_path, approver=approve)
    outcome = asyncio.run(rt.call("confirmOrder", {"drinkId": "d01", "quantity": 2}))
    rt.close()
    assert not outcome.result.is_error
    assert seen[0].context.arguments["size"] == "grande"  # the approver sees the validated arguments
    assert outcome.audit is not None and outcome.audit.outcome is AuditOutcome.OK
    assert outcome.result.structured_content is not None
    assert outcome.result.structured_content["order"]["total"] == 56


def test_an_approver_that_raises_means_not_approved(tmp_path: Path) -> None:
    def broken(_request: ApprovalRequest) -> bool:
        raise RuntimeError("approval UI crashed")

    rt = make_runtime(COFFEE, tmp_path, approver=broken)
    outcome = rt.call_blocking("payOrder", {"orderId": "MB000001"})
    rt.close()
    assert [d.code for d in outcome.diagnostics] == ["RUN019"]


def test_middleware_runs_as_an_onion_with_a_copy_of_the_arguments(tmp_path: Path) -> None:
    index = """
const skill = wx.modelContext.createSkill('skills/onion')
const trail = []
skill.use(async (ctx, next) => {
  trail.push('a>' + ctx.name + '@' + ctx.skillPath)
  ctx.arguments.n = 99
  await next()
  trail.push('<a')
})
skill.use(async (ctx, next) => { trail.push('b>'); const r = await next(); trail.push('<b:' + r.content[0].text) })
skill.registerAPI('echo', async (args) => {
  trail.push('handler n=' + args.n)
  return { content: [{ type: 'text', text: 'done' }], structuredContent: { trail } }
})
"""
    skill = write_skill(tmp_path / "onion", index, [{"name": "echo"}])
    rt = make_runtime(skill, tmp_path / "state")
    outcome = rt.call_blocking("echo", {"n": 1})
    rt.close()
    assert outcome.result.structured_content == {"trail": ["a>echo@skills/onion", "b>", "handler n=1", "<b:done", "<a"]}


def test_a_middleware_may_answer_without_calling_next(tmp_path: Path) -> None:
    index = """
const skill = wx.modelContext.createSkill('skills/guard')
skill.use(async (ctx) => ({ isError: true, content: [{ type: 'text', text: 'blocked by ' + ctx.name }] }))
skill.registerAPI('echo', async () => { throw new Error('the handler must not run') })
"""
    rt = make_runtime(write_skill(tmp_path / "g", index, [{"name": "echo"}]), tmp_path / "state")
    outcome = rt.call_blocking("echo", {})
    rt.close()
    assert outcome.result.is_error and outcome.result.text == "blocked by echo"
    assert outcome.diagnostics == []


def test_middleware_and_handler_share_one_timeout(tmp_path: Path) -> None:
    index = """
const skill = wx.modelContext.createSkill('skills/slow')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
skill.use(async (ctx, next) => { await sleep(250); await next() })
skill.registerAPI('slow', async () => { await sleep(250); return { content: [{ type: 'text', text: 'late' }] } })
"""
    rt = make_runtime(write_skill(tmp_path / "s", index, [{"name": "slow"}]), tmp_path / "state")
    slow = rt.call_blocking("slow", {}, timeout_s=0.4)
    enough = rt.call_blocking("slow", {}, timeout_s=5)
    rt.close()
    assert [d.code for d in slow.diagnostics] == ["RUN012"]
    assert enough.result.text == "late"


def test_a_js_exception_becomes_an_error_result_and_a_console_error(tmp_path: Path) -> None:
    files = {"apis/boom.js": "module.exports = async function boom (args) {\n  return args.missing.field\n}\n"}
    index = "const skill = wx.modelContext.createSkill('x')\nskill.registerAPI('boom', require('./apis/boom'))\n"
    rt = make_runtime(write_skill(tmp_path / "b", index, [{"name": "boom"}], files), tmp_path / "state")
    outcome = rt.call_blocking("boom", {})
    rt.close()
    [diag] = outcome.diagnostics
    assert (diag.code, diag.file) == ("RUN013", "apis/boom.js")
    assert diag.span is not None and diag.span.line == 2
    assert outcome.result.text == "boom threw TypeError: cannot read property 'field' of undefined at apis/boom.js:2."
    [entry] = outcome.console
    assert entry.level == "error" and "at boom (apis/boom.js:2:" in entry.text


@pytest.mark.parametrize(
    ("body", "code", "text"),
    [
        (
            "return 'just text'",
            "RUN014",
            "The API bad returned str; an atomic API must return {content: [{type: 'text', text}]}.",
        ),
        (
            "return { structuredContent: {} }",
            "RUN014",
            "The API bad returned no `content`; it is required (an array of {type: 'text', text} blocks).",
        ),
        (
            "return { content: [{ type: 'text' }] }",
            "RUN014",
            "The API bad returned `content[0]` of type text without a string `text`.",
        ),
        (
            "const a = {}; a.self = a; return a",
            "RUN022",
            "the result of bad is not JSON-serializable: TypeError: circular reference.",
        ),
        ("return new Promise(() => {})", "RUN021", "the promise returned by bad never settled."),
    ],
)
def test_results_that_break_the_rules_become_errors(tmp_path: Path, body: str, code: str, text: str) -> None:
    index = f"wx.modelContext.registerAPI('bad', async () => {{ {body} }})\n"
    rt = make_runtime(write_skill(tmp_path / "r", index, [{"name": "bad"}]), tmp_path / "state")
    outcome = rt.call_blocking("bad", {})
    rt.close()
    assert outcome.result.is_error
    assert [d.code for d in outcome.diagnostics] == [code]
    assert outcome.result.text == text


def test_is_error_results_are_kept_and_output_schema_only_warns(tmp_path: Path) -> None:
    index = """
wx.modelContext.registerAPI('soft', async (a) => a.fail
  ? { isError: true, content: [{ type: 'text', text: 'no stock' }], structuredContent: { leaked: true } }
  : { content: [{ type: 'text', text: 'ok' }], structuredContent: { count: 'three' } })
"""
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    apis = [
        {
            "name": "soft",
            "inputSchema": {"type": "object", "properties": {"fail": {"type": "boolean"}}},
            "outputSchema": schema,
        }
    ]
    rt = make_runtime(write_skill(tmp_path / "o", index, apis), tmp_path / "state")
    failed = rt.call_blocking("soft", {"fail": True})
    warned = rt.call_blocking("soft", {"fail": False})
    rt.close()
    assert failed.result.wire() == {"isError": True, "content": [{"type": "text", "text": "no stock"}]}
    assert failed.diagnostics == []
    assert not warned.result.is_error
    assert [(d.code, d.severity.value, d.message) for d in warned.diagnostics] == [
        (
            "RUN016",
            "warning",
            "soft: structuredContent does not match outputSchema at /count: 'three' is not of type 'integer'",
        )
    ]


def test_load_reports_registration_problems(tmp_path: Path) -> None:
    index = """
const skill = wx.modelContext.createSkill('skills/noisy')
skill.registerAPI('declared', async () => ({ content: [] }))
skill.registerAPI('declared', async () => ({ content: [] }))
skill.registerAPI('extra', async () => ({ content: [] }))
skill.registerAPI('broken', 'not a function')
"""
    apis = [{"name": "declared"}, {"name": "broken"}, {"name": "forgotten"}]
    rt = make_runtime(write_skill(tmp_path / "n", index, apis), tmp_path / "state")
    report = asyncio.run(rt.load())
    missing = rt.call_blocking("forgotten", {})
    rt.close()
    found = [(d.code, d.file, d.span.line if d.span else None) for d in report.diagnostics]
    assert found == [
        ("RUN005", "index.js", 4),
        ("RUN003", "index.js", 5),
        ("RUN004", "index.js", 6),
        ("RUN002", "mcp.json", None),
        ("RUN002", "mcp.json", None),
    ]
    assert [d.code for d in missing.diagnostics] == ["RUN002"]


def test_index_js_that_throws_is_reported(tmp_path: Path) -> None:
    index = "const skill = wx.modelContext.createSkill('x')\nrequire('./lib/missing')\n"
    rt = make_runtime(write_skill(tmp_path / "t", index, [{"name": "any"}]), tmp_path / "state")
    report = asyncio.run(rt.load())
    outcome = rt.call_blocking("any", {})
    rt.close()
    assert [d.code for d in report.diagnostics] == ["RUN001"]
    assert outcome.result.text == (
        "index.js failed to load, so any could not run: Error: Cannot find module './lib/missing' from 'index.js'"
        " at index.js:2."
    )


def test_a_syntax_error_names_its_file(tmp_path: Path) -> None:
    files = {"apis/bad.js": "module.exports = async function (\n"}
    index = "wx.modelContext.registerAPI('x', require('./apis/bad'))\n"
    rt = make_runtime(write_skill(tmp_path / "t", index, [{"name": "x"}], files), tmp_path / "state")
    outcome = rt.call_blocking("x", {})
    rt.close()
    [diag] = outcome.diagnostics
    assert (diag.code, diag.file) == ("RUN001", "apis/bad.js")
    assert outcome.result.text.startswith("index.js failed to load, so x could not run: SyntaxError:")


def test_the_loader_resolves_json_index_files_and_cycles(tmp_path: Path) -> None:
    files = {
        "lib/index.js": "exports.name = 'lib'; const b = require('./b'); exports.fromB = b.value\n",
        "lib/b.js": "const lib = require('/lib'); exports.value = 'b saw ' + lib.name\n",
        "data/menu.json": '{"items": [1, 2, 3]}',
    }
    index = """
const lib = require('./lib')
const menu = require('./data/menu')
const again = require('./data/menu.json')
const text = [lib.fromB, menu.items.length, menu === again].join(' | ')
wx.modelContext.registerAPI('x', async () => ({ content: [{ type: 'text', text }] }))
"""
    rt = make_runtime(write_skill(tmp_path / "l", index, [{"name": "x"}], files), tmp_path / "state")
    outcome = rt.call_blocking("x", {})
    rt.close()
    assert outcome.result.text == "b saw lib | 3 | true"


def test_host_apis_answer_from_the_call_context(tmp_path: Path) -> None:
    index = """
wx.modelContext.registerAPI('host', async () => {
  await wx.setStorage({ key: 'a', data: { n: 1 } })
  const got = await wx.getStorage({ key: 'a' })
  let missing
  try { await wx.getStorage({ key: 'nope' }) } catch (e) { missing = e.errMsg }
  const info = wx.getStorageInfoSync()
  const login = await wx.login()
  wx.modelContext.expireAllCards({ componentPaths: ['components/a/index'] })
  let viaCallback
  await new Promise((done) => wx.getStorage({ key: 'a', success: (r) => { viaCallback = r.errMsg }, complete: done }))
  return { content: [{ type: 'text', text: 'ok' }], structuredContent: {
    got: got.data, errMsg: got.errMsg, missing, keys: info.keys, login: login.code.slice(0, 4),
    session: wx.modelContext.getSessionId(), sdk: wx.getAppBaseInfo().SDKVersion, brand: wx.getDeviceInfo().brand,
    viaCallback, canIUse: [wx.canIUse('request'), wx.canIUse('chooseImage')] } }
})
"""
    rt = make_runtime(write_skill(tmp_path / "h", index, [{"name": "host"}]), tmp_path / "state")
    outcome = rt.call_blocking("host", {}, rt.context(session_id="s-1"))
    rt.close()
    assert outcome.result.structured_content == {
        "got": {"n": 1},
        "errMsg": "getStorage:ok",
        "missing": "getStorage:fail data not found",
        "keys": ["a"],
        "login": "eyJh",  # a JWT: base64url of {"alg":...
        "session": "s-1",
        "sdk": "3.16.1",
        "brand": "skillc",
        "viaCallback": "getStorage:ok",
        "canIUse": [True, False],
    }
    assert [a.wire() for a in outcome.card_actions] == [
        {"kind": "expireAllCards", "componentPaths": ["components/a/index"]}
    ]


def test_concurrent_calls_run_in_separate_contexts(tmp_path: Path) -> None:
    index = """
let counter = 0
wx.modelContext.registerAPI('tick', async (a) => {
  counter += 1
  await new Promise((r) => setTimeout(r, 20))
  return { content: [{ type: 'text', text: a.id + ':' + counter }] }
})
"""
    apis = [{"name": "tick", "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}}]
    rt = make_runtime(write_skill(tmp_path / "c", index, apis), tmp_path / "state", workers=2)

    async def many() -> list[str]:
        outcomes = await asyncio.gather(*[rt.call("tick", {"id": i}) for i in range(8)])
        return [o.result.text for o in outcomes]

    texts = asyncio.run(many())
    rt.close()
    # A fresh context per call: the module-level counter never sees another call.
    assert texts == [f"{i}:1" for i in range(8)]


def test_the_process_guard_runs_calls_and_kills_at_the_deadline(tmp_path: Path) -> None:
    rt = make_runtime(COFFEE, tmp_path / "a", deadline_mode="process")
    ok = rt.call_blocking("searchDrinks", {"keyword": "mocha"})
    rt.close()
    assert ok.result.text.startswith("找到 1 款饮品：摩卡 Mocha ¥31")
    spin = make_runtime(ROOT / "tests/fixtures/hostile/infinite-loop", tmp_path / "b", deadline_mode="process")
    stopped = spin.call_blocking("spin", {}, timeout_s=0.3)
    spin.close()
    assert [d.code for d in stopped.diagnostics] == ["RUN012"]


def test_a_cancelled_call_kills_its_guard_process_at_once(tmp_path: Path) -> None:
    """A call group cancelled from outside (a debugger turn that timed out, a server that stops)
    ends a call running in a guard process now, not at the call's own 300 s deadline."""
    spin = make_runtime(ROOT / "tests/fixtures/hostile/infinite-loop", tmp_path, deadline_mode="process")
    group = CallGroup()
    outcomes: list[Any] = []

    def run() -> None:
        with calls_in(group):
            outcomes.append(spin.call_blocking("spin", {}, timeout_s=300))

    worker = threading.Thread(target=run, daemon=True)
    try:
        worker.start()
        wait_until(lambda: group.running == 1 and _guard_children(), PATIENCE_S, "the guard process to run")
        assert group.cancel() == 1
        worker.join(bound_for(10))  # far below the call's own 300 s
        assert not worker.is_alive(), "the cancelled call still runs"
        [stopped] = outcomes
        assert [d.code for d in stopped.diagnostics] == ["RUN012"]
        wait_until(lambda: not _guard_children(), PATIENCE_S, "the guard process to be gone")
    finally:
        for pid in _guard_children():  # a failed test must not wait out the 300 s
            os.kill(pid, signal.SIGKILL)
        worker.join(PATIENCE_S)
        spin.close()


def _guard_children() -> list[int]:
    """The pids of this process's guard children that still run (not yet reaped zombies)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            cmdline = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        mine = fields.get("PPid", "").strip() == str(os.getpid()) and b"skillc.runtime.api.guard" in cmdline
        if mine and not fields.get("State", "").startswith("Z"):
            found.append(int(status.parent.name))
    return found


def _slow_guard_start(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Guard processes that take ``seconds`` to start, as on a machine too busy to start one at once."""
    script = (
        f"import time; time.sleep({seconds}); import runpy; "
        "runpy.run_module('skillc.runtime.api.guard', run_name='__main__', alter_sys=True)"
    )
    monkeypatch.setattr(guard, "_command", lambda: [sys.executable, "-c", script])


@pytest.mark.parametrize("mode", ["process", "overrun"])
def test_a_guard_process_slow_to_start_does_not_spend_the_skills_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Process mode, and interrupt mode while a call is stuck past its deadline (the skill's next
    calls run in guard processes): the timeout is the skill's, start-up is not part of it."""
    _slow_guard_start(monkeypatch, 2.5)
    rt = make_runtime(COFFEE, tmp_path / "a", deadline_mode="process" if mode == "process" else "interrupt")
    spin = make_runtime(ROOT / "tests/fixtures/hostile/infinite-loop", tmp_path / "b", deadline_mode=rt.mode)
    if mode == "overrun":
        for runtime in (rt, spin):
            runtime._overruns.track(Future())  # a worker that never comes back
    try:
        ok = rt.call_blocking("searchDrinks", {"keyword": "mocha"}, timeout_s=1)
        assert [d.code for d in ok.diagnostics] == []
        assert ok.result.text.startswith("找到 1 款饮品：摩卡 Mocha ¥31")
        stopped = asyncio.run(spin.call("spin", {}, timeout_s=0.5))  # counted from the start, the deadline holds
        assert [d.code for d in stopped.diagnostics] == ["RUN012"]
        assert stopped.result.text == "spin did not finish within 0.5 s and was stopped."
    finally:
        rt.close()
        spin.close()


def test_a_guard_process_that_cannot_start_ends_the_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _slow_guard_start(monkeypatch, 600)
    monkeypatch.setattr(guard, "START_TIMEOUT_S", 0.5)
    rt = make_runtime(COFFEE, tmp_path, deadline_mode="process")
    try:
        out = rt.call_blocking("searchDrinks", {"keyword": "mocha"})
    finally:
        rt.close()
    assert out.result.is_error
    assert out.result.text == "searchDrinks failed: InternalError: the guard process did not start within 0.5 s."


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    args=st.dictionaries(
        st.sampled_from(["keyword", "category", "limit", "extra"]),
        st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=20)),
        max_size=4,
    )
)
def test_any_arguments_give_a_result_or_an_input_error(coffee: ApiRuntime, args: dict[str, Any]) -> None:
    outcome = coffee.call_blocking("searchDrinks", args)
    codes = [d.code for d in outcome.diagnostics]
    assert codes in ([], ["RUN010"])
    assert outcome.result.is_error == (codes == ["RUN010"])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillc", "call", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_cli_call_prints_the_result_and_the_console(tmp_path: Path) -> None:
    done = _cli(str(COFFEE), "searchDrinks", "--args", '{"keyword":"latte"}', "--state-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("searchDrinks: ok (risk L0, ")
    assert lines[1] == "  找到 3 款饮品：拿铁 Latte ¥28、燕麦拿铁 Oat Latte ¥32、抹茶拿铁 Matcha Latte ¥30。" + (
        "接下来为用户展示饮品列表卡片。"
    )
    assert "console:" in lines and any("log   index.js:11  [coffee-skill] searchDrinks took" in x for x in lines)


def test_cli_refuses_l3_without_approve_and_storage_survives_restarts(tmp_path: Path) -> None:
    refused = _cli(str(COFFEE), "confirmOrder", "--args", '{"drinkId":"d01"}', "--state-dir", str(tmp_path), "--json")
    assert refused.returncode == 1
    data = json.loads(refused.stdout)
    assert data["result"]["isError"] is True and data["audit"]["outcome"] == "refused"
    ids = []
    for _ in range(2):  # two processes, one SQLite file: the order sequence continues
        done = _cli(
            str(COFFEE),
            "confirmOrder",
            "--args",
            '{"drinkId":"d01"}',
            "--approve",
            "--json",
            "--state-dir",
            str(tmp_path),
        )
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["result"]["structuredContent"]["order"]["orderId"])
    assert ids == ["MB000001", "MB000002"]
    other_user = _cli(
        str(COFFEE),
        "confirmOrder",
        "--args",
        '{"drinkId":"d01"}',
        "--approve",
        "--json",
        "--user",
        "did:example:someone-else",
        "--state-dir",
        str(tmp_path),
    )
    assert json.loads(other_user.stdout)["result"]["structuredContent"]["order"]["orderId"] == "MB000001"
    outcomes = [r.outcome.value for r in AuditLog.of(RuntimeConfig(state_dir=tmp_path)).records()]
    assert outcomes == ["refused", "ok", "ok", "ok"]


def test_cli_rejects_arguments_that_are_not_json(tmp_path: Path) -> None:
    done = _cli(str(COFFEE), "searchDrinks", "--args", "{keyword: latte}", "--state-dir", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("skillc: error: --args is not valid JSON: Expecting property name")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://api.example.com/x", True),
        ("https://api.example.com:443/x", True),
        ("http://api.example.com/x", False),  # a bare host entry means https only
        ("https://api.example.com:8443/x", False),
        ("https://shop.cdn.example.com/a.png", True),
        ("https://cdn.example.com.evil.test/", False),
        ("http://127.0.0.1:8765/", True),
        ("http://127.0.0.1:8766/", False),
        ("file:///etc/passwd", False),
        ("https://user@api.example.com/", True),
    ],
)
def test_the_request_allow_list(url: str, allowed: bool) -> None:
    from skillc.runtime.host.wxrequest import host_allowed

    entries = ["api.example.com", "*.cdn.example.com", "http://127.0.0.1:8765"]
    assert host_allowed(url, entries) is allowed


CHAINING_INDEX = """
wx.modelContext.registerAPI('order', async () => ({
  content: [{ type: 'text', text: 'ordered' }],
  apiCalls: [{ name: 'ship', arguments: { id: 1 } }]
}))
wx.modelContext.registerAPI('ship', async (a) => {
  wx.setStorageSync('shipped', a.id)
  return { content: [{ type: 'text', text: 'shipped' }] }
})
wx.modelContext.registerAPI('peek', async () => ({
  content: [{ type: 'text', text: 'shipped: ' + wx.getStorageSync('shipped') }]
}))
"""


def test_api_calls_in_a_result_are_kept_and_the_chained_call_is_not_made(tmp_path: Path) -> None:
    ship = {"name": "ship", "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}}
    skill = write_skill(tmp_path / "chain", CHAINING_INDEX, [{"name": "order"}, ship, {"name": "peek"}])
    done = _cli(str(skill), "order", "--json", "--state-dir", str(tmp_path / "state"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["result"] == {
        "isError": False,
        "content": [{"type": "text", "text": "ordered"}],
        "apiCalls": [{"name": "ship", "arguments": {"id": 1}}],
    }
    assert data["diagnostics"] == []  # a result key, not a stray one (RUN080)
    peek = _cli(str(skill), "peek", "--state-dir", str(tmp_path / "state"))
    assert peek.stdout.splitlines()[1] == "  shipped: "  # ship never ran


TIMERS_INDEX = """
wx.modelContext.registerAPI('timers', async () => {
  const seen = []
  const never = setTimeout(() => seen.push('cleared timeout fired'), 5)
  clearTimeout(never)
  await new Promise((done) => {
    let n = 0
    const tick = setInterval(() => {
      n += 1
      seen.push('tick ' + n)
      if (n === 3) { clearInterval(tick); setTimeout(done, 30) }
    }, 10)
  })
  return { content: [{ type: 'text', text: seen.join(', ') }] }
})
wx.modelContext.registerAPI('forever', async () => {
  await new Promise(() => { setInterval(() => {}, 10) })
  return { content: [{ type: 'text', text: 'never' }] }
})
"""


def test_api_code_timers_fire_clear_and_stop_at_the_deadline(tmp_path: Path) -> None:
    rt = make_runtime(write_skill(tmp_path / "t", TIMERS_INDEX, [{"name": "timers"}, {"name": "forever"}]), tmp_path)
    try:
        ran = rt.call_blocking("timers", {}, timeout_s=5)
        stuck = rt.call_blocking("forever", {}, timeout_s=0.3)
    finally:
        rt.close()
    assert (ran.result.text, ran.diagnostics) == ("tick 1, tick 2, tick 3", [])
    assert [(d.code, d.message) for d in stuck.diagnostics] == [
        ("RUN012", "forever did not finish within 0.3 s and was stopped")
    ]
