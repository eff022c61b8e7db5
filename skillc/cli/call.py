"""``skillc call``: one atomic API call, as the AI-mode runtime makes it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from skillc.cli.options import (
    RuntimeFlags,
    color_option,
    json_alias,
    parse_args_json,
    runtime_options,
    state_option,
)
from skillc.cli.output import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, echo_text, use_color

if TYPE_CHECKING:
    from skillc.diagnostics import Diagnostic


@click.command()
@click.argument("skill", type=click.Path(path_type=Path))
@click.argument("api")
@click.option("--args", "args_json", default="{}", show_default=True, help="The arguments, as a JSON object.")
@runtime_options
@click.option(
    "--token",
    "capability_token",
    default=None,
    help="A capability token (the code of an earlier wx.login) the caller presents: wx.checkSession validates it "
    "and wx.request carries it while it is valid.",
)
@click.option("--session", "session_id", default=None, help="The session id wx.modelContext.getSessionId returns.")
@click.option("--approve", is_flag=True, help="Approve an L3/L4 API for this call (otherwise it is refused).")
@click.option(
    "--payment",
    type=click.Choice(["success", "fail", "cancel"]),
    default="success",
    show_default=True,
    help="How the test payment provider answers the call's wx.requestPayment (no money moves).",
)
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where storage and the audit log live [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
)
@state_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the result, console and diagnostics for a reader; json: the whole outcome "
    "(result, console, diagnostics, audit).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@color_option
def call(
    skill: Path,
    api: str,
    args_json: str,
    runtime_flags: RuntimeFlags,
    capability_token: str | None,
    session_id: str | None,
    approve: bool,
    payment: str,
    state_dir: Path | None,
    state_url: str | None,
    fmt: str,
    as_json: bool,
    color: str,
) -> None:
    """Call one atomic API of a skill, as the AI-mode runtime would, and print the result.

    The skill's index.js runs in a fresh sandboxed QuickJS context; the arguments are checked
    against the API's inputSchema (defaults filled in), and an argument whose schema says
    "format": "image" or "file" (a local upload path) answers unsupported_format; APIs at risk
    level L3/L4 need --approve; L2+ calls are written to the audit log. Prints the
    AtomicApiResult (_meta, the card's part, apart) and the captured console.
    wx.requestPayment is answered by the test payment provider (--payment); wx.getPhoneNumber,
    chooseAddress, getLocation and getFuzzyLocation by --profile; each only with --approve.

    Exit status: 0 result ok, 1 isError result, 2 usage error (not a skill, an API mcp.json
    does not declare, bad --args, a bad --profile file).

    \b
    Example:
      skillc call examples/coffee-skill searchDrinks --args '{"keyword": "latte"}'
      skillc call examples/coffee-skill confirmOrder --args '{"drinkId": "d01"}' --approve --format json
      skillc call examples/coffee-skill payOrder --args '{"orderId": "MB000001"}' --approve --payment cancel
    """
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.package import load_skill
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.api.report import render_outcome
    from skillc.runtime.host.payment import PaymentOutcome, ScriptedPaymentProvider

    arguments = parse_args_json(args_json)
    user_did = runtime_flags.caller()
    config = runtime_flags.config(state_dir, state_url, with_user=False)
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        click.echo(render_text(sink, pkg.sources if pkg else {}, prefix=str(skill)), err=True, nl=False)
        click.echo(f"skillc: error: {skill} cannot be called: it has no usable mcp.json", err=True)
        sys.exit(EXIT_USAGE)
    if pkg.manifest.api(api) is None:
        names = ", ".join(a.name for a in pkg.manifest.apis) or "none"
        click.echo(f"skillc: error: {skill} declares no API named {api!r} in mcp.json (APIs: {names})", err=True)
        sys.exit(EXIT_USAGE)
    payments = ScriptedPaymentProvider(cast(PaymentOutcome, payment))
    runtime = ApiRuntime(pkg, config, approver=(lambda _request: True) if approve else None, payments=payments)
    try:
        context = runtime.context(api, user_did=user_did, session_id=session_id, capability_token=capability_token)
        outcome = runtime.call_blocking(api, arguments, context, timeout_s=runtime_flags.timeout_s)
    finally:
        runtime.close()
    if not approve:
        outcome.diagnostics = [_approve_hint(d) for d in outcome.diagnostics]
    if json_alias(fmt, as_json) == "json":
        echo_text(json.dumps(outcome.wire(), ensure_ascii=False, indent=2))
    else:
        # The diagnostics are located at the skill (its path), not the bare file names the runtime has.
        paint = use_color(color)
        body = render_outcome(outcome.model_copy(update={"diagnostics": []}), pkg.sources)
        diags = render_text(outcome.diagnostics, pkg.sources, prefix=str(skill), color=paint)
        echo_text(body + diags, nl=False, color=paint)
    code = EXIT_ERRORS if outcome.result.is_error else EXIT_OK
    if runtime.overrunning:
        # A worker still runs a native built-in past the deadline; exiting normally would join it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _approve_hint(diag: Diagnostic) -> Diagnostic:
    """The runtime's refusal of an L3/L4 call (RUN019) says how to approve it from this command."""
    if diag.code != "RUN019":
        return diag
    hint = "pass --approve to approve this call as the user would"
    return diag.model_copy(update={"hint": f"{diag.hint}; {hint}" if diag.hint else hint})
