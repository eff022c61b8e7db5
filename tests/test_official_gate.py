"""The gate on patterns published skills use and WeChat runs: each official rule at its severity,
with no false error where the skill runs.

Fixtures (tests/fixtures/official-gate), one published pattern each:

- ``water-log``: API modules export their handler by name and index.js destructures the require
  (``const { a } = require(...)``, ``{ a: b }``, ``require(...).a``); one module exports two APIs.
- ``note-shelf``: APIs registered in a loop and from ``Object.keys(...)``, handlers made by a
  factory or a wrapper, and one plainly sync handler.
- ``tea-project``: a project whose card @imports a sheet under the subpackage root
  (``skills/_shared/``), and one that reaches beyond it.
- ``clock-cards``: a static card calling timers and the network, a dynamic card using wx.cloud.
- ``step-counter``: an unrequired ``apis/legacy.js`` that does not compile, cloud functions that
  are Node code, and a node:test file.
- ``receipt-skill``: componentPaths without a ``components[]`` entry, one with its folder.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.check import check_path, check_skill
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.frontend.wxss import parse_wxss
from skillc.ir.component import compile_component
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig

from .conftest import FIXTURES

GATE = FIXTURES / "official-gate"
Exact = tuple[str, str, str | None, int | None, int | None, str]  # code, severity, file, line, col, message


def exact(diags: list[Diagnostic], *codes: str) -> list[Exact]:
    return [
        (
            d.code,
            d.severity.value,
            d.file,
            d.span.line if d.span else None,
            d.span.column if d.span else None,
            d.message,
        )
        for d in diags
        if not codes or d.code in codes
    ]


class Host:
    """One skill's API runtime and card host, on an event loop of its own."""

    def __init__(self, skill: Path, state: Path) -> None:
        pkg = load_skill(skill, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        ids = itertools.count(1)
        self.cards = CardHost(self.runtime, card_ids=lambda: f"card-{next(ids)}")
        self.loop = asyncio.new_event_loop()
        self.ctx = self.runtime.context(session_id="s1")

    def card(self, api: str) -> Any:
        return self.loop.run_until_complete(self.cards.call(api, {}, self.ctx))

    def close(self) -> None:
        self.loop.run_until_complete(self.cards.close())
        self.runtime.close()
        self.loop.close()


def host(skill: Path, state: Path) -> Iterator[Host]:
    h = Host(skill, state)
    yield h
    h.close()


# -- 1. destructured requires map outputs to the right API (V009) -------------------------------


def test_destructured_requires_map_each_api_to_its_own_export() -> None:
    report = check_skill(GATE / "water-log")
    # The one key an API returns outside its outputSchema, reported against that API alone; the
    # other APIs' keys (in the same module, or behind require('./apis/cups').listCups) are theirs.
    assert exact(report.diagnostics) == [
        (
            "CON001",
            "error",
            "apis/stats.js",
            16,
            47,
            'resetGoal returns structuredContent key "previousGoalMl", which its outputSchema.properties '
            "does not declare (declared: goalMl)",
        )
    ]


def test_the_destructured_skill_runs_every_api(tmp_path: Path) -> None:
    pkg = load_skill(GATE / "water-log", DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    try:
        texts = [
            runtime.call_blocking(name, args).result.text
            for name, args in (
                ("addWaterRecord", {"ml": 250}),
                ("getWaterStats", {}),
                ("resetGoal", {"goalMl": 2500}),
                ("listCups", {}),
            )
        ]
    finally:
        runtime.close()
    assert texts == [
        "Recorded 250 ml; 250 ml today.",
        "250 ml today.",
        "Daily goal set to 2500 ml.",
        "Saved cups: mug (350 ml), glass (250 ml).",
    ]


# -- 5. registrations in a loop, factory handlers (V007, V002) ------------------------------------


def test_computed_registrations_warn_once_and_only_a_provably_sync_handler_is_an_error() -> None:
    report = check_skill(GATE / "note-shelf")
    assert exact(report.diagnostics) == [
        (
            "JS012",
            "warning",
            "index.js",
            8,
            52,
            'registerAPI is called with a computed name (also at line 9), so whether index.js registers "listNotes", '
            '"addNote", "exportNotes" (declared in mcp.json) could not be verified statically',
        ),
        ("JS004", "error", "index.js", 20, 33, 'handler of API "countNotes" is not async'),
    ]


def test_the_loop_registered_and_factory_made_apis_run(tmp_path: Path) -> None:
    pkg = load_skill(GATE / "note-shelf", DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    try:
        got = {
            name: runtime.call_blocking(name, {"id": "n1", "text": "milk"})
            for name in ("addNote", "listNotes", "exportNotes", "archiveNote", "pinNote", "tagNote")
        }
    finally:
        runtime.close()
    assert {name: (o.result.is_error, o.result.text, o.diagnostics) for name, o in got.items()} == {
        "addNote": (False, "1 notes", []),
        "listNotes": (False, "milk", []),
        "exportNotes": (False, '["milk"]', []),
        "archiveNote": (False, "archived n1", []),
        "pinNote": (False, "pinned n1", []),
        "tagNote": (False, "tagged n1", []),
    }


# -- 2. @import follows require's boundary, the subpackage root (V001) ---------------------------


def test_import_of_a_sheet_under_the_subpackage_root_passes_and_one_beyond_it_is_refused() -> None:
    reports = {r.name: r for r in check_path(GATE / "tea-project", "p")}
    assert exact(reports["app.json"].diagnostics) == []
    [escape] = reports["tea-menu"].diagnostics
    assert exact([escape]) == [
        (
            "WXSS015",
            "error",
            "components/promo-card/index.wxss",
            1,
            9,
            '@import "../../../../styles/app.wxss" escapes the subpackage root skills/',
        )
    ]
    assert escape.hint == "move the shared sheet under the subpackage root skills/ (for example into _shared/)"


def test_the_card_renders_with_the_shared_sheets() -> None:
    pkg = load_skill(GATE / "tea-project" / "skills" / "tea-menu", DiagnosticSink())
    assert pkg is not None
    sink = DiagnosticSink()
    compiled = compile_component(pkg, "tea-card", sink)
    assert compiled is not None and list(sink) == []
    # read once by the package loader, under the relative names that reach them
    assert compiled.style_inputs == (
        "components/tea-card/index.wxss",
        "../_shared/cardTokens.wxss",
        "../_shared/palette.wxss",
    )
    assert compiled.stylesheet is not None


def test_a_missing_shared_sheet_is_missing_not_an_escape() -> None:
    sink = DiagnosticSink()
    pkg = load_skill(GATE / "tea-project" / "skills" / "tea-menu", DiagnosticSink())
    assert pkg is not None
    parse_wxss(
        "@import '../../../_shared/gone.wxss';",
        file="components/tea-card/index.wxss",
        sink=sink,
        load=pkg.sources.get,
        root=pkg.code_root,
    )
    assert exact(list(sink)) == [
        (
            "WXSS013",
            "error",
            "components/tea-card/index.wxss",
            1,
            9,
            '@import "../../../_shared/gone.wxss": ../_shared/gone.wxss does not exist in the skill',
        )
    ]


# -- 3. V021: what a static card's JavaScript may call ------------------------------------------

STATIC = "components/static-clock/index.js"
NOT_STATIC = (
    "is not available in a static card (official rule V021): components/static-clock/index does not declare "
    'permissions["scope.dynamic"]'
)
CLOUD = "wx.cloud is not available in cards, with or without scope.dynamic (official rule V021)"


def test_v021_static_card_calls_and_wx_cloud_are_errors_at_the_call() -> None:
    report = check_skill(GATE / "clock-cards")
    assert exact(report.diagnostics) == [
        ("JS011", "error", "components/live-clock/index.js", 15, 7, CLOUD),
        ("JS011", "error", STATIC, 11, 22, f"setInterval() {NOT_STATIC}"),
        ("JS011", "error", STATIC, 18, 7, f"setTimeout() {NOT_STATIC}"),
        ("JS011", "error", STATIC, 19, 7, f"wx.request() {NOT_STATIC}"),
        ("JS011", "error", STATIC, 20, 7, f"wx.login() {NOT_STATIC}"),
        ("JS011", "error", STATIC, 20, 33, f"wx.checkSession() {NOT_STATIC}"),
        ("JS011", "error", STATIC, 21, 7, CLOUD),
    ]
    hints = {d.hint for d in report.diagnostics if d.file == STATIC and d.message != CLOUD}
    assert hints == {
        'declare it in its components[] entry of mcp.json: "permissions": {"scope.dynamic": {"desc": "..."}}'
    }


@pytest.fixture
def clocks(tmp_path: Path) -> Iterator[Host]:
    yield from host(GATE / "clock-cards", tmp_path)


def test_a_static_card_calling_set_interval_fails_with_a_named_error(clocks: Host) -> None:
    outcome = clocks.card("showStaticClock")
    assert outcome.card is None and outcome.fallback is not None
    assert exact(outcome.diagnostics) == [
        (
            "CMPVM003",
            "error",
            STATIC,
            11,
            22,
            "components/static-clock/index threw in its Result notification handler: Error: setInterval is not "
            'available in a static card: declare permissions["scope.dynamic"] in the component\'s components[] '
            f"entry of mcp.json to give it timers (official rule V021) (at {STATIC}:11)",
        )
    ]


def test_the_dynamic_card_keeps_its_timer(clocks: Host) -> None:
    outcome = clocks.card("showLiveClock")
    assert outcome.card is not None and outcome.diagnostics == []
    assert outcome.card.pending_timers == 1


# -- 4. every JS file compiles, except cloud functions ------------------------------------------


def test_an_unrequired_file_that_does_not_compile_is_an_error_at_its_place() -> None:
    report = check_skill(GATE / "step-counter")
    assert exact(report.diagnostics) == [
        (
            "SKL011",
            "info",
            None,
            None,
            None,
            "2 JavaScript files not reachable from index.js or a component's index.js are not skill code: only "
            "compiled, as WeChat's upload compiles every file: apis/legacy.js, tests/getSteps.test.js",
        ),
        (
            "JS007",
            "error",
            "apis/legacy.js",
            4,
            62,
            "apis/legacy.js does not compile: SyntaxError: Unexpected token ']'",
        ),
        (
            "SKL012",
            "info",
            "cloudfunctions",
            None,
            None,
            "cloudfunctions/ holds cloud functions (2 JavaScript files), Node code deployed to WeChat's cloud on "
            "its own: not compiled or checked as skill code",
        ),
    ]
    assert report.diagnostics[1].hint == (
        "nothing requires this file, but WeChat's upload compiles every JavaScript file of the package "
        "and fails on it: fix it, or move it out of the skill folder"
    )


# -- 5. a componentPath without a components[] entry (V012, V015) --------------------------------


def test_a_component_path_without_an_entry_warns_and_its_folder_is_still_checked() -> None:
    report = check_skill(GATE / "receipt-skill")
    assert exact(report.diagnostics) == [
        (
            "MCP010",
            "warning",
            "mcp.json",
            8,
            41,
            'componentPath "components/receipt/index" has no components[] entry with exactly that path; the card '
            "is still shown, as a static card without relatedPage",
        ),
        ("MCP022", "error", "mcp.json", 15, 41, 'component folder "components/invoice" does not exist'),
        (
            "MCP010",
            "warning",
            "mcp.json",
            15,
            41,
            'componentPath "components/invoice/index" has no components[] entry with exactly that path',
        ),
    ]


def test_the_card_without_an_entry_renders(tmp_path: Path) -> None:
    for h in host(GATE / "receipt-skill", tmp_path):
        outcome = h.card("showReceipt")
        assert outcome.card is not None and outcome.diagnostics == []
        assert outcome.card.data == {"total": "42.00"}
