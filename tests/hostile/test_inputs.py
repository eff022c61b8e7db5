"""Class 4: input is checked under the call's deadline, off the event loop, on a regex engine that
cannot backtrack without bound (RE2). A catastrophic pattern answers at once with the exact
inputSchema error; a pattern RE2 cannot run is refused (RUN040); the server keeps answering
another skill while an attack is in flight."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.api.schema import SchemaCheck
from skillc.runtime.config import RuntimeConfig
from tests.hostile.harness import api, benign_skill, serve, while_attacking
from tests.waiting import PATIENCE_S, bound_for

# CPU seconds within which a call whose arguments break a catastrophic pattern answers (Python re:
# 61 s). CPU time, of this process or of the server: it measures the matching, not the machine's load.
BOUND_S = 5.0

ECHO_INDEX = """\
const skill = wx.modelContext.createSkill('patterns')
skill.registerAPI('echo', async (args) => ({ content: [{ type: 'text', text: 'ran' }] }))
"""


def _schema(prop: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"s": prop}, **extra}


# (pattern, an input that makes a backtracking engine take exponential time)
CATASTROPHIC = {
    "nested-plus": (r"^(a+)+$", "a" * 30 + "!"),
    "nested-star": (r"^(a*)*$", "a" * 30 + "!"),
    "alternation-overlap": (r"^(a|a)*$", "a" * 30 + "!"),
    "alternation-prefix": (r"^(a|aa)+$", "a" * 40 + "!"),
    "words-and-spaces": (r"^(\w+\s?)*$", "word " * 12 + "word!"),
    "email-like": (
        r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}"
        r"(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
        "a" * 40 + "!",
    ),
}


def _skill(root: Path, schema: dict[str, Any]) -> Path:
    from tests.hostile.harness import write_skill

    return write_skill(root, "patterns", ECHO_INDEX, [api("echo", inputSchema=schema)])


@pytest.fixture
def runtime_for(tmp_path: Path) -> Iterator[Any]:
    made: list[ApiRuntime] = []

    def make(schema: dict[str, Any], **config: Any) -> ApiRuntime:
        skill = _skill(tmp_path / f"s{len(made)}", schema)
        pkg = load_skill(skill, DiagnosticSink())
        assert pkg is not None
        rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state", **config))
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


@pytest.mark.parametrize(("pattern", "attack"), list(CATASTROPHIC.values()), ids=list(CATASTROPHIC))
def test_a_catastrophic_pattern_answers_at_once_with_the_schema_error(
    runtime_for: Any, pattern: str, attack: str
) -> None:
    rt = runtime_for(_schema({"type": "string", "pattern": pattern}))
    t0 = time.process_time()
    outcome = asyncio.run(rt.call("echo", {"s": attack}))
    assert time.process_time() - t0 < BOUND_S
    assert outcome.result.is_error
    assert outcome.result.text == f"invalid arguments for echo: /s: {attack!r} does not match {pattern!r}."
    assert [d.code for d in outcome.diagnostics] == ["RUN010"]
    # and the same pattern still accepts what it should
    assert not asyncio.run(rt.call("echo", {"s": "a" * 30 if "@" not in pattern else "a@b.cn"})).result.is_error


def test_catastrophic_pattern_properties_and_additional_properties(runtime_for: Any) -> None:
    key = "b" * 40 + "!"
    schema = {"type": "object", "patternProperties": {r"^(b+)+$": {"type": "integer"}}, "additionalProperties": False}
    rt = runtime_for(schema)
    t0 = time.process_time()
    outcome = asyncio.run(rt.call("echo", {key: 1, "bbb": "x"}))
    assert time.process_time() - t0 < BOUND_S
    assert outcome.result.text == (
        f"invalid arguments for echo: /: {key!r} does not match any of the regexes: '^(b+)+$'; "
        "/bbb: 'x' is not of type 'integer'."
    )
    assert not asyncio.run(rt.call("echo", {"bbbb": 2})).result.is_error


def test_a_nested_catastrophic_pattern_in_array_items(runtime_for: Any) -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"pattern": r"^(x+x+)+y$"}}}}
    rt = runtime_for(schema)
    bad = "x" * 40
    t0 = time.process_time()
    outcome = asyncio.run(rt.call("echo", {"xs": ["xxy", bad]}))
    assert time.process_time() - t0 < BOUND_S
    assert outcome.result.text == f"invalid arguments for echo: /xs/1: {bad!r} does not match '^(x+x+)+y$'."


UNSUPPORTED = {
    "backreference": (
        _schema({"type": "string", "pattern": r"^(a)\1$"}),
        r"/properties/s/pattern: '^(a)\\1$' (invalid escape sequence: \1)",
    ),
    "lookahead": (
        _schema({"type": "string", "pattern": r"^(?=a)a+$"}),
        r"/properties/s/pattern: '^(?=a)a+$' (invalid perl operator: (?=)",
    ),
    "lookbehind-key": (
        {"type": "object", "patternProperties": {r"(?<!x)y": {}}},
        r"/patternProperties/(?<!x)y: '(?<!x)y' (invalid perl operator: (?<!)",
    ),
    "unevaluated": (
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "patternProperties": {"^a": {}},
            "unevaluatedProperties": False,
        },
        "/unevaluatedProperties: (unevaluatedProperties with patternProperties would run the patterns on Python's re)",
    ),
}


def test_check_warns_of_every_pattern_re2_cannot_run(tmp_path: Path) -> None:
    """WeChat's gate passes these schemas, so check does too, but it names each pattern (MCP025)."""
    from skillc.check import check_skill

    schema = _schema(
        {"type": "string", "pattern": r"^(?=a)b$"},
        patternProperties={r"(x)\1": {}, "^ok$": {}},
    )
    skill = _skill(tmp_path, schema)
    report = check_skill(skill)
    got = [(d.code, d.severity.value, d.message) for d in report.diagnostics]
    assert got == [
        (
            "MCP025",
            "warning",
            "inputSchema pattern '^(?=a)b$' at `/properties/s/pattern` cannot run on RE2 "
            "(invalid perl operator: (?=); calls of this API are refused",
        ),
        (
            "MCP025",
            "warning",
            "inputSchema pattern '(x)\\\\1' at `/patternProperties/(x)\\1` cannot run on RE2 "
            "(invalid escape sequence: \\1); calls of this API are refused",
        ),
    ]
    # each points at its own pattern: the value, and the patternProperties key
    text = (skill / "mcp.json").read_text(encoding="utf-8").splitlines()
    at = [text[d.span.line - 1][d.span.column - 1 :] for d in report.diagnostics if d.span is not None]
    assert [a[:6] for a in at] == ['"^(?=a', '"(x)\\\\']
    assert report.counts.errors == 0


