"""``skillc debug``: the skills' MCP, the Debugger MCP and the debug console on one server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from skillc.cli.options import (
    RuntimeFlags,
    check_approvals,
    consent_options,
    probe_port,
    runtime_options,
    server_options,
)
from skillc.cli.output import EXIT_USAGE

if TYPE_CHECKING:
    from skillc.server.consent import ConsentPolicy


@click.command()
@server_options
@consent_options
@runtime_options
@click.option("--no-browser", is_flag=True, help="Do not launch headless Chromium; open the console URL yourself.")
@click.option(
    "--planner-url",
    default=None,
    help="An OpenAI-compatible chat-completions endpoint (e.g. https://api.openai.com/v1) that decides the "
    "chat box's tool calls [default: the built-in /call and keyword planner].",
)
@click.option("--planner-model", default=None, help="The model to ask at --planner-url.")
@click.option(
    "--planner-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="The environment variable holding --planner-url's API key (none sent when it is unset).",
)
def debug(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    state_dir: Path | None,
    state_url: str | None,
    consent: ConsentPolicy,
    runtime_flags: RuntimeFlags,
    no_browser: bool,
    planner_url: str | None,
    planner_model: str | None,
    planner_key_env: str,
) -> None:
    """Debug skills: the skills' MCP, the Debugger MCP and the debug console page on one server.

    PATHS are skill folders or mini-program project folders. Serves the skills' MCP at /mcp (as
    `skillc serve`), the Debugger MCP at /__wsd_mcp and the debug console at /. Headless Chromium
    (the system's `chromium`, through Playwright) opens the console so an agent can use every
    debugger tool; --no-browser leaves that to you. Prints the URLs and the debug descriptor
    (JSON). See docs/debugger.md.

    The chat box (and the Debugger MCP's submit_chat_query) runs a simulated agent turn whose tool
    calls go to /mcp like any host's. By default a deterministic planner decides them: `/call TOOL
    {json}` calls that tool, any other query calls the tool whose name and description share the
    most words with it. --planner-url and --planner-model hand the decisions to a model instead.

    The skills run as under `skillc call` / `skillc serve`, configured by the same options:
    --allow-host for wx.request, --profile and --storage for the user's data, --user for who
    calls, --timeout per API call, --state for where state lives, --approve TOOL / --approve-all
    for L3/L4 calls (the console draws no consent control: without them such a call is refused
    and the chat says so).

    \b
    Examples:
      skillc debug examples/coffee-skill --port 8766
      skillc debug examples/coffee-skill --allow-host api.example.com --approve confirmOrder
      skillc debug examples/coffee-skill --planner-url https://api.openai.com/v1 --planner-model gpt-4o-mini
    """
    import json
    import os

    from skillc.diagnostics import render_text
    from skillc.server.debugger.browser import INSTALL_HINT
    from skillc.server.debugger.console_page import build_debug_server
    from skillc.server.debugger.planner import CommandPlanner, OpenAIPlanner, Planner
    from skillc.server.runner import ServeOptions, prepare

    if (planner_url is None) != (planner_model is None):
        click.echo("skillc: error: --planner-url and --planner-model go together; give both or neither", err=True)
        sys.exit(EXIT_USAGE)
    planner: Planner = CommandPlanner()
    if planner_url is not None and planner_model is not None:
        planner = OpenAIPlanner(planner_url, planner_model, api_key=os.environ.get(planner_key_env) or None)

    options = ServeOptions(
        paths=paths,
        host=host,
        port=port,
        runtime=runtime_flags.config(state_dir, state_url),
        consent=consent,
    )
    prepared = prepare(options)
    if prepared.diagnostics:
        click.echo(render_text(prepared.diagnostics), err=True, nl=False)
    if not prepared.server.catalogue.skills:
        click.echo("skillc: error: no skill could be debugged", err=True)
        sys.exit(EXIT_USAGE)
    check_approvals(consent, prepared.server.catalogue)
    port = probe_port(host, port)
    debug_server = build_debug_server(
        prepared, browser=not no_browser, skill_paths=[str(p) for p in paths], planner=planner
    )
    debug_server.listening(host, port)
    urls = debug_server.descriptor.urls
    click.echo(f"debug console:  {urls.console}", err=True)
    click.echo(f"Debugger MCP:   {urls.debugger_mcp}", err=True)
    click.echo(f"skills MCP:     {urls.skills_mcp}", err=True)
    if debug_server.browser_error is not None:
        click.echo(f"skillc: warning: no headless browser: {debug_server.browser_error}", err=True)
        click.echo(f"skillc: {INSTALL_HINT}; meanwhile open the console URL in a browser", err=True)
    click.echo(json.dumps({"debugDescriptor": debug_server.descriptor.wire()}, ensure_ascii=False))

    def said(descriptor: Any) -> None:  # a browser that fails or dies later is said too, not only stored
        if descriptor.state == "error":
            click.echo(f"skillc: warning: {descriptor.error}", err=True)

    debug_server.observers.append(said)
    debug_server.uvicorn_server(host, port).run()
