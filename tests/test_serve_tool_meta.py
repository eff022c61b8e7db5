"""What a served skill's tools and serverInfo say about it: serverInfo names the served skills and
skillc's version, the skill's icon rides on its tools and on serverInfo, and a tool bound to a card
names its view only as ``_meta.ui.resourceUri`` (the deprecated flat ``ui/resourceUri`` is gone).
Read with the official Python SDK client, over both handshakes."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from skillc import __version__
from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from skillc.server.skill_icon import MAX_ICON_BYTES
from tests.conftest import COFFEE
from tests.session_client import SessionClient
from tests.test_serve_agent_context import make_note_skill

PNG_2X3 = base64.b64decode(  # a 2x3 PNG: the size is read from its header
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEUlEQVR4nGP4z8DwH4QZMBgAoXkL9U3EmgcAAAAASUVORK5CYII="
)
SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="4"/></svg>'


def _listing(paths: tuple[Path, ...], state: Path, mode: str = "auto") -> tuple[Any, list[Any]]:
    options = ServeOptions(paths=paths, port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:

        async def session() -> tuple[Any, list[Any]]:
            async with SessionClient(handle.url, mode=mode) as client:
                return client.server_info, (await client.list_tools()).tools

        return asyncio.run(session())


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_server_info_names_the_served_skill_and_the_flat_ui_key_is_gone(tmp_path: Path, mode: str) -> None:
    info, tools = _listing((COFFEE,), tmp_path, mode)
    assert (info.name, info.version) == ("coffee-skill", __version__)
    assert info.title == f"coffee-skill (skillc {__version__})"
    search = next(t for t in tools if t.name == "searchDrinks")
    assert search.meta["ui"]["resourceUri"] == "ui://coffee-skill/drink-list"
    assert "ui/resourceUri" not in search.meta
    assert search.icons is None  # the coffee skill has no icon


def test_several_skills_are_all_named(tmp_path: Path) -> None:
    note = make_note_skill(tmp_path / "n")
    info, _tools = _listing((COFFEE, note), tmp_path / "state")
    assert info.name == "coffee-skill+note-skill"
    assert info.title == f"coffee-skill, note-skill (skillc {__version__})"


def test_the_skill_s_icon_rides_on_its_tools_and_server_info(tmp_path: Path) -> None:
    note = make_note_skill(tmp_path / "n")
    (note / "icon.png").write_bytes(PNG_2X3)
    (note / "icon-dark.svg").write_text(SVG, encoding="utf-8")
    info, tools = _listing((note,), tmp_path / "state")
    png = f"data:image/png;base64,{base64.b64encode(PNG_2X3).decode()}"
    svg = f"data:image/svg+xml;base64,{base64.b64encode(SVG.encode()).decode()}"
    expected = [(png, "image/png", ["2x3"], None), (svg, "image/svg+xml", ["any"], "dark")]
    remember = next(t for t in tools if t.name == "remember")
    assert [(i.src, i.mime_type, i.sizes, i.theme) for i in remember.icons] == expected
    assert [(i.src, i.mime_type, i.sizes, i.theme) for i in info.icons] == expected


def test_an_icon_too_large_for_every_listing_is_not_sent(tmp_path: Path) -> None:
    note = make_note_skill(tmp_path / "n")
    (note / "icon.png").write_bytes(PNG_2X3 + b"\0" * MAX_ICON_BYTES)
    info, tools = _listing((note,), tmp_path / "state")
    assert next(t for t in tools if t.name == "remember").icons is None
    assert info.icons is None
