"""Debugger commands that never wedge, and exact screenshots: `skillc debug`'s server in-process with
its headless Chromium on the console page, driven through the Debugger MCP.

- a chat turn whose API never returns times out, its API call is stopped (its VM deadline trips)
  and the next command runs at once;
- a second chat while one runs is CHAT_BUSY; a command queued behind a chat past its timeout is
  COMMAND_TIMEOUT; an element without a layout box is INSPECTION_FAILED;
- a killed Chromium is relaunched, the descriptor going through ``error`` back to ``client_connected``;
- screenshots are the device frame at full size (the PNG's own header says so) from 1x1 to 9999x9999,
  with the console in the server's browser and in another browser (``--no-browser``).
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import threading
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillc.runtime.api.cancel import running_calls
from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.browser import HeadlessConsole
from skillc.server.debugger.channel_sse import image_size
from skillc.server.debugger.chat import ChatSimulator
from skillc.server.debugger.console_page import build_debug_server
from skillc.server.debugger.planner import OpenAIPlanner
from skillc.server.runner import ServeOptions, prepare
from tests.conftest import COFFEE, FIXTURES, require
from tests.debug_servers import Running, free_port
from tests.waiting import PATIENCE_S, wait_until

pytestmark = pytest.mark.chromium
WEDGE = FIXTURES / "debugger" / "wedge-skill"
CHAT_TIMEOUT_S = 3.0
SPIN = {"query": "/call spinForever {}"}


def _start(tmp: Path, *, browser: bool = True, planner: Any = None, **timeouts: float) -> Running:
    require(find_spec("playwright") is not None, "playwright is not installed (pip install 'skillc[debug]')")
    require(HeadlessConsole.executable() is not None, "no chromium on PATH (apt-get install chromium)")
    prepared = prepare(ServeOptions(paths=(COFFEE, WEDGE), runtime=RuntimeConfig(state_dir=tmp)))
    debug = build_debug_server(prepared, browser=browser, offline=True, planner=planner, **timeouts)  # type: ignore[arg-type]
    port = free_port()
    debug.listening("127.0.0.1", port)
    running = Running(debug, port)
    running.thread.start()
    if browser:
        wait_until(lambda: debug.channel.connected or debug.browser_error is not None, PATIENCE_S, "the console")
        assert debug.browser_error is None, debug.browser_error
    return running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    running = _start(tmp_path_factory.mktemp("wedge"), chat_timeout_s=CHAT_TIMEOUT_S)
    yield running
    running.stop()


def _chat(running: Running) -> ChatSimulator:
    assert running.debug.page is not None and running.debug.page.chat is not None
    return running.debug.page.chat


def call(url: str, name: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(url) as client:
            return await client.call_tool(name, args)

    return asyncio.run(go())


def _code(result: Any) -> str | None:
    return result.structured_content["error"]["code"] if result.is_error else None


def _in_thread(url: str, name: str, args: dict[str, Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call(url, name, args)), daemon=True)
    thread.start()
    return thread, out


def test_a_timed_out_chat_is_cancelled_and_the_next_command_runs_at_once(server: Running) -> None:
    url = server.mcp_url
    timed_out = call(url, "submit_chat_query", SPIN)
    assert _code(timed_out) == "CHAT_TIMEOUT", timed_out.structured_content
    # The API call the turn started is stopped through its VM deadline, not left to its 300 s.
    wait_until(lambda: running_calls() == 0, CHAT_TIMEOUT_S * 5, "the chat's API call to stop")
    rendered = call(url, "render_widget", {"widgetId": "drink-list"})
    assert not rendered.is_error, rendered.structured_content
    assert rendered.structured_content["target"]["id"] == "drink-list"
    assert not _chat(server).busy


def test_a_second_chat_while_one_runs_is_chat_busy(server: Running) -> None:
    url = server.mcp_url
    chat = _chat(server)
    first, result = _in_thread(url, "submit_chat_query", SPIN)
    wait_until(lambda: chat.busy, PATIENCE_S, "the first chat turn to run")
    second = call(url, "submit_chat_query", {"query": "/call showHidden {}"})
    assert _code(second) == "CHAT_BUSY", second.structured_content
    first.join(PATIENCE_S)
    assert _code(result[0]) == "CHAT_TIMEOUT"


def test_an_element_without_a_box_is_inspection_failed(server: Running) -> None:
    url = server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "hidden-card"}).is_error
    tree = call(url, "take_snapshot", {}).structured_content["snapshot"]
    lines = tree.splitlines()
    text = next(i for i, line in enumerate(lines) if "never laid out" in line)
    gone = lines[text - 1].split()[0].removeprefix("uid=")  # the display: none view around that text
    rect = call(url, "get_element_rect", {"uid": gone})
    assert _code(rect) == "INSPECTION_FAILED", rect.structured_content
    assert "no layout box" in rect.structured_content["error"]["message"]


def test_a_target_that_does_not_render_at_the_new_size_is_viewport_failed(server: Running) -> None:
    """once-card mounts once (its JavaScript counts mounts in storage): set_viewport's re-render of it
    fails, and the console says so as VIEWPORT_FAILED with the reason, not as a success."""
    url = server.mcp_url
    first = call(url, "render_widget", {"widgetId": "once-card", "structuredContent": {"title": "once"}})
    assert not first.is_error, first.structured_content
    resized = call(url, "set_viewport", {"width": 320, "height": 480})
    assert _code(resized) == "VIEWPORT_FAILED", resized.structured_content
    assert "mounts only once" in resized.structured_content["error"]["message"]


@pytest.mark.parametrize("size", [(414, 896), (430, 932), (1200, 2000), (700, 700), (1, 1), (9999, 9999)])
def test_screenshots_are_the_full_device_frame(server: Running, size: tuple[int, int]) -> None:
    url = server.mcp_url
    width, height = size
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    resized = call(url, "set_viewport", {"width": width, "height": height})
    assert not resized.is_error, resized.structured_content
    shot = call(url, "take_screenshot", {})
    assert not shot.is_error, shot.structured_content
    png = base64.b64decode(shot.content[0].data)
    assert image_size(png, "png") == (width, height)
    assert (shot.structured_content["width"], shot.structured_content["height"]) == (width, height)


def test_an_element_screenshot_is_its_box_at_ratio_one(server: Running) -> None:
    url = server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    assert not call(url, "set_viewport", {"width": 1200, "height": 2000}).is_error
    tree = call(url, "take_snapshot", {}).structured_content["snapshot"]
    uid = tree.splitlines()[1].split()[0].removeprefix("uid=")
    rect = call(url, "get_element_rect", {"uid": uid}).structured_content
    shot = call(url, "take_screenshot", {"uid": uid})
    assert not shot.is_error, shot.structured_content
    size = image_size(base64.b64decode(shot.content[0].data), "png")
    assert size == (shot.structured_content["width"], shot.structured_content["height"])
    assert size is not None
    assert abs(size[0] - rect["width"]) <= 1 and abs(size[1] - min(rect["height"], 2000 - rect["y"])) <= 1


def test_a_command_queued_behind_a_chat_past_its_timeout_is_command_timeout(tmp_path: Path) -> None:
    running = _start(tmp_path, command_timeout_s=1.0, chat_timeout_s=PATIENCE_S)
    try:
        url = running.mcp_url
        assert not call(url, "render_widget", {"widgetId": "hidden-card"}).is_error
        chat = _chat(running)
        first, _ = _in_thread(url, "submit_chat_query", SPIN)
        wait_until(lambda: chat.busy, PATIENCE_S, "the chat turn to run")
        tree = call(url, "take_snapshot", {}).structured_content["snapshot"]
        uid = tree.splitlines()[1].split()[0].removeprefix("uid=")
        late = call(url, "get_computed_style", {"uid": uid, "properties": ["display"]})
        assert _code(late) == "COMMAND_TIMEOUT", late.structured_content
    finally:
        running.stop()  # ends the chat and its API call: the server shuts down within its graceful time
    first.join(PATIENCE_S)
    assert running_calls() == 0


def test_a_planner_that_cannot_be_reached_is_chat_submit_failed(tmp_path: Path) -> None:
    """--planner-url naming a port nothing listens on: the turn cannot be decided, the submit fails."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    running = _start(tmp_path, planner=OpenAIPlanner(dead, "any-model"))
    try:
        failed = call(running.mcp_url, "submit_chat_query", {"query": "a latte please"})
        assert _code(failed) == "CHAT_SUBMIT_FAILED", failed.structured_content
        assert "planner" in failed.structured_content["error"]["message"]
    finally:
        running.stop()


