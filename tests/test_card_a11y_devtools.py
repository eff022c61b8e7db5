"""What an agent that reads the page sees of a card: chrome-devtools-mcp (the npm package, run by
node with Debian's Chromium, spoken to over MCP stdio with the official Python SDK client) loads
the coffee card's HTML from `skillc render` and takes its accessibility snapshot. The three drinks
are buttons named by their text; their pictures are images named by the drink."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from skillc.cli import main
from tests.conftest import COFFEE, require

pytestmark = pytest.mark.chromium
DEVTOOLS_BIN = Path("chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js")
DRINKS = [
    ("拿铁 Latte ¥28", "拿铁 Latte", "d01"),
    ("燕麦拿铁 Oat Latte ¥32 已选", "燕麦拿铁 Oat Latte", "d02"),
    ("抹茶拿铁 Matcha Latte ¥30", "抹茶拿铁 Matcha Latte", "d09"),
]


def snapshots(node_bin: str, server: Path, chromium: str, page: Path) -> tuple[str, str]:
    """The page's accessibility snapshot from chrome-devtools-mcp: default, then verbose."""
    params = StdioServerParameters(
        command=node_bin,
        args=[
            str(server),
            f"--executablePath={chromium}",
            "--headless",
            "--isolated",
            "--no-usage-statistics",
            "--no-performance-crux",
            "--chromeArg=--no-sandbox",
            # The card's pictures live on a made-up host: every lookup fails at once, no network.
            "--chromeArg=--host-resolver-rules=MAP * ~NOTFOUND",
        ],
        # No update check against the npm registry, no usage statistics: nothing leaves the machine.
        env={"CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1", "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"},
    )

    async def go() -> tuple[str, str]:
        async with Client(stdio_client(params)) as client:
            opened = await client.call_tool("new_page", {"url": page.as_uri()})
            assert not opened.is_error, opened.content
            listing = "\n".join(getattr(b, "text", "") for b in opened.content)
            found = re.search(r"^(\d+): .*\(" + re.escape(page.as_uri()) + r"\)", listing, re.MULTILINE)
            assert found is not None, listing
            page_id = int(found.group(1))
            out = []
            for verbose in (False, True):
                snap = await client.call_tool("take_snapshot", {"pageId": page_id, "verbose": verbose})
                assert not snap.is_error, snap.content
                out.append("\n".join(getattr(b, "text", "") for b in snap.content))
            return out[0], out[1]

    return asyncio.run(asyncio.wait_for(go(), 120))


def test_the_coffee_card_reads_as_buttons_and_named_images(
    node_bin: str, peers_dir: Path, chromium_path: str, tmp_path: Path
) -> None:
    server = peers_dir / DEVTOOLS_BIN
    require(server.is_file(), "chrome-devtools-mcp is not installed in tests/peers (make peers)")
    rendered = CliRunner().invoke(main, ["render", str(COFFEE), "drink-list", "--backend", "html"])
    assert rendered.exit_code == 0, rendered.output
    page = tmp_path / "drink-list.html"
    page.write_text(rendered.stdout, encoding="utf-8")

    brief, full = snapshots(node_bin, server, chromium_path, page)
    buttons = re.findall(r'^\s*uid=\S+ button "([^"]*)"', brief, re.MULTILINE)
    assert buttons == [name for name, _, _ in DRINKS], brief
    # Under each button, its picture: an image named by the drink (the brief tree folds a
    # button's content into its name; the full tree keeps it).
    lines = full.split("\n")
    for name, image, key in DRINKS:
        at = next(i for i, line in enumerate(lines) if re.search(rf'\bbutton "{re.escape(name)}"', line))
        indent = len(lines[at]) - len(lines[at].lstrip())
        child = lines[at + 1]
        assert len(child) - len(child.lstrip()) > indent, full
        src = f"https://img.morningbeans.example/drinks/{key}.jpg"
        assert re.fullmatch(rf'\s*uid=\S+ image "{re.escape(image)}" url="{re.escape(src)}"', child), child
    assert not re.search(r'\bimage ""', full) and not re.search(r"\bimage\s*$", full, re.MULTILINE)
