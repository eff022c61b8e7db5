"""The gate judges, the renderer draws: a card whose only defects are check's findings (WXSS the
official gate refuses, a method call in a binding) is drawn by render, build, run, serve and the
debug console, with the findings beside it; only a template that does not parse is refused.

The fixture (tests/fixtures/gate-draws/shop-skill) is written the way published skills are.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp.client import Client
from starlette.applications import Starlette
from starlette.testclient import TestClient

from skillc.cli import main
from skillc.diagnostics import CATALOGUE, Diagnostic, render_blockers
from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.console_feed import ConsoleFeed
from skillc.server.debugger.console_page import ConsolePage
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import FIXTURES

SHOP = FIXTURES / "gate-draws" / "shop-skill"
STATUS_WXSS = "components/store-status/index.wxss"
STATUS_WXML = "components/store-status/index.wxml"
BROKEN_WXML = "components/broken-card/index.wxml"
RESULT = {
    "content": [{"type": "text", "text": "接下来为用户展示门店状态卡片"}],
    "structuredContent": {"name": "滨江大道店", "sales": 2000, "distance": "1.2km", "tags": ["营业中", "可外送"]},
}
# What check finds in the store card: (code, severity, file, line, column). Errors all, but none
# leaves the card without a tree.
FINDINGS = [
    ("EXPR006", "warning", STATUS_WXML, 10, 29),
    ("WXSS007", "error", STATUS_WXSS, 1, 25),
    ("WXSS019", "warning", STATUS_WXSS, 1, 43),
    ("WXSS007", "error", STATUS_WXSS, 3, 25),
    ("WXSS007", "error", STATUS_WXSS, 5, 24),
    ("WXSS007", "error", STATUS_WXSS, 7, 14),
]
BLOCKERS = [("WXML004", 1, 1), ("WXML007", 2, 23), ("WXML008", 3, 1)]


def _where(d: dict[str, Any]) -> tuple[str, str, str, int, int]:
    return (d["code"], d["severity"], d["file"], d["span"]["line"], d["span"]["column"])


def _texts(node: dict[str, Any]) -> list[str]:
    out = [node["props"]["text"]] if node["type"] == "#text" and "text" in node.get("props", {}) else []
    for child in node.get("children", []):
        out += _texts(child)
    return out


def _located(stderr: str, file: str, line: int, column: int, code: str) -> bool:
    return f"{file}:{line}:{column}: " in stderr and f"[{code}]" in stderr


def test_check_is_the_gate(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(SHOP), "--format", "json"])
    assert result.exit_code == 1
    found = [_where(d) for d in json.loads(result.output)["units"][0]["diagnostics"]]
    assert [f for f in found if f[2] != BROKEN_WXML] == FINDINGS
    assert [(c, ln, col) for c, _, f, ln, col in found if f == BROKEN_WXML] == BLOCKERS


def test_only_a_template_that_does_not_parse_blocks_the_card() -> None:
    blocking = {code for code, info in CATALOGUE.items() if info.blocks_render}
    assert {f"WXML{n:03d}" for n in range(1, 14)} <= blocking
    assert not {"WXSS007", "WXSS008", "WXSS006", "TPL001", "TPL008", "EXPR006", "JS004", "CON001"} & blocking
    gate = Diagnostic.make("WXSS007", "'gap' is not supported in cards", file=STATUS_WXSS)
    parse = Diagnostic.make("WXML004", "<view> is never closed", file=BROKEN_WXML)
    assert render_blockers([gate, parse]) == [parse]
    # A blocking code demoted to a warning (as a caller may) no longer blocks.
    assert render_blockers([parse.model_copy(update={"severity": "warning"})]) == []


@pytest.mark.parametrize("source", ["--result", "--data"])
def test_render_draws_the_card_and_prints_the_findings(tmp_path: Path, source: str) -> None:
    given = tmp_path / "in.json"
    given.write_text(json.dumps(RESULT if source == "--result" else RESULT["structuredContent"]), encoding="utf-8")
    args = ["render", str(SHOP), "store-status", source, str(given), "--backend", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    texts = _texts(json.loads(result.stdout)["root"])
    assert "滨江大道店" in texts and "月售 2000" in texts and "1.2km" in texts and "营业中" in texts
    for code, _severity, file, line, column in FINDINGS:
        assert _located(result.stderr, f"{SHOP}/{file}", line, column, code), (code, line, column)


def test_render_refuses_a_template_that_does_not_parse(tmp_path: Path) -> None:
    given = tmp_path / "in.json"
    given.write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(main, ["render", str(SHOP), "broken-card", "--data", str(given)])
    assert result.exit_code == 1
    assert result.stdout == ""
    for code, line, column in BLOCKERS:
        assert _located(result.stderr, f"{SHOP}/{BROKEN_WXML}", line, column, code)
    assert result.stderr.rstrip().splitlines()[-1] == (
        "skillc: error: components/broken-card/index.wxml does not parse, so there is no card to draw"
    )


def test_build_writes_the_drawn_card_and_exits_1_for_its_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(SHOP), "-o", str(tmp_path), "--backend", "json"])
    # Like a compiler that emits despite type errors: the outputs are written, the status says errors.
    assert result.exit_code == 1
    built = tmp_path / "shop-skill" / "components"
    assert (built / "store-status" / "template.json").is_file()
    assert (built / "store-status" / "stylesheet.json").is_file()
    assert not (built / "broken-card").exists()
    assert "1 compiled, 0 up to date, 1 failed" in result.stdout


def test_run_draws_the_card_and_reports_the_findings_once(tmp_path: Path) -> None:
    flow = tmp_path / "flow.json"
    steps = [{"call": "storeStatus", "arguments": {}}, {"call": "storeStatus", "arguments": {}}]
    flow.write_text(json.dumps({"steps": steps}), "utf-8")
    result = CliRunner().invoke(main, ["run", str(SHOP), "--script", str(flow), "--json"])
    assert result.exit_code == 0, result.output
    first, second = json.loads(result.output)
    assert not first["failed"] and not second["failed"]
    assert len(first["cards"]) == 1 and len(second["cards"]) == 1 and first["fallbacks"] == []
    assert [_where(d) for d in first["findings"]] == FINDINGS
    assert "findings" not in second  # the same component's findings, reported once per flow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(paths=(SHOP,), port=0, runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("state")))
    with ServeHandle.start(options) as handle:
        yield handle


def _call(url: str, name: str) -> Any:
    async def go() -> Any:
        async with Client(url, mode="legacy") as client:
            return await client.call_tool(name, {})

    return asyncio.run(go())


def test_serve_mounts_the_card_with_its_findings_in_meta(served: ServeHandle) -> None:
    result = _call(served.url, "storeStatus")
    meta = result.meta or {}
    assert "skillc/fallback" not in meta
    assert meta["skillc/card"]["document"]["root"]
    found = [_where(d) for d in meta["skillc/diagnostics"]]
    assert sorted(f for f in found if f[2] in (STATUS_WXML, STATUS_WXSS)) == sorted(FINDINGS)


def test_serve_falls_back_only_for_the_template_that_does_not_parse(served: ServeHandle) -> None:
    meta = _call(served.url, "brokenCard").meta or {}
    assert (
        meta["skillc/fallback"]["reason"]
        == "components/broken-card/index cannot be compiled, so brokenCard shows a generic card"
    )
    found = [(d["code"], d["span"]["line"], d["span"]["column"]) for d in meta["skillc/diagnostics"] if "span" in d]
    assert sorted(f for f in found if f[0].startswith("WXML")) == BLOCKERS


def test_the_debug_console_draws_the_card_with_its_findings(served: ServeHandle) -> None:
    server = served.prepared.server
    page = ConsolePage(
        [s.package for s in server.catalogue.skills], cards=server.cards, feed=ConsoleFeed(lambda *_: None)
    )
    with TestClient(Starlette(routes=page.routes())) as client:
        for data in (RESULT["structuredContent"], {}):  # the card's JavaScript, then the template alone
            res = client.post(
                "/__debug/api/render", json={"widgetId": "store-status", "structuredContent": data}
            ).json()
            assert res["ok"] is True, res
            assert "<html" in res["html"].lower()
            codes = [d["code"] for d in res["diagnostics"]]
            assert codes.count("WXSS007") == 4 and "EXPR006" in codes
        broken = client.post("/__debug/api/render", json={"widgetId": "broken-card"}).json()
        assert broken["error"]["code"] == "RENDER_FAILED"
