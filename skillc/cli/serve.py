"""``skillc serve``: the skills as an MCP server, over HTTP (one process or several) or stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skillc.cli.options import (
    RuntimeFlags,
    auth_config,
    auth_options,
    check_approvals,
    consent_options,
    probe_port,
    runtime_options,
    server_options,
    width_option,
)
from skillc.cli.output import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from skillc.runtime.config import RuntimeConfig
    from skillc.server.consent import ConsentPolicy
    from skillc.server.runner import Prepared, ServeOptions


# The options that only mean something to the HTTP transport: given with --stdio, a usage error.
_HTTP_ONLY = {
    "host": "--host",
    "port": "--port",
    "dns_rebinding_protection": "--[no-]dns-rebinding-protection",
    "allowed_hosts": "--allowed-host",
    "allowed_origins": "--allowed-origin",
    "workers": "--workers",
    "graceful_timeout_s": "--graceful-timeout",
    "drain_s": "--drain-seconds",
    "auth_issuer": "--auth-issuer",
    "auth_jwks": "--auth-jwks",
    "auth_introspect": "--auth-introspect",
    "auth_client_id": "--auth-client-id",
    "auth_audience": "--auth-audience",
    "auth_scopes": "--auth-scope",
    "auth_user_claim": "--auth-user-claim",
    "resource_url": "--resource-url",
    "insecure_no_auth": "--insecure-no-auth",
}


def _given(ctx: click.Context, name: str) -> bool:
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


@click.command()
@server_options
@click.option(
    "--stdio",
    is_flag=True,
    help="Serve over stdin/stdout (the MCP stdio transport) instead of HTTP: JSON-RPC on stdout, "
    "every other line on stderr; closing stdin stops the server. Not with --host/--port.",
)
@consent_options
@runtime_options
@width_option("The card width in px (750rpx).")
@click.option(
    "--strict-output",
    is_flag=True,
    help="Advertise each tool's outputSchema and enforce it: a result that breaks it becomes an isError result. "
    "Without it, outputSchema is not advertised and a mismatch is a warning in the result's _meta and in the log.",
)
@click.option(
    "--no-ui-control",
    is_flag=True,
    help="Do not serve the ui_control__* tools (agents operating cards as their user would); "
    "the tool listing then says disabled_by_policy.",
)
@click.option(
    "--max-events",
    type=click.IntRange(1, 1_000_000),
    default=1000,
    show_default=True,
    help="Events kept per session in events://session/<id> (the oldest are dropped).",
)
@click.option(
    "--max-event-bytes",
    type=click.IntRange(64, 1_048_576),
    default=4096,
    show_default=True,
    help="UTF-8 bytes of one event message (longer ones are cut, with a truncation record).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The log on stderr, one line per request: readable text, or JSON, where every stderr line (start-up "
    "lines, warnings, tracebacks) is one JSON object. See docs/serve.md, Logs.",
)
@click.option(
    "--dns-rebinding-protection/--no-dns-rebinding-protection",
    default=True,
    show_default=True,
    help="Accept only loopback Host and Origin headers (plus --allowed-host / --allowed-origin).",
)
@click.option("--allowed-host", "allowed_hosts", multiple=True, help="Another accepted Host header, e.g. my.box:8765.")
@click.option("--allowed-origin", "allowed_origins", multiple=True, help="Another accepted Origin, e.g. https://x.y.")
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes on the one port, each with its own QuickJS runtimes, sharing the state store; "
    "a worker that dies is restarted. HTTP only. See docs/deploy.md.",
)
@click.option(
    "--state-pool-min",
    type=click.IntRange(0, 1000),
    default=1,
    show_default=True,
    help="PostgreSQL state store: connections each worker keeps open.",
)
@click.option(
    "--state-pool-max",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="PostgreSQL state store: connections each worker opens at most. Instances x workers x this must fit "
    "the server's max_connections (checked at start). See docs/deploy.md.",
)
@click.option(
    "--state-pool-timeout",
    "state_pool_timeout_s",
    type=click.FloatRange(0.01, 600),
    default=1.5,
    show_default=True,
    help="PostgreSQL state store: seconds a call waits for a free connection before it answers SRV051.",
)
@click.option(
    "--graceful-timeout",
    "graceful_timeout_s",
    type=click.FloatRange(0, 3600),
    default=30.0,
    show_default=True,
    help="On SIGTERM / Ctrl-C: stop accepting, give running calls this many seconds to finish, then exit 0.",
)
@click.option(
    "--drain-seconds",
    "drain_s",
    type=click.FloatRange(0, 3600),
    default=0.0,
    show_default=True,
    help="On SIGTERM, first serve this many seconds more with /readyz 503 and 'Connection: close' on every "
    "response, so a load balancer moves off before the listener closes (behind nginx: above its upstream "
    "keepalive_timeout). A second SIGTERM ends it. See docs/deploy.md.",
)
@auth_options
@click.pass_context
def serve(
    ctx: click.Context,
    paths: tuple[Path, ...],
    host: str,
    port: int,
    state_dir: Path | None,
    state_url: str | None,
    stdio: bool,
    consent: ConsentPolicy,
    runtime_flags: RuntimeFlags,
    width: int,
    strict_output: bool,
    no_ui_control: bool,
    max_events: int,
    max_event_bytes: int,
    log_format: str,
    dns_rebinding_protection: bool,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    workers: int,
    state_pool_min: int,
    state_pool_max: int,
    state_pool_timeout_s: float,
    graceful_timeout_s: float,
    drain_s: float,
    auth_issuer: str | None,
    auth_jwks: str | None,
    auth_introspect: str | None,
    auth_client_id: str | None,
    auth_client_secret_env: str,
    auth_audience: str | None,
    auth_scopes: tuple[str, ...],
    auth_user_claim: str | None,
    resource_url: str | None,
    insecure_no_auth: bool,
) -> None:
    """Serve skills as an MCP server: APIs become tools, cards become MCP Apps.

    PATHS are skill folders or mini-program project folders. The server speaks Streamable HTTP
    (stateless, JSON responses) at http://HOST:PORT/mcp, both the 2026-07-28 protocol and the
    2025 initialize handshake; a browser opening that URL (or /) gets a page that says how to
    connect. With --stdio it speaks the MCP stdio transport instead (for clients that start their
    servers themselves). L3/L4 APIs ask for the user's consent by elicitation where the client
    supports it, else in the card (an approve/decline control, for hosts that show cards), else
    are refused unless approved with --approve / --approve-all. The timers of
    dynamic cards (scope.dynamic) run on their own in real time (at least 1000 ms apart, at most 8
    per card); the card view reads their patches through an app-only tool. Each request is one
    line on stderr (--log-format). See docs/serve.md.

    Without --auth-issuer the server has a single user (--user) and listens on loopback only
    (--insecure-no-auth to listen elsewhere anyway). With it, every MCP request needs an OAuth
    bearer token, and each runs as the user its token names (docs/serve.md, "Authentication").

    \b
    Example:
      skillc serve examples/coffee-skill --port 8765
      skillc serve skill-a skill-b --approve confirmOrder --state-dir /tmp/state
      skillc serve --stdio examples/coffee-skill
      skillc serve examples/coffee-skill --host 0.0.0.0 --resource-url https://mcp.example.com/mcp \\
        --auth-issuer https://auth.example.com --auth-jwks https://auth.example.com/jwks.json
    """
    caller = runtime_flags.caller()
    if stdio:
        given = [flag for name, flag in _HTTP_ONLY.items() if _given(ctx, name)]
        if given:
            click.echo(
                f"skillc: error: {', '.join(given)} {'is an HTTP option' if len(given) == 1 else 'are HTTP options'}"
                " and cannot be given with --stdio (which serves over stdin/stdout)",
                err=True,
            )
            sys.exit(EXIT_USAGE)

    from skillc.server.stdio import guard_stdio

    wire = guard_stdio() if stdio else None  # from here on, only JSON-RPC reaches the real stdout

    from skillc.diagnostics import render_text
    from skillc.ir.viewport import Viewport
    from skillc.runtime.config import PoolSettings
    from skillc.server import log_setup
    from skillc.server.events import EventLimits
    from skillc.server.runner import ServeOptions, banner, endpoint_url, prepare, serve_foreground

    # From here on, under json, every line on stderr is a JSON object (banner, warnings, tracebacks).
    log_setup.install("json" if log_format == "json" else "text", sys.stderr)
    auth = None
    if not stdio:
        from skillc.server.runner import UnsafeBind, check_bind

        if auth_issuer is None:  # said before the port is probed: the address is the mistake
            try:
                check_bind(host, None, insecure_no_auth)
            except UnsafeBind as err:
                click.echo(f"skillc: error: {err}", err=True)
                sys.exit(EXIT_USAGE)
        port = probe_port(host, port)  # a busy port is a usage error before the slow start
        auth = auth_config(
            issuer=auth_issuer,
            jwks=auth_jwks,
            introspect=auth_introspect,
            client_id=auth_client_id,
            secret_env=auth_client_secret_env,
            audience=auth_audience,
            scopes=auth_scopes,
            user_claim=auth_user_claim,
            resource_url=resource_url,
            insecure_no_auth=insecure_no_auth,
            host=host,
            port=port,
        )
        if auth is not None and caller is not None:
            # Each request runs as its token's user: one configured user would be silently ignored.
            click.echo("skillc: error: --user / --anonymous cannot be given with --auth-issuer", err=True)
            sys.exit(EXIT_USAGE)
    runtime = runtime_flags.config(state_dir, state_url)
    pool = PoolSettings(min_size=state_pool_min, max_size=state_pool_max, timeout_s=state_pool_timeout_s)
    runtime = runtime.model_copy(update={"state_pool": pool})
    check_pool_budget(runtime, workers)
    options = ServeOptions(
        paths=paths,
        host=host,
        port=port,
        runtime=runtime,
        consent=consent,
        viewport=Viewport(width=width),
        dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        strict_output=strict_output,
        ui_control=not no_ui_control,
        events=EventLimits(max_events=max_events, max_message_bytes=max_event_bytes),
        graceful_timeout_s=graceful_timeout_s,
        drain_s=drain_s,
        auth=auth,
        insecure_no_auth=insecure_no_auth,
    )
    prepared = prepare(options, lambda s: click.echo(f"loading {s.package.name} ({s.display})...", err=True))
    from skillc.diagnostics import Diagnostic
    from skillc.runtime.host.identity import key_in_store

    if key_in_store(runtime):
        where = "$SKILLC_IDENTITY_KEY or $SKILLC_IDENTITY_KEY_FILE"
        message = f"the wx.login signing key is a row of the state store: give it with {where} (docs/deploy.md)"
        prepared.diagnostics.append(Diagnostic.make("SRV090", message))
    if prepared.diagnostics:
        click.echo(render_text(prepared.diagnostics), err=True, nl=False)
    catalogue = prepared.server.catalogue
    if not catalogue.apis:
        click.echo("skillc: error: no skill could be served", err=True)
        sys.exit(EXIT_USAGE)
    check_approvals(consent, catalogue)
    for skill in catalogue.skills:
        tools = [a.tool_name for a in catalogue.apis.values() if a.skill == skill.package.name]
        click.echo(f"serving {skill.package.name} ({skill.display}): {', '.join(tools)}", err=True)
    if stdio:
        from skillc.server.stdio import STDIO_BANNER, run_stdio

        stopped_by = run_stdio(prepared.server, wire, lambda: click.echo(STDIO_BANNER, err=True))
        sys.exit(EXIT_OK if stopped_by is None else 128 + stopped_by)
    if workers > 1:
        sys.exit(_serve_workers(prepared, options, workers, log_format))
    serve_foreground(prepared, host, port, lambda h, p: click.echo(banner(endpoint_url(h, p), options), err=True))


def _serve_workers(prepared: Prepared, options: ServeOptions, workers: int, log_format: str) -> int:
    """``serve --workers N``: the skills loaded here only to check them (the usage errors and the
    listing above); each worker loads its own (skillc.server.supervisor)."""
    import asyncio
    from typing import Literal

    from skillc.server.runner import banner, endpoint_url
    from skillc.server.supervisor import Supervisor, reserve_port
    from skillc.server.worker import worker_options

    asyncio.run(prepared.server.close())
    reservation = reserve_port(options.host, options.port)
    try:
        fmt: Literal["text", "json"] = "json" if log_format == "json" else "text"
        supervisor = Supervisor(worker_options(options, fmt), workers, lambda line: click.echo(line, err=True))
        endpoint = endpoint_url(options.host, options.port)
        return supervisor.run(lambda: click.echo(banner(endpoint, options, workers), err=True))
    finally:
        reservation.close()


def check_pool_budget(runtime: RuntimeConfig, workers: int) -> None:
    """Refuse (exit 2) a PostgreSQL pool configuration that cannot fit the server's max_connections."""
    from skillc.runtime.state import StateError, state_url_of
    from skillc.runtime.state.budget import pool_budget

    url = state_url_of(runtime)
    if url.kind != "postgresql":
        return
    try:
        budget = pool_budget(url, workers)
    except StateError:
        return  # an unreachable store is reported, with its reason, when the server opens it
    refusal = budget.refusal()
    if refusal is not None:
        click.echo(f"skillc: error: {refusal}", err=True)
        sys.exit(EXIT_USAGE)
    warning = budget.warning()
    if warning is not None:
        click.echo(f"skillc: warning: {warning}", err=True)
