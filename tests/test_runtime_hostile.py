"""Hostile skills (tests/fixtures/hostile/): each gives a clear error and the next call still works."""

from __future__ import annotations

import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallOutcome

from .conftest import FIXTURES

HOSTILE = FIXTURES / "hostile"


def runtime_for(path: Path, state: Path, **config: object) -> ApiRuntime:
    sink = DiagnosticSink()
    pkg = load_skill(path, sink)
    assert pkg is not None and pkg.manifest is not None
    return ApiRuntime(pkg, RuntimeConfig(state_dir=state, **config))  # type: ignore[arg-type]


def codes(outcome: ApiCallOutcome) -> list[str]:
    return [d.code for d in outcome.diagnostics]


def call_then_ok(rt: ApiRuntime, api: str, args: dict[str, object] | None = None, **kw: float) -> ApiCallOutcome:
    try:
        outcome = rt.call_blocking(api, args or {}, **kw)
        after = rt.call_blocking("ok", {})
        assert not after.result.is_error and after.result.text == "ok"
        return outcome
    finally:
        rt.close()


def test_infinite_loop_stops_at_the_deadline(tmp_path: Path) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "infinite-loop", tmp_path), "spin", timeout_s=0.3)
    assert outcome.result.is_error
    assert codes(outcome) == ["RUN012"]
    assert outcome.result.text == "spin did not finish within 0.3 s and was stopped."


def test_catastrophic_regex_is_interrupted(tmp_path: Path) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "catastrophic-regex", tmp_path), "regex", timeout_s=0.3)
    assert codes(outcome) == ["RUN012"]


def test_a_deadline_tripped_from_another_thread_stops_the_call(tmp_path: Path) -> None:
    from skillc.runtime.api.api_vm import run_api
    from skillc.runtime.sandbox.native import Deadline

    rt = runtime_for(HOSTILE / "infinite-loop", tmp_path)
    deadline = Deadline.after(60)
    threading.Timer(0.2, deadline.trip).start()
    run = run_api(rt.code, "spin", {}, rt.context("spin"), rt.config, rt.storage, deadline, None, native=True)
    rt.close()
    assert (run.state, run.fault) == ("fault", "timeout")


def test_memory_bomb_hits_the_memory_limit(tmp_path: Path) -> None:
    rt = runtime_for(HOSTILE / "memory-bomb", tmp_path, memory_limit=16 << 20)
    outcome = call_then_ok(rt, "bomb", timeout_s=20)
    assert codes(outcome) == ["RUN017"]
    assert outcome.result.text == "bomb ran out of memory (limit 16 MB) and was stopped."


def test_deep_recursion_hits_the_stack_limit(tmp_path: Path) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "deep-recursion", tmp_path), "dive")
    assert codes(outcome) == ["RUN018"]
    assert outcome.diagnostics[0].file == "index.js"


@pytest.mark.parametrize(
    ("api", "message"),
    [
        ("passwd", "passwd threw Error: require('../../../etc/passwd') escapes the skill package at index.js:4."),
        (
            "fs",
            "fs threw Error: Cannot find module 'fs' (only relative paths inside the skill package are allowed)"
            " at index.js:5.",
        ),
        ("absolute", "absolute threw Error: Cannot find module '/etc/passwd' from 'index.js' at index.js:6."),
    ],
)
def test_require_stays_inside_the_skill(tmp_path: Path, api: str, message: str) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "require-escape", tmp_path), api)
    assert codes(outcome) == ["RUN013"]
    assert outcome.result.text == message
    # The exception also reaches the console, with its stack, for the debugger.
    assert outcome.console[-1].level == "error" and outcome.console[-1].file == "index.js"


def test_a_symlink_out_of_the_skill_is_not_loadable(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(HOSTILE / "require-escape", skill)
    secret = tmp_path / "outside" / "secret.js"
    secret.parent.mkdir()
    secret.write_text("module.exports = { secret: 'leaked' }\n")
    os.symlink(secret, skill / "apis" / "linked.js")
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    assert "SKL008" in [d.code for d in sink]  # (JS003 too: the static scan sees the same requires)
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    outcome = call_then_ok(rt, "linked")
    assert (
        outcome.result.text == "linked threw Error: Cannot find module './apis/linked' from 'index.js' at index.js:7."
    )
    assert "leaked" not in outcome.model_dump_json()


def test_every_code_generation_route_is_closed(tmp_path: Path) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "code-generation", tmp_path), "routes")
    results = outcome.result.structured_content
    assert results is not None
    blocked = "EvalError: code generation from strings is disabled"
    assert results == {
        "eval": "ReferenceError: eval is not defined",
        "indirectEval": "TypeError: not a function",
        "Function": blocked,
        "newFunction": blocked,
        "arrowConstructor": blocked,
        "asyncConstructor": blocked,
        "generatorConstructor": blocked,
        "asyncGeneratorConstructor": blocked,
        "reflectConstruct": blocked,
        "builtinConstructor": blocked,
        "reassignFunction": blocked,
    }


