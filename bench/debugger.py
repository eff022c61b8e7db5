"""Debugger MCP: take_snapshot and take_screenshot latency on the coffee drink-list card, against
chrome-devtools-mcp on the same card.

    .venv/bin/python bench/debugger.py [--rounds 30] [--no-yardstick]

skillc: ``skillc debug``'s server in-process (uvicorn on a thread, headless Chromium on the
console page, offline), driven through the Debugger MCP at ``/__wsd_mcp`` with the SDK's
``Client`` (``mode="legacy"``). After ``render_widget {"widgetId": "drink-list",
"structuredContent": {}}`` (the component's preview.json), ``--rounds`` calls each of
take_snapshot, take_screenshot png and take_screenshot jpeg quality 80 on one warm client
session (median and p95 wall ms), plus a cold call of each (a fresh ``Client`` per call:
connect, initialize, call, close; median of 5). CPU per call over the warm loop: this process
(``time.process_time``: the MCP client *and* the in-process server) and the browser's processes
(every descendant of this process, read from /proc: Playwright's node driver and Chromium).

Yardstick: chrome-devtools-mcp 1.11.0 (npm; installed into /tmp/cdm when missing), an MCP stdio
server with its own headless Chromium (/usr/bin/chromium), navigated to the same card's HTML
(``ConsolePage.render_widget``, served by a local http.server, remote images replaced by the grey
pixel the offline console shows); the same calls, the same way; CPU: this process (the client
only), its node process and Chromium. Without node / npm, or when it fails, it is skipped and said
so. "ratio" lines are skillc / chrome-devtools-mcp (below 1: skillc is faster).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
COFFEE = ROOT / "examples" / "coffee-skill"
CHROMIUM = "/usr/bin/chromium"
CDM_VERSION = "1.11.0"
CDM_PREFIX = Path("/tmp/cdm")
CDM_BIN = CDM_PREFIX / "node_modules" / "chrome-devtools-mcp" / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
RENDER = {"widgetId": "drink-list", "structuredContent": {}}
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("take_snapshot", "take_snapshot", {}),
    ("screenshot png", "take_screenshot", {}),
    ("screenshot jpeg q80", "take_screenshot", {"format": "jpeg", "quality": 80}),
]
COLD_ROUNDS = 5
CLK_TCK = os.sysconf("SC_CLK_TCK")
GREY_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4ceIEAAS0AlkWLoFAAAAAAElFTkSuQmCC"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


# -- the CPU of the browser's processes (/proc; psutil is not a dependency) -------------------------


def _kind(comm: str) -> str:
    """node (chrome-devtools-mcp renames its process "chrome-devtools-mcp", cut to 15 characters;
    Playwright's driver is "node-MainThread"), chromium (every Chromium process), or the name."""
    if comm.startswith(("node", "chrome-devtools")):
        return "node"
    return "chromium" if "chrom" in comm.lower() else comm


def _descendants_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of every live descendant of this process, by command name."""
    stats: dict[int, tuple[int, str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        # fields[1] is the ppid; utime, stime are the 14th, 15th fields of the line (11, 12 here)
        stats[int(entry.name)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / CLK_TCK)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[str, float] = {}
    todo = list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        _, name, cpu = stats[pid]
        kind = _kind(name)
        out[kind] = out.get(kind, 0.0) + cpu
        todo.extend(children.get(pid, []))
    return out


def _cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}


# -- timing one MCP server --------------------------------------------------------------------------


def _text_chars(result: Any) -> int:
    return sum(len(c.text) for c in result.content if getattr(c, "type", None) == "text")


def _image(result: Any) -> str:
    """``"<KB> KB, <w>x<h>"`` of the result's image, "" when there is none."""
    from skillc.server.debugger.channel_sse import image_size

    for c in result.content:
        if getattr(c, "type", None) == "image":
            data = base64.b64decode(c.data)
            size = image_size(data, c.mime_type.removeprefix("image/")) or ("?", "?")
            return f"{len(data) / 1024:.1f} KB, {size[0]}x{size[1]}"
    return ""


async def _timed(rounds: int, fn: Callable[[], Awaitable[Any]]) -> tuple[list[float], float, dict[str, float], Any]:
    """``rounds`` calls: wall ms each, this process's CPU ms per call, the children's CPU ms per call."""
    last = await fn()  # one untimed call: the first of a kind may compile or allocate
    if last.is_error:
        raise RuntimeError(f"the call failed: {last.content}")
    times = []
    cpu0, kids0 = time.process_time(), _descendants_cpu()
    for _ in range(rounds):
        t0 = time.perf_counter()
        last = await fn()
        times.append((time.perf_counter() - t0) * 1000)
        if last.is_error:
            raise RuntimeError(f"the call failed: {last.content}")
    cpu = (time.process_time() - cpu0) * 1000 / rounds
    kids = {k: v * 1000 / rounds for k, v in _cpu_delta(kids0, _descendants_cpu()).items()}
    return times, cpu, kids, last


async def measure(server: Any, setup: Callable[[Any], Awaitable[None]], rounds: int) -> dict[str, Any]:
    """Warm (one session for every call) and cold (a fresh Client per call) figures for CALLS."""
    out: dict[str, Any] = {}
    async with Client(server, mode="legacy") as client:
        await setup(client)
        for label, tool, args in CALLS:
            times, cpu, kids, last = await _timed(rounds, functools.partial(client.call_tool, tool, args))
            out[label] = {
                "median": statistics.median(times),
                "p95": p95(times),
                "cpu": cpu,
                "kids": kids,
                "text": _text_chars(last),
                "image": _image(last),
                "structured": len(json.dumps(last.structured_content, ensure_ascii=False))
                if last.structured_content
                else 0,
            }
    if isinstance(server, str):  # cold calls: only where a session is cheap to open (HTTP; stdio restarts node)
        for label, tool, args in CALLS:
            cold = []
            for _ in range(COLD_ROUNDS):
                t0 = time.perf_counter()
                async with Client(server, mode="legacy") as client:
                    result = await client.call_tool(tool, args)
                cold.append((time.perf_counter() - t0) * 1000)
                assert not result.is_error, result.content
            out[label]["cold"] = statistics.median(cold)
    return out


# -- skillc -----------------------------------------------------------------------------------------


class SkillcDebug:
    """``skillc debug`` in-process, as tests/test_debugger_console_chromium.py runs it."""

    def __init__(self, state: Path) -> None:
        from skillc.runtime.config import RuntimeConfig
        from skillc.server.debugger.console_page import build_debug_server
        from skillc.server.runner import ServeOptions, prepare

        self.prepared = prepare(ServeOptions(paths=(COFFEE,), runtime=RuntimeConfig(state_dir=state)))
        self.debug = build_debug_server(self.prepared, browser=True, offline=True)
        self.port = _free_port()
        self.debug.listening("127.0.0.1", self.port)
        self.server = self.debug.uvicorn_server("127.0.0.1", self.port)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/__wsd_mcp"

    def __enter__(self) -> SkillcDebug:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.debug.channel.connected:
            if self.debug.browser_error is not None:
                raise RuntimeError(self.debug.browser_error)
            if time.monotonic() > deadline:
                raise RuntimeError("the headless console never connected")
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def card_html(self) -> str:
        """The drink-list card's HTML as the console renders it (ConsolePage.render_widget, or the
        console's own /__debug/api/render when that call has changed shape)."""
        from skillc.server.debugger.console_page import ConsolePage

        answer: Any = None
        with contextlib.suppress(Exception):
            page = ConsolePage([s.package for s in self.prepared.server.catalogue.skills])
            answer = page.render_widget(dict(RENDER))
            if asyncio.iscoroutine(answer):
                answer = asyncio.run(answer)
        if not (isinstance(answer, dict) and answer.get("ok") and isinstance(answer.get("html"), str)):
            import httpx

            reply = httpx.post(f"http://127.0.0.1:{self.port}/__debug/api/render", json=RENDER, timeout=30)
            answer = reply.json()
        if not answer.get("ok"):
            raise RuntimeError(f"render_widget failed: {answer.get('error')}")
        # the offline console answers every remote image with a grey pixel; so does this page
        return re.sub(r"""(src=["'])https?://[^"']*""", lambda m: m.group(1) + GREY_PNG, answer["html"])


async def _render_card(client: Any) -> None:
    result = await client.call_tool("render_widget", dict(RENDER))
    if result.is_error:
        raise RuntimeError(f"render_widget failed: {result.structured_content}")


# -- chrome-devtools-mcp ------------------------------------------------------------------------------


def cdm_command() -> tuple[list[str] | None, str]:
    """The stdio command line of chrome-devtools-mcp, installing it into /tmp/cdm when missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        return None, "no node on PATH"
    if not Path(CHROMIUM).exists():
        return None, f"no {CHROMIUM}"
    if not CDM_BIN.exists():
        if npm is None:
            return None, "no npm on PATH to install it"
        print(f"installing chrome-devtools-mcp@{CDM_VERSION} into {CDM_PREFIX} (npm) ...", flush=True)
        proc = subprocess.run(
            [npm, "install", "--prefix", str(CDM_PREFIX), f"chrome-devtools-mcp@{CDM_VERSION}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0 or not CDM_BIN.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
            return None, f"npm install failed: {tail[0]}"
    args = [node, str(CDM_BIN), "--headless", "--isolated", f"--executablePath={CHROMIUM}"]
    args += ["--viewport=375x667", "--no-usage-statistics", "--no-performance-crux", "--no-page-id-routing"]
    args += ["--chromeArg=--no-sandbox", "--chromeArg=--disable-gpu"]
    return args, ""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *_: Any) -> None:
        pass


async def run_cdm(html: str, rounds: int, command: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "card.html").write_text(html, encoding="utf-8")
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=tmp))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/card.html"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "CI": "1"}
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        log = Path(tmp) / "stderr.log"

        async def navigate(client: Any) -> None:
            result = await client.call_tool("navigate_page", {"type": "url", "url": url})
            if result.is_error:
                said = " ".join(c.text for c in result.content if getattr(c, "type", None) == "text")
                raise RuntimeError(f"navigate_page failed: {said}")

        try:
            with log.open("w") as errlog:
                return await measure(stdio_client(params, errlog=errlog), navigate, rounds)
        except Exception as err:
            while isinstance(err, BaseExceptionGroup) and err.exceptions:  # the SDK's task groups
                err = err.exceptions[0]
            lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
            said = [line for line in lines if "rror" in line][-1:] or lines[-1:]
            raise RuntimeError(f"{type(err).__name__}: {err}{' / stderr: ' + said[0] if said else ''}") from err
        finally:
            httpd.shutdown()


# -- the table ----------------------------------------------------------------------------------------


def _kids(kids: dict[str, float]) -> str:
    parts = [f"{name} {ms:.1f}" for name, ms in sorted(kids.items(), key=lambda kv: -kv[1]) if ms >= 0.05]
    return ", ".join(parts) or "0"


def report(name: str, figures: dict[str, Any]) -> None:
    print(f"  {name}")
    for label, f in figures.items():
        cold = f" | cold {f['cold']:.1f} ms" if "cold" in f else ""
        size = f"image {f['image']}" if f["image"] else f"text {f['text']} chars"
        if f["structured"]:
            size += f", structuredContent {f['structured']} chars"
        print(
            f"    {label:<20} median {f['median']:6.1f} ms, p95 {f['p95']:6.1f} ms{cold} | "
            f"CPU/call: this process {f['cpu']:.1f} ms, children {_kids(f['kids'])} ms | {size}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--no-yardstick", action="store_true", help="leave chrome-devtools-mcp out")
    args = parser.parse_args()
    print(f"Debugger MCP on the drink-list card, {args.rounds} rounds per call (python {sys.version.split()[0]})")
    print("  warm: one client session for every call; cold: a fresh Client per call (median of 5)")
    with tempfile.TemporaryDirectory() as tmp, SkillcDebug(Path(tmp) / "state") as debug:
        ours = asyncio.run(measure(debug.url, _render_card, args.rounds))
        html = debug.card_html()
    report("skillc Debugger MCP (streamable HTTP, in-process server; 'this process' = client + server)", ours)

    if args.no_yardstick:
        print("chrome-devtools-mcp: skipped (--no-yardstick)")
        return
    command, reason = cdm_command()
    if command is None:
        print(f"chrome-devtools-mcp: skipped ({reason})")
        return
    try:
        theirs = asyncio.run(run_cdm(html, args.rounds, command))
    except Exception as err:  # the yardstick failing must not fail the bench
        print(f"chrome-devtools-mcp: skipped ({err})")
        return
    report(f"chrome-devtools-mcp {CDM_VERSION} (stdio, warm only; 'this process' = client only)", theirs)
    print(f"  command: {' '.join(command)}")
    for label, _, _ in CALLS:
        a, b = ours[label], theirs[label]
        print(f"  ratio {label:<20} median {a['median'] / b['median']:.2f}x, p95 {a['p95'] / b['p95']:.2f}x")
    a, b = ours["take_snapshot"], theirs["take_snapshot"]
    print(f"  ratio snapshot text size  {a['text'] / b['text']:.2f}x ({a['text']} / {b['text']} chars)")


if __name__ == "__main__":
    main()
