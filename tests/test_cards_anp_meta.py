"""What a card receives of an API's ANP metadata and ``_meta``, and that the model receives none.

AI mode gives a card the result through the Result notification, ``{result: {isError, content,
structuredContent, _meta}}`` (notes/ai-mode-spec.md section 5), with ``_meta`` for the card only
(section 3). tests/fixtures/cards/anp-skill declares ``_meta.anp``, ``_meta.channel`` and
``x_anp`` in mcp.json (values starting "d-") and returns ``_meta.anp`` and ``_meta.trace``
(values starting "a-"); its card prints the result's keys and those values. So:

- the card gets the result's ``_meta`` as it was returned, ``anp`` included, and exactly the four
  keys of the spec;
- the declaration's ``_meta`` and ``x_anp`` stay with the host (risk pins): neither the card nor
  the model sees them;
- a result that carries ``x_anp`` beside ``_meta`` (not a result key) reaches no one, and says
  so (RUN080) instead of dropping it silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import FIXTURES, rpc

SKILL = FIXTURES / "cards" / "anp-skill"
RESULT_META = {"anp": {"did": "did:wba:a-agent-7", "receipt": "a-receipt-88"}, "trace": "a-trace-99"}
CARD_TEXTS = ["p-1", "isError,content,structuredContent,_meta", "a-receipt-88", "a-trace-99", "did:wba:a-agent-7"]
RUN080 = (
    "RUN080",
    "warning",
    "showPassLegacy returned `x_anp`, which an atomic API result does not have (isError, content, "
    "structuredContent, _meta, handoff, apiCalls): neither the model nor the card receives it",
    "return it as _meta.anp: the card receives the result's _meta, the model never does",
)


def card_only(value: Any) -> list[str]:
    """The values that only a card may see ("a-") or no one but the host ("d-")."""
    text = json.dumps(value, ensure_ascii=False)
    return sorted({m for m in ("a-agent", "a-receipt", "a-trace", "a-legacy", "d-decl") if m in text})


def texts(node: dict[str, Any]) -> list[str]:
    found = [node["props"]["text"]] if node["type"] == "#text" else []
    for child in node.get("children") or []:
        found += texts(child)
    return found


def diag_rows(diagnostics: list[dict[str, Any]]) -> list[tuple[str, str, str, str | None]]:
    return [(d["code"], d["severity"], d["message"], d.get("hint")) for d in diagnostics]


def run_flow(tmp_path: Path, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    script = tmp_path / "flow.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    done = CliRunner().invoke(main, ["run", str(SKILL), "--script", str(script), "--json"])
    assert done.exit_code == 0, done.output
    records: list[dict[str, Any]] = json.loads(done.output)
    return records


def call(tmp_path: Path, api: str) -> dict[str, Any]:
    args = ["call", str(SKILL), api, "--args", '{"passId": "p-1"}', "--state-dir", str(tmp_path), "--json"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    outcome: dict[str, Any] = json.loads(done.output)
    return outcome


def test_skillc_run_the_card_gets_the_result_meta_with_anp_and_the_spec_keys(tmp_path: Path) -> None:
    [step] = run_flow(tmp_path, [{"call": "showPass", "arguments": {"passId": "p-1"}}])
    assert texts(step["cards"][0]["document"]["root"]) == CARD_TEXTS
    result = step["api"][0]["result"]
    assert result["_meta"] == RESULT_META
    # What the model reads: content and structuredContent, with nothing of either _meta.
    assert (result["content"], result["structuredContent"]) == (
        [{"type": "text", "text": "pass p-1"}],
        {"passId": "p-1"},
    )
    assert card_only([result["content"], result["structuredContent"]]) == []
    # The declaration's _meta.anp, _meta.channel and x_anp reach neither the card nor the result.
    assert "d-decl" not in json.dumps(step, ensure_ascii=False)
    assert step["diagnostics"] == []


def test_skillc_run_x_anp_beside_the_result_reaches_no_one_and_says_so(tmp_path: Path) -> None:
    [step] = run_flow(tmp_path, [{"call": "showPassLegacy", "arguments": {"passId": "p-2"}}])
    assert texts(step["cards"][0]["document"]["root"]) == [
        "p-2",
        "isError,content,structuredContent,_meta",
        "none",
        "none",
        "none",
    ]
    assert "a-legacy" not in json.dumps(step["api"][0]["result"], ensure_ascii=False)
    assert diag_rows(step["diagnostics"]) == [RUN080]


def test_skillc_call_shows_the_card_meta_apart_from_what_the_model_reads(tmp_path: Path) -> None:
    outcome = call(tmp_path, "showPass")
    result = outcome["result"]
    assert result == {
        "isError": False,
        "content": [{"type": "text", "text": "pass p-1"}],
        "structuredContent": {"passId": "p-1"},
        "_meta": RESULT_META,
    }
    assert outcome["risk"] == "L0"  # pinned by the declaration's _meta.anp.risk
    assert outcome["diagnostics"] == []


def test_skillc_call_reports_x_anp_beside_the_result(tmp_path: Path) -> None:
    outcome = call(tmp_path, "showPassLegacy")
    assert outcome["result"] == {
        "isError": False,
        "content": [{"type": "text", "text": "pass p-1"}],
        "structuredContent": {"passId": "p-1"},
    }
    assert diag_rows(outcome["diagnostics"]) == [RUN080]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("anp-state")
    with ServeHandle.start(ServeOptions(paths=(SKILL,), port=0, runtime=RuntimeConfig(state_dir=state))) as handle:
        yield handle


def test_serve_the_card_shows_the_result_meta_and_the_model_sees_none(server: ServeHandle) -> None:
    result = rpc(server.url, "tools/call", {"name": "showPass", "arguments": {"passId": "p-1"}})
    assert result["isError"] is False
    assert card_only({k: v for k, v in result.items() if k != "_meta"}) == []
    meta = result["_meta"]
    assert {k: meta[k] for k in RESULT_META} == RESULT_META
    assert texts(meta["skillc/card"]["document"]["root"]) == CARD_TEXTS
    assert "d-decl" not in json.dumps(result, ensure_ascii=False)


def test_serve_tools_list_keeps_the_declared_anp_from_the_model(server: ServeHandle) -> None:
    tools = {t["name"]: t for t in rpc(server.url, "tools/list", {})["tools"]}
    assert card_only(tools["showPass"]) == []
    assert tools["showPass"]["_meta"]["skillc/risk"] == "L0"
