"""Served tool names match ^[a-zA-Z0-9_-]{1,64}$ (what model APIs accept), stay stable and
distinct, keep the API name in _meta and the title, and `check` warns where a name needs it."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator

import pytest
from mcp.client import Client

from skillc.frontend.tool_names import TOOL_NAME, model_safe_name
from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import FIXTURES
from .test_cli_commands import invoke

MENU = FIXTURES / "tool-names" / "menu-skill"
LONG = "searchTheWholeMenuOfEveryCafeInTheCityByKeywordFlavourPriceAndOpeningHours"


def test_a_valid_name_is_kept_and_others_get_a_stable_distinct_safe_name() -> None:
    assert model_safe_name("searchDrinks") == "searchDrinks"
    assert model_safe_name("a" * 64) == "a" * 64
    names = ["search.drinks", "search drinks", "search/drinks", "支付 订单", "支付订单", LONG, "a" * 65, ""]
    safe = [model_safe_name(n) for n in names]
    assert all(TOOL_NAME.fullmatch(s) for s in safe), safe
    assert len(set(safe)) == len(names)  # names that read alike stay apart
    assert safe[:2] == ["search_drinks_48e81ab4", "search_drinks_eef5bc0c"]  # the same in every process
    assert safe[3] == "api_22226de7" and len(safe[5]) == 64


@pytest.fixture(scope="module")
def menus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    # A second copy under a CJK folder name: the APIs both declare are served as <skill>__<api>.
    root = tmp_path_factory.mktemp("menus")
    twin = root / "咖啡.skill"
    shutil.copytree(MENU, twin)
    options = ServeOptions(paths=(MENU, twin), port=0, runtime=RuntimeConfig(state_dir=root / "state"))
    with ServeHandle.start(options) as handle:
        yield handle


def test_every_served_name_is_one_model_apis_accept(menus: ServeHandle) -> None:
    async def session() -> list[tuple[str, str | None, str]]:
        async with Client(menus.url) as client:
            listed = await client.list_tools()
            return [(t.name, t.title, (t.meta or {}).get("skillc/api", "")) for t in listed.tools]

    tools = asyncio.run(session())
    skill_tools = [t for t in tools if t[2]]
    assert len(skill_tools) == 8
    assert [name for name, _t, _a in tools if not TOOL_NAME.fullmatch(name)] == []
    assert len({name for name, _t, _a in tools}) == len(tools)
    by_api = {(api, name) for name, _t, api in skill_tools}
    assert ("search.drinks", model_safe_name("menu-skill__search.drinks")) in by_api
    assert ("search.drinks", model_safe_name("咖啡.skill__search.drinks")) in by_api
    titles = {name: title for name, title, _a in skill_tools}
    assert titles[model_safe_name("menu-skill__支付 订单")] == "Pay an order (支付 订单)"  # mcp.json's title
    assert titles[model_safe_name("menu-skill__listMenus")] == "List the menus (listMenus)"


def test_a_sanitised_tool_runs_its_api(menus: ServeHandle) -> None:
    async def session() -> str:
        async with Client(menus.url) as client:
            result = await client.call_tool(model_safe_name("咖啡.skill__search.drinks"), {"keyword": "latte"})
            return result.content[0].text  # type: ignore[union-attr]

    assert asyncio.run(session()) == "found latte"


def test_check_warns_at_each_name_that_needs_it() -> None:
    code, out, err = invoke("check", str(MENU))
    assert code == 0
    lines = [line for line in (out + err).splitlines() if "[MCP031]" in line]
    assert lines == [
        f'{MENU}/mcp.json:3:15: warning[MCP031]: API name "search.drinks" is not a tool name model APIs accept '
        "(^[a-zA-Z0-9_-]{1,64}$); skillc serve serves it as search_drinks_48e81ab4",
        f'{MENU}/mcp.json:4:15: warning[MCP031]: API name "支付 订单" is not a tool name model APIs accept '
        "(^[a-zA-Z0-9_-]{1,64}$); skillc serve serves it as api_22226de7",
        f'{MENU}/mcp.json:5:15: warning[MCP031]: API name "{LONG}" is not a tool name model APIs accept '
        f"(^[a-zA-Z0-9_-]{{1,64}}$); skillc serve serves it as {model_safe_name(LONG)}",
    ]