def test_prototype_pollution_does_not_reach_the_host_or_the_next_call(tmp_path: Path) -> None:
    rt = runtime_for(HOSTILE / "prototype-pollution", tmp_path)
    context = rt.context(session_id="session-real")
    polluted = rt.call_blocking("pollute", {}, context)
    fresh = rt.call_blocking("inspect", {})
    rt.close()
    data = polluted.result.structured_content
    assert data is not None
    # wx is frozen: assignments are ignored and defineProperty throws; storage and session stay real.
    assert data["attempts"]["redefineRequest"] == "TypeError"
    assert data["storage"] == "written through the real host"
    assert data["session"] == "session-real"
    assert data["setStorageIsHost"] is True
    # The skill replaced JSON.stringify and console.log; the host's captured copies still work.
    assert polluted.result.text == "polluted"
    assert [e.text for e in polluted.console] == ["still captured"]
    assert fresh.result.structured_content == {"polluted": "no", "push": 2}


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"hello": "world", "path": "%s"}' % self.path.encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_wx_request_reaches_an_allowed_host(tmp_path: Path, local_server: str) -> None:
    rt = runtime_for(HOSTILE / "request-allowlist", tmp_path, allowed_hosts=(local_server,))
    outcome = call_then_ok(rt, "fetch", {"url": local_server + "/menu"})
    assert outcome.result.structured_content == {"status": 200, "data": {"hello": "world", "path": "/menu?q=x"}}


def test_wx_request_to_a_host_off_the_allow_list_is_refused(tmp_path: Path, local_server: str) -> None:
    # Same address, other scheme: not on the list, and refused before any connection.
    other = local_server.replace("http://", "https://")
    rt = runtime_for(HOSTILE / "request-allowlist", tmp_path, allowed_hosts=(local_server,))
    outcome = call_then_ok(rt, "fetch", {"url": other + "/menu"})
    assert outcome.result.is_error
    assert outcome.result.text == f"request:fail url not in domain list: {other}/menu"
    assert codes(outcome) == ["RUN020"]


def test_storage_of_another_user_or_skill_is_invisible(tmp_path: Path) -> None:
    state = tmp_path / "state"
    rt = runtime_for(HOSTILE / "storage-snoop", state)
    alice = rt.context(user_did="did:example:alice")
    bob = rt.context(user_did="did:example:bob")
    assert not rt.call_blocking("put", {"key": "card", "value": "alice-secret"}, alice).result.is_error
    assert rt.call_blocking("get", {"key": "card"}, alice).result.structured_content == {"value": "alice-secret"}
    assert rt.call_blocking("get", {"key": "card"}, bob).result.structured_content == {"value": ""}
    other_merchant = alice.model_copy(update={"merchant_did": "did:example:other-shop"})
    assert rt.call_blocking("get", {"key": "card"}, other_merchant).result.structured_content == {"value": ""}
    rt.close()
    # The same code under another skill id (another folder) sees nothing either.
    twin = tmp_path / "twin-skill"
    shutil.copytree(HOSTILE / "storage-snoop", twin)
    rt2 = runtime_for(twin, state)
    same_user = rt2.context(user_did="did:example:alice")
    assert rt2.call_blocking("get", {"key": "card"}, same_user).result.structured_content == {"value": ""}
    assert rt2.call_blocking("keys", {}, same_user).result.structured_content == {"keys": []}
    rt2.close()


def test_a_10_mb_result_is_refused(tmp_path: Path) -> None:
    outcome = call_then_ok(runtime_for(HOSTILE / "huge-result", tmp_path), "huge")
    assert codes(outcome) == ["RUN015"]
    assert outcome.result.text.startswith("The result of content is too large: huge: content is 10485")
