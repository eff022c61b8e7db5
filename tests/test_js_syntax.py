"""JavaScript that does not compile is a compile error (JS007), and at run time it breaks only what
requires it: the other APIs and cards of the skill still work, a failed index.js is one clear
error (which file, line, column), and `serve` does not advertise the tools of a skill whose index.js
cannot load (SRV004).

Fixtures: tests/fixtures/runtime-syntax/helper-skill (a helper, a card and an unrequired draft
that do not compile, and a cloudfunctions/ folder of Node code) and broken-index-skill.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.check import check_skill
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.sandbox import native, syntax
from skillc.runtime.sandbox.syntax import syntax_errors
from skillc.server.runner import ServeOptions, prepare

from .conftest import FIXTURES

HELPER = FIXTURES / "runtime-syntax" / "helper-skill"
BROKEN_INDEX = FIXTURES / "runtime-syntax" / "broken-index-skill"
EOF_MESSAGE = "unexpected end of the file: a bracket, brace, parenthesis or string is still open"


def where(d: Diagnostic) -> tuple[str, str | None, int | None, int | None, str]:
    return (d.code, d.file, d.span.line if d.span else None, d.span.column if d.span else None, d.message)


# -- the compile helper -------------------------------------------------------------------------

CASES = [
    ("var x = ;\n", 1, 9, "SyntaxError: unexpected token in expression: ';'"),
    ("const a = 1\nconst b = a +* 2\n", 2, 14, "SyntaxError: unexpected token in expression: '*'"),
    ("const a = 1\nlet a = 2\n", 2, 7, "SyntaxError: invalid redefinition of lexical identifier"),
    ("exports.f = function () {\n  return [1, 2\n}\n", 3, 1, "SyntaxError: Unexpected token '}'"),
    ("exports.f = function () {\n  return [1, 2]\n", 2, 16, f"SyntaxError: {EOF_MESSAGE}"),
    ("const s = 'abc\n", 1, 11, "SyntaxError: unexpected end of string"),
    ("import x from './x'\n", 1, 8, "SyntaxError: Unexpected identifier 'x'"),
]


@pytest.mark.parametrize(("text", "line", "column", "headline"), CASES)
def test_a_syntax_error_is_placed_in_the_file(text: str, line: int, column: int, headline: str) -> None:
    [d] = syntax_errors("lib/a.js", text)
    assert where(d) == ("JS007", "lib/a.js", line, column, f"lib/a.js does not compile: {headline}")
    assert d.severity == "error"
    assert d.hint == "every API and card that requires this file fails to load until it compiles"


@pytest.mark.parametrize(
    "text",
    [
        "module.exports = async function () { return { content: [] } }\n",
        "return\n",  # a module body may return at its top level, as in WeChat and Node
        "const s = 'a\\u0000b'; exports.s = s\n",
        "exports.n = 1 // no newline at the end",
        "",
    ],
)
def test_a_module_body_that_compiles_has_no_error(text: str) -> None:
    assert syntax_errors("lib/a.js", text) == []


def test_a_file_that_closes_its_wrapper_is_refused_and_never_runs() -> None:
    text = "}); globalThis.ran = 1; (function () {\n"
    [d] = syntax_errors("lib/escape.js", text)
    assert where(d) == (
        "JS007",
        "lib/escape.js",
        1,
        1,
        "lib/escape.js does not compile as a module: it closes the function it is compiled into "
        "(an unmatched '}' at its top level)",
    )


def test_compiling_runs_nothing() -> None:
    # An error thrown at the top level would only appear if the file ran.
    assert syntax_errors("lib/a.js", "throw new Error('ran')\n") == []


def test_without_the_native_binding_the_bare_context_gives_the_same_places(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "self_check", lambda: native.SelfCheck(False, "test"))
    for text, line, column, headline in CASES:
        [d] = syntax_errors("lib/a.js", text)
        assert where(d) == ("JS007", "lib/a.js", line, column, f"lib/a.js does not compile: {headline}")


# -- skillc check -------------------------------------------------------------------------------


def test_check_reports_each_skill_file_that_does_not_compile() -> None:
    report = check_skill(HELPER)
    found = [where(d) for d in report.diagnostics if d.code == "JS007"]
    assert found == [
        ("JS007", "apis/draft.js", 4, 1, "apis/draft.js does not compile: SyntaxError: Unexpected token '}'"),
        (
            "JS007",
            "components/broken-card/index.js",
            8,
            5,
            "components/broken-card/index.js does not compile: SyntaxError: Unexpected token '}'",
        ),
        (
            "JS007",
            "lib/money.js",
            3,
            34,
            "lib/money.js does not compile: SyntaxError: unexpected token in expression: '}'",
        ),
    ]
    # apis/draft.js is required by nothing, yet WeChat's upload compiles it: an error all the same,
    # with the hint that says so. cloudfunctions/ (Node code for WeChat's cloud) is not compiled.
    [draft] = [d for d in report.diagnostics if d.file == "apis/draft.js"]
    assert draft.hint is not None and draft.hint.startswith("nothing requires this file, but WeChat's upload")
    assert [(d.code, d.file) for d in report.diagnostics if d.code in ("SKL011", "SKL012")] == [
        ("SKL011", None),
        ("SKL012", "cloudfunctions"),
    ]
    assert not any(d.file is not None and d.file.startswith("cloudfunctions/") for d in report.diagnostics)


def test_check_reports_a_broken_index_js() -> None:
    report = check_skill(BROKEN_INDEX)
    assert [where(d) for d in report.diagnostics if d.severity == "error"] == [
        ("JS007", "index.js", 4, 31, f"index.js does not compile: SyntaxError: {EOF_MESSAGE}")
    ]


# -- run time -----------------------------------------------------------------------------------


class Host:
    def __init__(self, skill: Path, state: Path) -> None:
        pkg = load_skill(skill, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        ids = itertools.count(1)
        self.cards = CardHost(self.runtime, card_ids=lambda: f"card-{next(ids)}")
        self.loop = asyncio.new_event_loop()
        self.ctx = self.runtime.context(session_id="s1")

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.run(self.cards.close())
        self.runtime.close()
        self.loop.close()


@pytest.fixture
def helper(tmp_path: Path) -> Iterator[Host]:
    host = Host(HELPER, tmp_path)
    yield host
    host.close()


def test_an_api_that_requires_nothing_broken_works(helper: Host) -> None:
    outcome = helper.runtime.call_blocking("greet", {"name": "Ada"})
    assert not outcome.result.is_error
    assert outcome.result.text == "hello Ada"
    assert outcome.diagnostics == []


def test_requiring_a_broken_file_throws_its_syntax_error_at_its_place(helper: Host) -> None:
    outcome = helper.runtime.call_blocking("total", {})
    assert outcome.result.is_error
    message = "total threw SyntaxError: unexpected token in expression: '}' at lib/money.js:3"
    assert [where(d) for d in outcome.diagnostics] == [("RUN013", "lib/money.js", 3, 34, message)]
    [entry] = outcome.console
    # the file's place, then the skill's frame that required it; none of the loader's frames
    assert entry.text.splitlines() == [
        "SyntaxError: unexpected token in expression: '}'",
        "    at lib/money.js:3:34",
        "    at total (apis/total.js:3:19)",
    ]


def test_a_card_that_does_not_compile_falls_back_with_one_error(helper: Host) -> None:
    outcome = helper.run(helper.cards.call("showBroken", {}, helper.ctx))
    assert outcome.card is None and outcome.fallback is not None
    message = (
        "components/broken-card/index.js failed to load: SyntaxError: Unexpected token '}' "
        "(at components/broken-card/index.js:8)"
    )
    # one error: no follow-on TypeError from a detached lifetime on an instance that never existed
    assert [where(d) for d in outcome.diagnostics] == [("CMPVM001", "components/broken-card/index.js", 8, 5, message)]
    assert [c.text for c in outcome.console] == []


def test_the_other_card_of_the_skill_renders(helper: Host) -> None:
    outcome = helper.run(helper.cards.call("showOk", {}, helper.ctx))
    assert outcome.card is not None
    assert [n.props["text"] for n in outcome.card.document.root.walk() if n.type == "#text"] == ["n = 2"]


def test_a_broken_index_js_is_one_clear_load_error(tmp_path: Path) -> None:
    host = Host(BROKEN_INDEX, tmp_path)
    try:
        outcome = host.runtime.call_blocking("ping", {})
    finally:
        host.close()
    assert outcome.result.is_error
    message = f"index.js failed to load, so ping could not run: SyntaxError: {EOF_MESSAGE} at index.js:4"
    assert [where(d) for d in outcome.diagnostics] == [("RUN001", "index.js", 4, 31, message)]
    assert outcome.result.text == message + "."


# -- serve --------------------------------------------------------------------------------------


def test_serve_does_not_advertise_a_skill_whose_index_js_cannot_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="skillc.server"):
        prepared = prepare(ServeOptions(paths=(BROKEN_INDEX, HELPER), runtime=RuntimeConfig(state_dir=tmp_path)))
    # the server log says why
    assert [r.getMessage() for r in caplog.records if r.name == "skillc.server"] == [
        f"broken-index-skill is not served: index.js failed to load (index.js:4): SyntaxError: {EOF_MESSAGE}; "
        "none of its tools are advertised"
    ]
    server = prepared.server
    try:
        tools = asyncio.run(server.list_tools(None, None))  # type: ignore[arg-type]
        assert sorted(t.name for t in tools.tools) == [
            "greet",
            "showBroken",
            "showOk",
            "skillc_card_event",
            "skillc_card_view",
            "total",
            "ui_control__act",
            "ui_control__find",
            "ui_control__snapshot",
            "ui_control__wait_for",
        ]
        assert [s.package.name for s in server.catalogue.skills] == ["helper-skill"]
        [refusal] = [d for d in prepared.diagnostics if d.code == "SRV004"]
        assert where(refusal) == (
            "SRV004",
            f"{BROKEN_INDEX}/index.js",
            4,
            31,
            f"broken-index-skill is not served: index.js failed to load (index.js:4): SyntaxError: {EOF_MESSAGE}; "
            "none of its tools are advertised",
        )
        assert refusal.hint == f"run `skillc check {BROKEN_INDEX}`"
    finally:
        asyncio.run(server.close())


# -- the commands -------------------------------------------------------------------------------


def test_render_and_run_show_one_error_for_a_card_that_does_not_compile(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc.cli import main

    result_file = tmp_path / "result.json"
    result_file.write_text('{"content": [{"type": "text", "text": "x"}], "structuredContent": {"n": 3}}')
    flow = tmp_path / "flow.json"
    flow.write_text('{"steps": [{"call": "showBroken"}, {"call": "showOk"}]}')
    error = (
        "error[CMPVM001]: components/broken-card/index.js failed to load: SyntaxError: Unexpected token '}' "
        "(at components/broken-card/index.js:8)"
    )
    render = CliRunner().invoke(main, ["render", str(HELPER), "broken-card", "--result", str(result_file)])
    run = CliRunner().invoke(main, ["run", str(HELPER), "--script", str(flow), "--state-dir", str(tmp_path)])
    for out in (render.output, run.output):
        assert f"components/broken-card/index.js:8:5: {error}" in out
        assert out.count("error[") == 1  # no follow-on detached TypeError
    assert render.exit_code == 1
    assert 'text 0.0 "n = 2"' in run.output  # the skill's other card renders
