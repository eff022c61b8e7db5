"""``skillc run``: replay a scripted conversation of calls, taps and follow-ups."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from skillc.cli.options import (
    anonymous_option,
    caller_did,
    json_alias,
    login_ttl_option,
    profile_option,
    state_option,
    storage_option,
    storage_seed,
    user_profile,
    width_option,
)
from skillc.cli.output import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, echo_text, one_line


@click.command()
@click.argument("skill", type=click.Path(path_type=Path))
@click.option(
    "--script",
    "script_path",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The flow: a JSON file of steps (call, tap, follow, expire, wait, visibility); see docs/components.md.",
)
@width_option("Viewport width in px (750rpx).")
@click.option("--user", "user_did", default=None, help="The user DID (storage and cards are scoped by it).")
@anonymous_option
@login_ttl_option
@click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable).")
@profile_option
@storage_option
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where storage, audit and card state live [a fresh temporary folder, so replays repeat].",
)
@state_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: each step for a reader; json: every step with results, Render IR and patches.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def run(
    skill: Path,
    script_path: Path,
    width: int,
    user_did: str | None,
    anonymous: bool,
    login_ttl_s: float | None,
    allow_hosts: tuple[str, ...],
    profile_path: Path | None,
    storage_path: Path | None,
    state_dir: Path | None,
    state_url: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Replay a scripted conversation: API calls, taps on card nodes, follow-ups, approvals.

    Each step prints the API result, a compact outline of the card's Render IR, the patches a
    tap produced, the console lines of the API and of the card (mount, taps, timers; with
    file:line) and the actions the card asked for (follow-up messages, api/calls, expiry,
    wx.previewMedia and wx.makePhoneCall); a map or canvas shows its static preview.
    A card that fails to render is replaced by the generic CardSpec fallback card. A call or
    follow step's "payment" ("success", "fail", "cancel") is how the test payment provider answers
    the wx.requestPayment calls of that step; --profile supplies the user's phone, addresses and
    location. Time is virtual: the timers of dynamic cards (scope.dynamic) fire only in a
    {"wait": MS} step, which prints each callback's patches; {"visibility": "hidden"} pauses them.

    Exit status: 0 every step ran, 1 a step failed (no such node, an error diagnostic),
    2 usage error (bad script, not a skill, a bad --profile file).

    \b
    Example:
      skillc run examples/coffee-skill --script examples/coffee-skill/flows/order.json
      skillc run examples/coffee-skill --script examples/coffee-skill/flows/order-payment-fails.json
    """
    import asyncio
    import itertools
    import tempfile

    from skillc.backends.cardspec_fallback import fallback_card
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.package import load_skill
    from skillc.ir.viewport import Viewport
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.cards.card_host import CardHost
    from skillc.runtime.cards.card_models import FallbackRequest
    from skillc.runtime.cards.card_timers import VirtualClock
    from skillc.runtime.config import RuntimeConfig
    from skillc.runtime.flows.flow import FlowRunner, StepRecord, load_flow
    from skillc.runtime.flows.report import render_flow

    try:
        script_text = script_path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        click.echo(f"skillc: error: cannot read the flow script {script_path}: {one_line(err)}", err=True)
        sys.exit(EXIT_USAGE)
    script, problems = load_flow(script_text, str(script_path))
    if script is None:
        echo_text(render_text(problems, {str(script_path): script_text}), err=True, nl=False)
        click.echo(f"skillc: error: {script_path} is not a usable flow script", err=True)
        sys.exit(EXIT_USAGE)
    profile = user_profile(profile_path)
    seed = storage_seed(storage_path)
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        click.echo(render_text(sink, pkg.sources if pkg else {}, prefix=str(skill)), err=True, nl=False)
        click.echo(f"skillc: error: {skill} cannot run: it has no usable mcp.json", err=True)
        sys.exit(EXIT_USAGE)

    def build_fallback(request: FallbackRequest) -> dict[str, object]:
        return fallback_card(request.structured_content, title=request.title, text=request.text)

    user_did = caller_did(user_did, anonymous)

    async def replay(state: Path) -> list[StepRecord]:
        config = RuntimeConfig(
            state_dir=state, state_url=state_url, allowed_hosts=allow_hosts, profile=profile, storage_seed=seed
        )
        if login_ttl_s is not None:
            config = config.model_copy(update={"login_ttl_s": login_ttl_s})
        runtime = ApiRuntime(pkg, config)
        counter = itertools.count(1)
        # Dynamic cards' timers run on the replay's own clock: only wait steps move it.
        clock = VirtualClock()
        host = CardHost(runtime, viewport=Viewport(width=width), card_ids=lambda: f"card-{next(counter)}", clock=clock)
        try:
            context = runtime.context(user_did=user_did, session_id="flow-" + script_path.stem)
            return await FlowRunner(host, context, build_fallback).run(script)
        finally:
            await host.close()
            runtime.close()

    with tempfile.TemporaryDirectory(prefix="skillc-run-") as tmp:
        records = asyncio.run(replay(state_dir or Path(tmp)))
    if json_alias(fmt, as_json) == "json":
        echo_text(json.dumps([r.wire() for r in records], ensure_ascii=False, indent=2))
    else:
        echo_text(render_flow(records, pkg.sources), nl=False)
    sys.exit(EXIT_ERRORS if any(r.failed for r in records) else EXIT_OK)
