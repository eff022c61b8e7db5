"""One configuration for every command that runs a skill: `call`, `serve` and `debug` take the same
run-time options (one table, skillc.cli.options.RUNTIME_OPTIONS), and `serve` and `debug` the same
consent options; `skillc debug` as a process honours each of them inside a chat turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click
import httpx
import pytest

from skillc.cli import main as cli
from skillc.cli.options import CONSENT_OPTIONS, RUNTIME_OPTIONS
from tests.conftest import FIXTURES
from tests.waiting import PATIENCE_S, wait_until

ERRAND = FIXTURES / "debugger" / "errand-skill"
PROFILE = FIXTURES / "stand-ins" / "profile.json"
SKILLC = Path(sys.executable).with_name("skillc")


def _options(table: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...]) -> list[click.Option]:
    """The click.Option objects a table of option decorators declares."""
    command = click.command()(lambda **_: None)
    for option in table:
        option(command)
    return [p for p in command.params if isinstance(p, click.Option)]


def _shape(option: click.Parameter) -> tuple[Any, ...]:
    """Everything a user can observe of an option: its flags, meaning, type, default and help."""
    assert isinstance(option, click.Option)
    return (
        tuple(option.opts),
        option.name,
        repr(option.type),
        option.multiple,
        option.is_flag,
        option.default,
        option.help,
    )


def _param(command: str, name: str | None) -> click.Parameter | None:
    cmd = cli.get_command(click.Context(cli), command)
    assert cmd is not None
    return next((p for p in cmd.params if p.name == name), None)


@pytest.mark.parametrize("command", ["call", "serve", "debug"])
def test_call_serve_and_debug_take_the_same_runtime_options(command: str) -> None:
    table = _options(RUNTIME_OPTIONS)
    assert {o.opts[0] for o in table} >= {"--allow-host", "--profile", "--user", "--timeout", "--storage"}
    for option in table:
        param = _param(command, option.name)
        assert param is not None, f"skillc {command} lacks {option.opts[0]}"
        assert _shape(param) == _shape(option), f"skillc {command} {option.opts[0]} differs from the shared one"
    # Where state lives is one option too, with one check of the URL.
    state = _param(command, "state_url")
    assert state is not None and state.opts == ["--state"] and state.callback is not None
    assert state.callback.__name__ == "validate_state_url"


@pytest.mark.parametrize("command", ["serve", "debug"])
def test_serve_and_debug_take_the_same_consent_options(command: str) -> None:
    for option in _options(CONSENT_OPTIONS):
        param = _param(command, option.name)
        assert param is not None, f"skillc {command} lacks {option.opts[0]}"
        assert _shape(param) == _shape(option)


# -- `skillc debug` honours them, in a chat turn ----------------------------------------------------


class _Echo(BaseHTTPRequestHandler):
    """The errand service: answers who called (the identity header only the host sets)."""

    def do_GET(self) -> None:
        body = json.dumps({"caller": self.headers.get("X-Skillc-User-DID")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def errand_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _chat(tmp: Path, options: list[str], query: str) -> dict[str, Any]:
    """One chat turn through the console's own route of a `skillc debug --no-browser` process."""
    env = {**os.environ, "SKILLC_STATE_DIR": str(tmp / "state")}
    proc = subprocess.Popen(
        [str(SKILLC), "debug", str(ERRAND), "--port", "0", "--no-browser", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        base, token = json.loads(line)["debugDescriptor"]["urls"]["console"].split("?token=")
        chat = f"{base.rstrip('/')}/__debug/api/chat?token={token}"
        answers: list[httpx.Response] = []

        def answered() -> bool:
            try:
                answers.append(httpx.post(chat, json={"query": query}, timeout=PATIENCE_S))
            except httpx.TransportError:  # not listening yet
                return False
            return True

        wait_until(answered, PATIENCE_S, "the debug server to answer a chat turn", every_s=0.1)
        assert answers[0].status_code == 200, answers[0].text
        return dict(answers[0].json())
    finally:
        proc.terminate()
        proc.wait(timeout=PATIENCE_S)


def test_debug_runs_a_chat_turn_with_every_runtime_option(tmp_path: Path, errand_service: str) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"greeting": "morning"}))
    query = "/call planErrand " + json.dumps({"url": errand_service + "/errands"})
    options = [
        *("--storage", str(seed)),
        *("--profile", str(PROFILE)),
        *("--allow-host", errand_service),
        *("--user", "did:example:errand-runner"),
        *("--approve", "planErrand"),
        *("--timeout", "60"),
        *("--state", str(tmp_path / "state.sqlite3")),
    ]
    turn = _chat(tmp_path, options, query)
    [call] = turn["toolCalls"]
    assert call["status"] == "succeeded", call
    assert call["message"] == 'morning | 39.915,116.404 | {"caller":"did:example:errand-runner"}'
    assert (tmp_path / "state.sqlite3").is_file()  # --state: the store is where it was told


def test_debug_without_the_options_cannot_reach_them(tmp_path: Path, errand_service: str) -> None:
    query = "/call planErrand " + json.dumps({"url": errand_service + "/errands"})
    # Approved, but no storage, no profile and no allowed host: each fails as the runtime says.
    [call] = _chat(tmp_path, ["--approve-all"], query)["toolCalls"]
    assert call["status"] == "succeeded", call
    greeting, where, service = call["message"].split(" | ")
    assert greeting == "no greeting"
    assert where.startswith("failed: getLocation:fail"), where
    assert "url not in domain list" in service
    # Not approved: the console cannot ask, so nothing runs and the chat says how to approve.
    [refused] = _chat(tmp_path, [], query)["toolCalls"]
    assert refused["status"] == "rejected"
    assert "use --approve TOOL or --approve-all" in refused["message"]


def test_debug_refuses_an_approval_that_names_no_tool(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLC_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [str(SKILLC), "debug", str(ERRAND), "--port", "0", "--no-browser", "--approve", "planErand"],
        capture_output=True,
        text=True,
        env=env,
        timeout=PATIENCE_S,
    )
    assert done.returncode == 2
    assert "--approve planErand: no served tool has that name" in done.stderr
    assert "planErrand  (errand-skill/planErrand)" in done.stderr
