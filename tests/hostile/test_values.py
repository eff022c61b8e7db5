"""Class 5 (runtime, CLI, server): values that used to become tracebacks or HTTP 500s.

- every text leaving the process is valid UTF-8: a lone surrogate becomes U+FFFD (RUN042);
- results and arguments nest at most DEPTH_LIMIT (64) arrays/objects deep, checked before
  anything recursive touches them (RUN041);
- a thrown value is described without running its toString/getters (or is stopped by the
  deadline), never a hang until the deadline or a "never settled";
- bad command-line input is a one-line error and exit 2, a bad flow script a RUN043 at
  file:line:col; never a traceback or a raw pydantic dump.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import quickjs
from click.testing import CliRunner

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.api.result import PART_LIMIT
from skillc.runtime.api.result import _size as result_size
from skillc.runtime.api.values import DEPTH_LIMIT, json_depth, nests_past
from skillc.runtime.config import RuntimeConfig
from tests.hostile.harness import ACCEPT, api, benign_skill, serve, write_skill

ROOT = Path(__file__).resolve().parents[2]
COFFEE = ROOT / "examples/coffee-skill"

# -- a skill that returns hostile values -----------------------------------------------------

APIS = {
    "surrogates": """
        console.log('c\\uD800', { k: '\\uDFFF' })
        return { content: [{ type: 'text', text: 'a\\uD800b \\uD83D\\uDE00' }],
                 structuredContent: { 'k\\uDC00': ['v\\uD800', { x: '\\uDBFF' }] },
                 _meta: { m: '\\uDFFF' } }""",
    "throwsSurrogate": "throw new Error('bad\\uD800')",
    "deepStructured": "return { content: [{ type: 'text', text: 'x' }], structuredContent: nest(Number(a.n)) }",
    "deepContent": "return { content: [{ type: 'text', text: 'x', extra: nest(Number(a.n)) }] }",
    "deepMeta": "return { content: [{ type: 'text', text: 'x' }], _meta: nestArrays(Number(a.n)) }",
    "echo": "return { content: [{ type: 'text', text: 'ok' }] }",
    "bracketsInStrings": (
        "return { content: [{ type: 'text', text: '['.repeat(100) }], "
        "structuredContent: { s: '{'.repeat(100), q: '\"[{\\\\' } }"
    ),
    "wideShallow": (
        "return { content: [{ type: 'text', text: 'x' }], "
        "structuredContent: { rows: Array.from({ length: 100 }, (_, i) => ({ i, tags: [] })) } }"
    ),
    "partOverLimit": "return { content: [{ type: 'text', text: 'x' }], structuredContent: { s: 'x'.repeat(Number(a.n)) } }",
    "toStringLoops": "throw { toString() { for (;;) {} } }",
    "toStringThrows": "throw { toString() { throw new Error('no') }, toJSON() { throw new Error('nope') } }",
    "proxyThrown": (
        "throw new Proxy({}, { get() { throw new Error('t') }, getPrototypeOf() { throw new Error('p') }, "
        "ownKeys() { throw new Error('k') } })"
    ),
    "messageGetterLoops": (
        "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e"
    ),
    "messageToStringLoops": "const e = new Error('x'); e.message = { toString() { for (;;) {} } }; throw e",
    "nameToStringThrows": "const e = new Error('x'); e.name = { toString() { throw new Error('n') } }; throw e",
    "stackGetterThrows": (
        "const e = new TypeError('y'); Object.defineProperty(e, 'stack', { get() { throw new Error('s') } }); throw e"
    ),
}
INDEX = (
    "const skill = wx.modelContext.createSkill('values')\n"
    "function nest(n) { let v = {}; for (let i = 0; i < n; i++) v = { a: v }; return v }\n"
    "function nestArrays(n) { let v = {}; for (let i = 0; i < n; i++) v = { a: [v] }; return v }\n"
    + "".join(f"skill.registerAPI('{name}', async (a) => {{ {body} }})\n" for name, body in APIS.items())
)
DECLARED = [api(name) for name in APIS]


@pytest.fixture(scope="module")
def skill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_skill(tmp_path_factory.mktemp("values"), "values", INDEX, DECLARED)


@pytest.fixture(scope="module")
def runtime(skill: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    rt = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path_factory.mktemp("state"), timeout_s=5))
    yield rt
    rt.close()


def _call(runtime: ApiRuntime, name: str, args: Any = None) -> Any:
    return asyncio.run(runtime.call(name, args if args is not None else {}))


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode("utf-8", "replace")
    return proc


SURROGATE_RESULT = {
    "isError": False,
    "content": [{"type": "text", "text": "a\ufffdb \U0001f600"}],
    "structuredContent": {"k\ufffd": ["v\ufffd", {"x": "\ufffd"}]},
    "_meta": {"m": "\ufffd"},
}

# -- (a) text leaving the process is valid UTF-8 ---------------------------------------------


def test_lone_surrogates_in_a_result_become_u_fffd(runtime: ApiRuntime) -> None:
    outcome = _call(runtime, "surrogates")
    assert outcome.result.wire() == SURROGATE_RESULT
    assert (outcome.diagnostics[0].code, outcome.diagnostics[0].message) == (
        "RUN042",
        "surrogates: 5 lone UTF-16 surrogates in the result replaced by U+FFFD",
    )
    _console_is_clean(outcome)
    outcome.model_dump_json()  # the whole outcome serialises


def _console_is_clean(outcome: Any) -> None:
    # The line is kept; the call chain replaces its surrogates and says so. The object was
    # formatted by JSON.stringify, which writes a lone surrogate as an ASCII escape.
    assert len(outcome.console) == 1
    assert outcome.console[0].text == 'c\ufffd {"k":"\\udfff"}'
    assert outcome.console[0].args == ["c\ufffd", {"k": "\ufffd"}]
    assert ("RUN042", "surrogates: 3 lone UTF-16 surrogates in the console replaced by U+FFFD") in [
        (d.code, d.message) for d in outcome.diagnostics
    ]


def test_console_entries_are_cleaned_by_the_call_chain() -> None:
    from skillc.runtime.api.api_runtime import _clean_console
    from skillc.runtime.contracts import ConsoleEntry

    entry = ConsoleEntry(level="log", text="c\ud800", args=["c\ud800", {"k\udfff": 1}], timestamp=0)
    cleaned, replaced = _clean_console([entry, entry.model_copy(update={"text": "fine", "args": []})])
    assert replaced == 3
    assert [(c.text, c.args) for c in cleaned] == [("c\ufffd", ["c\ufffd", {"k\ufffd": 1}]), ("fine", [])]
    assert entry.text == "c\ud800"  # the original is not modified


def test_a_lone_surrogate_in_an_error_message_becomes_u_fffd(runtime: ApiRuntime) -> None:
    outcome = _call(runtime, "throwsSurrogate")
    assert outcome.result.text.startswith("throwsSurrogate threw Error: bad\ufffd at index.js:")
    assert "RUN042" in [d.code for d in outcome.diagnostics]
    outcome.result.model_dump_json()  # serialisable


def test_skillc_call_json_prints_valid_utf8(skill: Path, tmp_path: Path) -> None:
    proc = _cli("call", str(skill), "surrogates", "--json", "--state-dir", str(tmp_path))
    assert proc.returncode == 0
    printed = json.loads(proc.stdout.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert printed["result"] == SURROGATE_RESULT
    assert printed["diagnostics"][0]["code"] == "RUN042"
    assert [c["text"] for c in printed["console"]] == ['c\ufffd {"k":"\\udfff"}']


def test_skillc_call_text_prints_valid_utf8(skill: Path, tmp_path: Path) -> None:
    proc = _cli("call", str(skill), "surrogates", "--state-dir", str(tmp_path))
    assert proc.returncode == 0
    out = proc.stdout.decode("utf-8")
    assert "a\ufffdb \U0001f600" in out
    proc = _cli("call", str(skill), "throwsSurrogate", "--state-dir", str(tmp_path))
    assert proc.returncode == 1
    assert "throwsSurrogate threw Error: bad\ufffd at index.js:" in proc.stdout.decode("utf-8")


def test_skillc_call_args_with_a_lone_surrogate(skill: Path, tmp_path: Path) -> None:
    proc = _cli("call", str(skill), "echo", "--args", '{"s": "\\ud800"}', "--json", "--state-dir", str(tmp_path))
    assert proc.returncode == 0
    printed = json.loads(proc.stdout.decode("utf-8"))
    assert printed["diagnostics"][0]["message"] == "echo: 1 lone UTF-16 surrogate in the arguments replaced by U+FFFD"


# -- (b) depth bound -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "n", "depth"),
    [
        ("deepStructured", 10_000, 10_002),  # result > structuredContent > 10 001 objects
        ("deepContent", 10_000, 10_004),  # result > content > block > extra
        ("deepMeta", 5_000, 10_002),  # objects and arrays alternate
        ("deepStructured", DEPTH_LIMIT - 1, DEPTH_LIMIT + 1),  # just past the limit
    ],
)
def test_a_result_nested_too_deep_is_refused(runtime: ApiRuntime, name: str, n: int, depth: int) -> None:
    outcome = _call(runtime, name, {"n": n})
    message = f"the result of {name} is too deeply nested: arrays/objects nested {depth} deep (limit {DEPTH_LIMIT})"
    assert outcome.result.is_error
    assert outcome.result.text == message[0].upper() + message[1:] + "."
    assert [(d.code, d.message) for d in outcome.diagnostics] == [("RUN041", message)]


def test_a_result_at_the_depth_limit_is_kept(runtime: ApiRuntime) -> None:
    outcome = _call(runtime, "deepStructured", {"n": DEPTH_LIMIT - 2})  # depth exactly DEPTH_LIMIT
    assert not outcome.result.is_error, outcome.result.text


@pytest.mark.parametrize("name", ["bracketsInStrings", "wideShallow"])
def test_a_shallow_result_with_more_brackets_than_the_limit_is_kept(runtime: ApiRuntime, name: str) -> None:
    # More than DEPTH_LIMIT opening brackets (in strings, or side by side): only the scan that
    # skips strings and counts nesting can tell it is shallow.
    outcome = _call(runtime, name)
    assert not outcome.result.is_error, outcome.result.text
    assert outcome.diagnostics == []


NESTING_TEXTS = [
    "{}",
    "[[[]]]",
    '["[[[[", "{{{{"]',
    '{"a": "\\"[[[[["}',
    "[" * 64 + "]" * 64,
    "[" * 65 + "]" * 65,
    "[{}, {}, [[], {}], " + ", ".join(["{}"] * 80) + "]",
    '{"k": [' + ", ".join(['"[{"'] * 70) + "]}",
    '[{"a": [{"b": ["]]]", {"c": [[1, 2], "}}"]}]}]}]',
]


@pytest.mark.parametrize("text", NESTING_TEXTS)
@pytest.mark.parametrize("limit", [0, 1, 2, 3, 5, DEPTH_LIMIT])
def test_nests_past_agrees_with_the_full_scan(text: str, limit: int) -> None:
    json.loads(text)  # each is valid JSON
    depth = json_depth(text)
    assert nests_past(text, limit) == (depth if depth > limit else None)


# Values whose compact JSON Python writes longer than JSON.stringify did: exponents gain a digit
# (1e-7 becomes 1e-07), and the rest stays as long or gets shorter (a lone surrogate's escape).
GROWING_VALUES = [
    "Array(1000).fill(1e-7)",
    "Array(1000).fill(-1e-7)",
    "[1e21, -0, 5e-324, 1.5e-300, 0.000001, 1e-7, 123456789012345680000]",
    r"{ a: 1e-7, b: [1e-8, { c: 1e-9 }], d: '\u0001\u001f\n\t\u2028', e: '\uD800x\uDFFF' }",
    "Array.from({ length: 300 }, (_, i) => ({ ['k' + i]: i * 1e-7 }))",
]


@pytest.mark.parametrize("expression", GROWING_VALUES)
def test_a_part_written_again_is_at_most_twice_its_text(expression: str) -> None:
    # normalise_json measures no part when the result's text is within half of PART_LIMIT: this
    # is the bound that makes it safe, on the texts QuickJS's JSON.stringify writes.
    text = quickjs.Context().eval(f"JSON.stringify({expression})")
    assert isinstance(text, str)
    written = result_size(json.loads(text))
    assert written <= 2 * len(text.encode("utf-8", "surrogatepass"))


def test_a_part_over_the_limit_is_measured_and_refused(runtime: ApiRuntime) -> None:
    outcome = _call(runtime, "partOverLimit", {"n": PART_LIMIT})
    message = f"partOverLimit: structuredContent is {PART_LIMIT + 8} bytes as JSON (limit {PART_LIMIT})"
    assert [(d.code, d.message) for d in outcome.diagnostics] == [("RUN015", message)]
    kept = _call(runtime, "partOverLimit", {"n": PART_LIMIT - 8})  # exactly at the limit
    assert not kept.result.is_error, kept.result.text


def _nested_args(n: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(n - 1):
        value = {"a": value}
    return value  # n objects deep


@pytest.mark.parametrize("n", [DEPTH_LIMIT + 1, 10_000])
def test_arguments_nested_too_deep_are_refused(runtime: ApiRuntime, n: int) -> None:
    outcome = _call(runtime, "echo", _nested_args(n))
    message = f"the arguments of echo are too deeply nested: arrays/objects nested {DEPTH_LIMIT + 1}+ deep (limit 64)"
    assert outcome.result.text == message + "."
    assert [d.code for d in outcome.diagnostics] == ["RUN041"]
    assert not _call(runtime, "echo", _nested_args(DEPTH_LIMIT)).result.is_error


@pytest.mark.parametrize(
    ("text", "depth"), [("[" * 10_000 + "]" * 10_000, 10_000), ('{"a":' * 65 + "1" + "}" * 65, 65)]
)
def test_cli_args_nested_too_deep(skill: Path, tmp_path: Path, text: str, depth: int) -> None:
    proc = _cli("call", str(skill), "echo", "--args", text, "--state-dir", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        f"skillc: error: --args is too deeply nested: arrays/objects nested {depth} deep (limit 64)\n"
    )
    assert proc.stdout == b""


def test_render_data_nested_too_deep(tmp_path: Path) -> None:
    data = tmp_path / "deep.json"
    data.write_text("[" * 10_000 + "]" * 10_000)
    result = CliRunner().invoke(main, ["render", str(COFFEE), "drink-list", "--data", str(data)])
    assert result.exit_code == 2
    assert result.output == (
        f"skillc: error: {data} is too deeply nested: arrays/objects nested 10000 deep (limit 64)\n"
    )


# -- (d) thrown values that fight back ------------------------------------------------------

THROWN = {
    "toStringLoops": "toStringLoops threw Error: a non-Error value was thrown: {}.",
    "toStringThrows": "toStringThrows threw Error: a non-Error value was thrown: [unserializable object].",
    "proxyThrown": "proxyThrown threw Error: a ",  # the text is the prelude's; never "never settled"
    "messageGetterLoops": "messageGetterLoops threw Error at index.js:",
    "messageToStringLoops": "messageToStringLoops threw Error at index.js:",
    "nameToStringThrows": "nameToStringThrows threw Error: x at index.js:",
    "stackGetterThrows": "stackGetterThrows threw TypeError: y.",
}


@pytest.mark.parametrize(("name", "text"), list(THROWN.items()), ids=list(THROWN))
def test_a_thrown_value_is_described_without_running_it(runtime: ApiRuntime, name: str, text: str) -> None:
    outcome = _call(runtime, name)
    assert outcome.duration_ms < 2000, outcome.result.text  # not stopped by the 5 s deadline
    assert outcome.result.is_error
    assert outcome.result.text.startswith(text), outcome.result.text
    assert "never settled" not in outcome.result.text
    assert [d.code for d in outcome.diagnostics] == ["RUN013"]


# -- the MCP response --------------------------------------------------------------------------


def test_mcp_responses_stay_valid_utf8_and_bounded(skill: Path, tmp_path: Path) -> None:
    with serve(skill, benign_skill(tmp_path), state=tmp_path / "state") as served:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "surrogates", "arguments": {}}}
        r = httpx.post(served.url, json=body, headers=ACCEPT, timeout=60)
        assert r.status_code == 200
        result = json.loads(r.content.decode("utf-8"))["result"]  # strict UTF-8
        assert result["content"] == SURROGATE_RESULT["content"]
        assert result["structuredContent"] == SURROGATE_RESULT["structuredContent"]
        assert result["_meta"]["m"] == "\ufffd"
        assert result["_meta"]["skillc/diagnostics"][0]["code"] == "RUN042"

        raw = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"s":"\\ud800"}}}'
        r = httpx.post(served.url, content=raw, headers=ACCEPT, timeout=60)
        assert r.status_code == 400  # the SDK refuses a lone surrogate in the request: a 400, never a 500
        r.content.decode("utf-8")

        deep = served.call("deepStructured", {"n": 10_000})
        assert deep.status == 200
        assert (
            deep.text
            == "The result of deepStructured is too deeply nested: arrays/objects nested 10002 deep (limit 64)."
        )

        args = served.call("echo", _nested_args(100))
        assert args.status == 200
        assert args.text == ("the arguments of echo are too deeply nested: arrays/objects nested 65+ deep (limit 64).")
        assert served.call("ping").text == "pong"


def test_mcp_arguments_10000_deep_are_not_a_500(skill: Path, tmp_path: Path) -> None:
    with serve(skill, state=tmp_path / "state") as served:
        args = '{"a":' * 10_000 + "1" + "}" * 10_000
        raw = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":' + args + "}}"
        r = httpx.post(served.url, content=raw.encode(), headers=ACCEPT, timeout=60)
        assert r.status_code < 500, r.text[:300]
        body = r.json()
        if "result" in body:
            text = body["result"]["content"][0]["text"]
            assert text.startswith("the arguments of echo are too deeply nested"), text
        else:
            assert body["error"]["code"] in (-32700, -32600, -32602), body
        assert served.call("echo").text == "ok"


# -- (c) bad command-line input ----------------------------------------------------------------


def _usage(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.output.splitlines()[-1] == message, result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["serve", str(COFFEE), "--width", "0"],
            "Error: Invalid value for '--width': 0 is not in the range 1<=x<=10000.",
        ),
        (
            ["serve", str(COFFEE), "--width", "-5"],
            "Error: Invalid value for '--width': -5 is not in the range 1<=x<=10000.",
        ),
        (
            ["serve", str(COFFEE), "--port", "70000"],
            "Error: Invalid value for '--port': 70000 is not in the range 0<=x<=65535.",
        ),
        (
            ["serve", str(COFFEE), "--timeout", "0"],
            "Error: Invalid value for '--timeout': 0.0 is not in the range 0<x<=86400.",
        ),
        (
            ["call", str(COFFEE), "searchDrinks", "--timeout", "-1"],
            "Error: Invalid value for '--timeout': -1.0 is not in the range 0<x<=86400.",
        ),
        (
            ["build", str(COFFEE), "--viewport", "0:dark"],
            "Error: Invalid value for '--viewport': '0:dark': width: Input should be greater than or equal to 1",
        ),
        (
            ["build", str(COFFEE), "--viewport", "99999"],
            "Error: Invalid value for '--viewport': '99999': width: Input should be less than or equal to 10000",
        ),
        (
            ["build", str(COFFEE), "--viewport", "375:blue"],
            "Error: Invalid value for '--viewport': viewport '375:blue': expected WIDTH[xHEIGHT][:light|dark], "
            "e.g. 414:dark",
        ),
        (
            ["call", str(COFFEE), "searchDrinks", "--args", '{"a": 1,}'],
            "skillc: error: --args is not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 9 (char 8)",
        ),
        (
            ["call", str(COFFEE), "searchDrinks", "--args", "[1"],
            "skillc: error: --args is not valid JSON: Expecting ',' delimiter: line 1 column 3 (char 2)",
        ),
    ],
)
def test_bad_command_line_input_is_one_line(args: list[str], message: str) -> None:
    _usage(args, message)


def test_state_dir_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("")
    _usage(
        ["call", str(COFFEE), "searchDrinks", "--state-dir", str(f)],
        f"Error: Invalid value for '--state-dir': Directory '{f}' is a file.",
    )


FLOWS = {
    "unknown-step-key": (
        '{"steps": [\n  {"call": "searchDrinks", "argumnts": {}}\n]}',
        "2:28: error[RUN043]: flow script /steps/0/argumnts: call step: unknown key 'argumnts'",
    ),
    "wrong-type": (
        '{"steps": [{"call": 5}]}',
        "1:21: error[RUN043]: flow script /steps/0/call: call step: Input should be a valid string",
    ),
    "no-kind": (
        '{"steps": [{"cal": "x"}]}',
        "1:12: error[RUN043]: flow script /steps/0: a step needs exactly one of call, tap, follow, expire, wait, visibility "
        "(none of them)",
    ),
    "two-kinds": (
        '{"steps": [{"call": "x", "expire": "y"}]}',
        "1:12: error[RUN043]: flow script /steps/0: a step needs exactly one of call, tap, follow, expire, wait, visibility "
        "(several of them)",
    ),
    "unknown-top-key": (
        '{"steps": [], "stepz": []}',
        "1:15: error[RUN043]: flow script /stepz: unknown key 'stepz' (expected steps, description)",
    ),
    "steps-not-array": ('{"steps": {}}', "1:11: error[RUN043]: flow script /steps: steps must be an array"),
    "tap-bad-selector": (
        '{"steps": [{"tap": {"handler": 1}}]}',
        "1:32: error[RUN043]: flow script /steps/0/tap/handler: tap step: Input should be a valid string",
    ),
    "not-json": ('{"steps": [', "1:12: error[JSON001]: unexpected end of file, expected a value"),
}


@pytest.mark.parametrize(("text", "first"), list(FLOWS.values()), ids=list(FLOWS))
def test_a_bad_flow_script_is_a_diagnostic_at_its_position(tmp_path: Path, text: str, first: str) -> None:
    script = tmp_path / "flow.json"
    script.write_text(text)
    result = CliRunner().invoke(main, ["run", str(COFFEE), "--script", str(script)])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{script}:{first}", result.output
    assert lines[-1] == f"skillc: error: {script} is not a usable flow script"
    assert "pydantic" not in result.output and "Traceback" not in result.output


def test_a_flow_script_nested_too_deep(tmp_path: Path) -> None:
    script = tmp_path / "flow.json"
    script.write_text('{"steps": [{"call": "echo", "arguments": ' + '{"a":' * 10_000 + "1" + "}" * 10_001 + "]}")
    result = CliRunner().invoke(main, ["run", str(COFFEE), "--script", str(script)])
    assert result.exit_code == 2, result.output
    assert "error[JSON" in result.output.splitlines()[0], result.output
    assert result.output.splitlines()[-1] == f"skillc: error: {script} is not a usable flow script"


# -- the last nets: the MCP result and the CLI print, whatever reaches them ---------------------


def test_wire_safe_cleans_a_tool_result_that_reaches_it_with_surrogates() -> None:
    from mcp_types import CallToolResult, TextContent

    from skillc.server.results import wire_safe

    dirty = CallToolResult(content=[TextContent(text="a\ud800")], structured_content={"k\udc00": ["\udbff"]})
    fixed = wire_safe(dirty)
    wire = json.loads(fixed.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))
    assert wire["content"] == [{"type": "text", "text": "a\ufffd"}]
    assert wire["structuredContent"] == {"k\ufffd": ["\ufffd"]}
    assert wire["_meta"]["skillc/diagnostics"][0]["code"] == "RUN042"
    assert wire["_meta"]["skillc/diagnostics"][0]["message"] == (
        "3 lone UTF-16 surrogates in the tool result replaced by U+FFFD"
    )
    clean_result = CallToolResult(content=[TextContent(text="fine")])
    assert wire_safe(clean_result) is clean_result


def test_the_cli_print_replaces_lone_surrogates() -> None:
    import click

    from skillc.cli import _echo

    @click.command()
    def say() -> None:
        _echo("a\ud800b")

    result = CliRunner().invoke(say, [])
    assert result.exit_code == 0, result.exception
    assert result.stdout_bytes == "a\ufffdb\n".encode()