def test_a_killed_chromium_is_relaunched_and_the_console_reattached(tmp_path: Path) -> None:
    running = _start(tmp_path)
    states: list[str] = []
    running.debug.observers.append(lambda d: states.append(d.state))
    try:
        url = running.mcp_url
        assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
        killed = _kill_browsers()
        assert killed, "no Chromium of this process was found"
        wait_until(lambda: "error" in states, PATIENCE_S, "the descriptor to say error")
        wait_until(lambda: states[-1] == "client_connected", PATIENCE_S, "the console to re-attach")
        assert running.debug.descriptor.error is None
        rendered = call(url, "render_widget", {"widgetId": "drink-list"})
        assert not rendered.is_error, rendered.structured_content
        assert not call(url, "take_screenshot", {}).is_error
    finally:
        running.stop()


def test_screenshots_with_the_console_in_another_browser(tmp_path: Path) -> None:
    """--no-browser: the user's browser runs the console (here a separate Playwright Chromium with a
    small window); the server captures in a headless Chromium of its own, at the device's full size."""
    running = _start(tmp_path, browser=False)
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            user = pw.chromium.launch(executable_path=HeadlessConsole.executable(), args=["--no-sandbox"])
            page = user.new_page(viewport={"width": 800, "height": 600})
            page.goto(running.debug.descriptor.urls.console)
            wait_until(lambda: running.debug.channel.connected, PATIENCE_S, "the user's console to connect")
            url = running.mcp_url
            assert not _off_loop(url, "render_widget", {"widgetId": "hidden-card"}).is_error
            assert not _off_loop(url, "set_viewport", {"width": 414, "height": 896}).is_error
            shot = _off_loop(url, "take_screenshot", {})
            assert not shot.is_error, shot.structured_content
            assert image_size(base64.b64decode(shot.content[0].data), "png") == (414, 896)
            user.close()
    finally:
        running.stop()


def _off_loop(url: str, name: str, args: dict[str, Any]) -> Any:
    """``call`` from a thread of its own (Playwright's sync API holds this thread's event loop)."""
    thread, out = _in_thread(url, name, args)
    thread.join(PATIENCE_S)
    return out[0]


def _kill_browsers() -> list[int]:
    """SIGKILL every Chromium browser process (not its renderers) under this test process."""
    me = os.getpid()
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not cmdline or b"chrom" not in cmdline[0] or any(a.startswith(b"--type=") for a in cmdline):
            continue
        if _descends_from(int(entry.name), me):
            os.kill(int(entry.name), signal.SIGKILL)
            killed.append(int(entry.name))
    return killed


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            return False
    return False