@pytest.mark.parametrize(("schema", "listed"), list(UNSUPPORTED.values()), ids=list(UNSUPPORTED))
def test_a_pattern_re2_cannot_run_is_refused_by_name(runtime_for: Any, schema: dict[str, Any], listed: str) -> None:
    rt = runtime_for(schema)
    outcome = asyncio.run(rt.call("echo", {"s": "a"}))
    assert outcome.result.is_error
    assert outcome.result.text == (
        f"the inputSchema of echo has a pattern RE2 cannot run (backreference or lookaround?): {listed}; "
        "the call is refused."
    )
    assert [d.code for d in outcome.diagnostics] == ["RUN040"]


def test_a_lone_surrogate_in_an_argument_is_matched_as_u_fffd(runtime_for: Any) -> None:
    rt = runtime_for(_schema({"type": "string", "pattern": "^a.b$"}))
    outcome = asyncio.run(rt.call("echo", {"s": "a\ud800b"}))
    assert not outcome.result.is_error, outcome.result.text
    assert [d.code for d in outcome.diagnostics] == ["RUN042"]
    assert outcome.diagnostics[0].message == "echo: 1 lone UTF-16 surrogate in the arguments replaced by U+FFFD"


def test_validation_runs_off_the_event_loop_and_under_the_deadline(
    runtime_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever validation costs, the caller's loop keeps running and the call answers at its deadline."""
    rt = runtime_for(_schema({"type": "string"}))

    checking = threading.Event()
    release = threading.Event()

    def slow(self: SchemaCheck, instance: Any) -> list[Any]:
        # Validation that lasts until the test ends it: an answer before then came at the deadline.
        checking.set()
        assert release.wait(PATIENCE_S), "the call was never answered"
        return []

    monkeypatch.setattr(SchemaCheck, "problems", slow)

    async def main() -> tuple[Any, int, float]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.02)
                if checking.is_set():
                    ticks += 1

        task = asyncio.create_task(ticker())
        t0 = time.monotonic()
        outcome = await rt.call("echo", {"s": "x"}, timeout_s=0.3)
        took = time.monotonic() - t0
        task.cancel()
        return outcome, ticks, took

    try:
        outcome, ticks, took = asyncio.run(main())
        assert not release.is_set()  # answered while the check was still running
    finally:
        release.set()
    assert outcome.result.text == "echo did not finish within 0.3 s and was stopped."
    assert [d.code for d in outcome.diagnostics] == ["RUN012"]
    assert took < bound_for(0.3)
    assert ticks >= 2  # the loop ran while the schema was being checked


def test_the_server_answers_another_skill_while_a_pattern_attack_runs(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": r"^(a+)+$"}},
        "patternProperties": {r"^(b|b)+$": {"type": "integer"}},
    }
    skill = _skill(tmp_path, schema)
    attack = "a" * 30 + "!"
    with serve(skill, benign_skill(tmp_path), state=tmp_path / "state") as served:
        for _ in range(3):
            cpu = served.cpu_seconds()
            hit, probe = while_attacking(served, ("echo", {"s": attack}), ("ping", {}))
            assert hit.status == 200 and served.cpu_seconds() - cpu < BOUND_S
            assert hit.result["isError"] is True
            assert hit.text == f"invalid arguments for echo: /s: {attack!r} does not match '^(a+)+$'."
            assert probe.text == "pong"
        key = "b" * 40 + "!"
        cpu = served.cpu_seconds()
        hit = served.call("echo", {"bbbb": "x", key: "y"})
        assert served.cpu_seconds() - cpu < BOUND_S
        assert hit.text == "invalid arguments for echo: /bbbb: 'x' is not of type 'integer'."
