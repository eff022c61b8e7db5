"""`skillc debug` (and serve, run) as real processes: SIGTERM during a chat turn whose API never
returns ends `debug` within its graceful timeout; without any browser the descriptor says
``error`` with the reason and the banner says how to get one; Ctrl-C (SIGINT) exits 130 quietly."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillc.server.debugger.browser import HeadlessConsole
from skillc.server.debugger.console_page import GRACEFUL_S
from tests.conftest import COFFEE, FIXTURES, require
from tests.waiting import PATIENCE_S, bound_for, wait_until

WEDGE = FIXTURES / "debugger" / "wedge-skill"
SKILLC = Path(sys.executable).with_name("skillc")


def _spawn(args: list[str], tmp: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "SKILLC_STATE_DIR": str(tmp / "state"), **(env or {})}
    return subprocess.Popen(
        [str(SKILLC), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # A shell without job control starts background jobs with SIGINT ignored; Ctrl-C must reach it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _descriptor(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else "no output"
    return dict(json.loads(line)["debugDescriptor"])


def _read_descriptor(mcp_url: str) -> dict[str, Any]:
    async def go() -> Any:
        async with Client(mcp_url) as client:
            return await client.read_resource("skillc://debugger/descriptor")

    try:
        return dict(json.loads(asyncio.run(go()).contents[0].text))
    except Exception:  # not listening yet
        return {}


def _call(url: str, name: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(url) as client:
            return await client.call_tool(name, args)

    try:
        return asyncio.run(go())
    except Exception as err:  # the server went away under the call
        return err


@pytest.mark.chromium
def test_sigterm_during_a_chat_turn_ends_debug_within_its_graceful_timeout(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    require(find_spec("playwright") is not None, "playwright is not installed (pip install 'skillc[debug]')")
    require(HeadlessConsole.executable() is not None, "no chromium on PATH (apt-get install chromium)")
    proc = _spawn(["debug", str(WEDGE), "--port", "0"], tmp_path)
    procs.append(proc)
    url = _descriptor(proc)["urls"]["debuggerMcp"]
    wait_until(lambda: _read_descriptor(url).get("state") == "client_connected", PATIENCE_S, "the console")

    # Chats that never end, until one of them is running: then another is CHAT_BUSY.
    results: list[Any] = []

    def chat() -> None:
        results.append(_call(url, "submit_chat_query", {"query": "/call spinForever {}"}))

    def busy() -> bool:
        threading.Thread(target=chat, daemon=True).start()
        return any(
            getattr(r, "is_error", False) and r.structured_content["error"]["code"] == "CHAT_BUSY" for r in results
        )

    wait_until(busy, PATIENCE_S, "a chat turn to run", every_s=0.5)
    proc.send_signal(signal.SIGTERM)
    # Far below the API's own 300 s deadline, which the server would otherwise wait for.
    proc.wait(timeout=bound_for(GRACEFUL_S))
    assert proc.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM)


def test_without_a_browser_the_descriptor_says_error_and_ctrl_c_exits_130(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    empty = tmp_path / "no-browsers"
    empty.mkdir()
    env = {"PATH": str(Path(sys.executable).parent), "PLAYWRIGHT_BROWSERS_PATH": str(empty)}
    proc = _spawn(["debug", str(COFFEE), "--port", "0"], tmp_path, env)
    procs.append(proc)
    descriptor = _descriptor(proc)
    assert descriptor["state"] == "error"
    assert "Chromium" in descriptor["error"]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=PATIENCE_S)
    assert proc.returncode == 130, err
    assert "pip install 'skillc[debug]'" in err
    assert "Aborted!" not in err and "Traceback" not in err


def test_ctrl_c_exits_130_quietly_from_serve(tmp_path: Path, procs: list[subprocess.Popen[str]]) -> None:
    proc = _spawn(["serve", str(COFFEE), "--port", "0"], tmp_path)
    procs.append(proc)
    assert proc.stderr is not None
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(proc.stderr or []), daemon=True)
    reader.start()
    wait_until(lambda: any(line.startswith("serving ") for line in seen), PATIENCE_S, "serve to start")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=PATIENCE_S)
    reader.join(PATIENCE_S)
    assert proc.returncode == 130, "".join(seen)
    assert not any("Aborted!" in line or "Traceback" in line for line in seen), "".join(seen)


def test_ctrl_c_exits_130_quietly_from_run_while_an_api_spins(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    script = tmp_path / "spin.json"
    script.write_text(json.dumps({"steps": [{"call": "spinForever", "arguments": {}}]}))
    proc = _spawn(["run", str(WEDGE), "--script", str(script)], tmp_path)
    procs.append(proc)

    def vm_loaded() -> bool:  # the QuickJS library is mapped: the call has started
        try:
            return "_quickjs" in Path(f"/proc/{proc.pid}/maps").read_text()
        except OSError:
            return False

    wait_until(vm_loaded, PATIENCE_S, "the API call to start")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=bound_for(1))
    assert proc.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
