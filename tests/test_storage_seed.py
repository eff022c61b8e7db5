"""`--storage FILE`: storage a skill expects, seeded into the caller's scope before the first call.

Published skills answer with data only once a key (`mp_skills_preview_mode`) is set in storage;
the fixture (tests/fixtures/storage-seed/preview-skill) does the same, and its card reads storage
too. call, run, render --result, serve and debug take the flag.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp.client import Client

from skillc.cli import main
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.host.storage import Storage, load_storage_seed
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import FIXTURES

SKILL = FIXTURES / "storage-seed" / "preview-skill"
SEED = {"mp_skills_preview_mode": True, "city": "杭州", "theme": {"badge": "预览"}}


@pytest.fixture
def seed_file(tmp_path: Path) -> Path:
    path = tmp_path / "storage.json"
    path.write_text(json.dumps(SEED, ensure_ascii=False), encoding="utf-8")
    return path


def _texts(node: dict[str, Any]) -> list[str]:
    out = [node["props"]["text"]] if node["type"] == "#text" and "text" in node.get("props", {}) else []
    for child in node.get("children", []):
        out += _texts(child)
    return out


def test_call_without_the_key_gets_no_data(tmp_path: Path) -> None:
    args = ["call", str(SKILL), "listStores", "--state-dir", str(tmp_path), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)["result"]
    assert answer["content"][0]["text"] == "预览模式未开启，暂无门店数据"
    assert "structuredContent" not in answer


def test_call_with_storage_runs_the_preview_mode(tmp_path: Path, seed_file: Path) -> None:
    args = ["call", str(SKILL), "listStores", "--storage", str(seed_file), "--state-dir", str(tmp_path), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    structured = json.loads(result.output)["result"]["structuredContent"]
    # A string value stays a string, a boolean a boolean: stored as wx.setStorageSync stores them.
    assert structured == {
        "city": "杭州",
        "stores": [{"id": "s1", "name": "滨江大道店"}, {"id": "s2", "name": "陆家嘴店"}],
    }


def test_run_seeds_the_scope_the_card_reads_too(tmp_path: Path, seed_file: Path) -> None:
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps({"steps": [{"call": "listStores", "arguments": {}}]}), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(SKILL), "--script", str(flow), "--storage", str(seed_file), "--json"])
    assert result.exit_code == 0, result.output
    (step,) = json.loads(result.output)
    (card,) = step["cards"]
    # The card's own wx.getStorageSync('theme') read the seeded object.
    assert _texts(card["document"]["root"]) == ["杭州", "预览", "滨江大道店", "陆家嘴店"]


def test_render_result_seeds_the_card_scope(tmp_path: Path, seed_file: Path) -> None:
    given = tmp_path / "r.json"
    given.write_text(json.dumps({"content": [{"type": "text", "text": "x"}], "structuredContent": {"city": "苏州"}}))
    base = ["render", str(SKILL), "store-list", "--result", str(given), "--backend", "json"]
    plain = CliRunner().invoke(main, base)
    seeded = CliRunner().invoke(main, [*base, "--storage", str(seed_file)])
    assert plain.exit_code == 0 and seeded.exit_code == 0, seeded.output
    assert _texts(json.loads(plain.stdout)["root"]) == ["苏州"]
    assert _texts(json.loads(seeded.stdout)["root"]) == ["苏州", "预览"]


def test_serve_seeds_each_callers_scope(tmp_path: Path) -> None:
    options = ServeOptions(paths=(SKILL,), port=0, runtime=RuntimeConfig(state_dir=tmp_path, storage_seed=SEED))

    async def go(url: str) -> Any:
        async with Client(url, mode="legacy") as client:
            return await client.call_tool("listStores", {})

    with ServeHandle.start(options) as handle:
        result = asyncio.run(go(handle.url))
    assert result.structured_content["city"] == "杭州"


def test_the_seed_is_written_once_per_scope_and_then_left_to_the_skill(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "state.sqlite3", seed={"n": 1})
    first = storage.scope("did:u", "did:m", "skill")
    assert first.get("n") == "1"
    first.set("n", "2")  # what the skill wrote since
    assert storage.scope("did:u", "did:m", "skill").get("n") == "2"
    assert storage.scope("did:other", "did:m", "skill").get("n") == "1"


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('{"a": 1,}', 1, 8, None),  # JSON syntax: the JSON code at its position
        ('["mp_skills_preview_mode"]', 1, 1, "storage /: expected an object of key -> value"),
        ('{\n  "big": "' + "x" * (1 << 20) + '"\n}', 2, 3, "storage key 'big': 1048581 bytes, over the 1048576"),
    ],
)
def test_a_bad_storage_file_is_a_usage_error_at_its_line(
    tmp_path: Path, text: str, line: int, column: int, message: str | None
) -> None:
    seed, problems = load_storage_seed(text, "s.json")
    assert seed is None
    first = problems[0]
    assert (first.file, first.span and first.span.line, first.span and first.span.column) == ("s.json", line, column)
    if message is not None:
        assert first.code == "RUN105" and first.message.startswith(message)
    bad = tmp_path / "s.json"
    bad.write_text(text, encoding="utf-8")
    for command in (["call", str(SKILL), "listStores"], ["debug", str(SKILL), "--no-browser"]):
        result = CliRunner().invoke(main, [*command, "--storage", str(bad)])
        assert result.exit_code == 2, result.output
        assert f"s.json:{line}:{column}: error[" in result.stderr
        assert result.stderr.rstrip().splitlines()[-1] == f"skillc: error: {bad} is not a usable storage file"
