"""Options several commands share, and the parsers of their values: one definition, so names,
ranges and help agree from command to command."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from skillc.cli.output import EXIT_USAGE, echo_text

if TYPE_CHECKING:
    from skillc.diagnostics import Diagnostic
    from skillc.runtime.config import RuntimeConfig, UserProfile
    from skillc.server.consent import ConsentPolicy

_T = TypeVar("_T")

# The viewport widths every command accepts (the Viewport model's own bounds).
WIDTH_MIN, WIDTH_MAX = 1, 10000


def width_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--width", type=click.IntRange(WIDTH_MIN, WIDTH_MAX), default=375, show_default=True, help=help_text
    )


color_option = click.option(
    "--color",
    "color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour diagnostics: auto = only on a terminal and when NO_COLOR is not set.",
)

# Identity (docs/security.md, "Identity"): who the caller is and how long a wx.login lasts.
anonymous_option = click.option(
    "--anonymous",
    is_flag=True,
    help="Call as nobody signed in (user DID did:skillc:anonymous): APIs at risk L1 and above are refused "
    "(RUN060), wx.login fails and wx.request carries no identity. Not with --user.",
)
login_ttl_option = click.option(
    "--login-ttl",
    "login_ttl_s",
    type=click.FloatRange(0, 366 * 86400, min_open=True),
    default=None,
    help="Seconds a capability token from wx.login stays valid [7200].",
)


def caller_did(user_did: str | None, anonymous: bool) -> str | None:
    """The user DID of ``--user`` / ``--anonymous`` (None: the configured one); both is a usage error."""
    from skillc.runtime.contracts import ANONYMOUS_USER_DID

    if anonymous and user_did is not None:
        click.echo("skillc: error: --anonymous and --user cannot be given together (pick one caller)", err=True)
        sys.exit(EXIT_USAGE)
    return ANONYMOUS_USER_DID if anonymous else user_did


# The user profile the wx stand-ins answer from (docs/runtime.md, "Stand-ins for WeChat-only APIs").
profile_option = click.option(
    "--profile",
    "profile_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A JSON file of the user's phone, addresses and location: what wx.getPhoneNumber, wx.chooseAddress, "
    "wx.getLocation and wx.getFuzzyLocation answer (each with the user's consent at L4). Without it they fail.",
)


def user_profile(path: Path | None) -> UserProfile | None:
    """The ``--profile`` file as a UserProfile (None without one); a bad file is a usage error."""
    if path is None:
        return None
    from skillc.runtime.host.profile import read_profile

    return _usable(path, read_profile(path), "user profile")


def _usable(path: Path, read: tuple[_T | None, list[Diagnostic], str], what: str) -> _T:
    """What a file option's reader made of ``path``; its problems at their lines and exit 2 when nothing."""
    value, problems, text = read
    if value is None:
        from skillc.diagnostics import render_text

        echo_text(render_text(problems, {str(path): text}), err=True, nl=False)
        click.echo(f"skillc: error: {path} is not a usable {what}", err=True)
        sys.exit(EXIT_USAGE)
    return value


# Storage a skill expects before its first call (docs/runtime.md, "Storage"): a published skill's
# preview mode is one key away.
storage_option = click.option(
    "--storage",
    "storage_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A JSON object of key -> value written into the caller's wx storage before the first call "
    '(e.g. {"mp_skills_preview_mode": true}); values are stored as wx.setStorageSync would store them.',
)


def storage_seed(path: Path | None) -> dict[str, Any] | None:
    """The ``--storage`` file's keys and values (None without one); a bad file is a usage error."""
    if path is None:
        return None
    from skillc.runtime.host.storage import read_storage_seed

    return _usable(path, read_storage_seed(path), "storage file")


# The run-time configuration every command that runs a skill's JavaScript takes (call, serve, debug):
# one table, so a flag means the same wherever it is given (tests/test_cli_shared_options.py holds
# each command to it).
RUNTIME_OPTIONS: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...] = (
    click.option(
        "--timeout",
        "timeout_s",
        type=click.FloatRange(0, 86400, min_open=True),
        default=None,
        help="Seconds per API call, middleware + handler [300].",
    ),
    click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable)."),
    profile_option,
    storage_option,
    click.option(
        "--user",
        "user_did",
        default=None,
        help="The caller's user DID: storage, logins and the audit log are scoped by it [did:example:user].",
    ),
    anonymous_option,
    login_ttl_option,
)


@dataclass(frozen=True)
class RuntimeFlags:
    """What the RUNTIME_OPTIONS said, as one value (the command's function gets ``runtime_flags``)."""

    timeout_s: float | None
    allow_hosts: tuple[str, ...]
    profile_path: Path | None
    storage_path: Path | None
    user_did: str | None
    anonymous: bool
    login_ttl_s: float | None

    def caller(self) -> str | None:
        """The ``--user`` / ``--anonymous`` DID (None: the configured one); both is a usage error."""
        return caller_did(self.user_did, self.anonymous)

    def config(self, state_dir: Path | None, state_url: str | None, *, with_user: bool = True) -> RuntimeConfig:
        """The RuntimeConfig these flags describe; a bad --profile / --storage file is a usage error.
        ``with_user=False`` leaves the caller out (``call`` passes it per call instead)."""
        from skillc.runtime.config import RuntimeConfig, default_state_dir

        config = RuntimeConfig(
            state_dir=state_dir or default_state_dir(),
            state_url=state_url,
            allowed_hosts=self.allow_hosts,
            profile=user_profile(self.profile_path),
            storage_seed=storage_seed(self.storage_path),
        )
        update: dict[str, Any] = {}
        if self.timeout_s is not None:
            update["timeout_s"] = self.timeout_s
        if self.login_ttl_s is not None:
            update["login_ttl_s"] = self.login_ttl_s
        caller = self.caller() if with_user else None
        if caller is not None:
            update["identity"] = config.identity.model_copy(update={"user_did": caller})
        return config.model_copy(update=update) if update else config


def runtime_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The RUNTIME_OPTIONS, handed to the command as one ``runtime_flags: RuntimeFlags``."""
    names = [field.name for field in fields(RuntimeFlags)]

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> Any:
        flags = RuntimeFlags(**{name: kwargs.pop(name) for name in names})
        return f(*args, runtime_flags=flags, **kwargs)

    for option in reversed(RUNTIME_OPTIONS):
        command = option(command)
    return command


# Consent for the commands that serve (serve, debug): who approves an L3/L4 call.
CONSENT_OPTIONS: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...] = (
    click.option(
        "--approve-all", is_flag=True, help="Approve every L3/L4 call without asking (tests, trusted setups)."
    ),
    click.option(
        "--approve",
        "approve",
        multiple=True,
        help="A tool (its tool name, or SKILL/API) approved without asking (repeatable).",
    ),
    click.option(
        "--no-elicit",
        is_flag=True,
        help="Never ask the user for consent (neither by elicitation nor in the card); refuse L3/L4 calls instead.",
    ),
)


def consent_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--approve-all``, ``--approve TOOL`` and ``--no-elicit``, handed over as ``consent: ConsentPolicy``."""

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> Any:
        from skillc.server.consent import ConsentPolicy

        policy = ConsentPolicy(
            approve_all=kwargs.pop("approve_all"),
            approve=frozenset(kwargs.pop("approve")),
            elicit=not kwargs.pop("no_elicit"),
        )
        return f(*args, consent=policy, **kwargs)

    for option in reversed(CONSENT_OPTIONS):
        command = option(command)
    return command


def check_approvals(consent: ConsentPolicy, catalogue: Any) -> None:
    """An ``--approve`` that names no served tool is a usage error (a typo, or an API two skills
    share: never guess), with the tool names it could have meant."""
    apis = list(catalogue.apis.values())
    unknown = consent.unknown(apis)
    if not unknown:
        return
    click.echo(
        f"skillc: error: --approve {', '.join(unknown)}: no served tool has that name "
        "(use a tool name from the list below, or SKILL/API)",
        err=True,
    )
    for a in apis:
        click.echo(f"  {a.tool_name}  ({a.skill}/{a.spec.name})", err=True)
    sys.exit(EXIT_USAGE)


STATE_URL_ENV = "SKILLC_STATE_URL"  # the same name as skillc.runtime.config.STATE_URL_ENV, without importing it
STATE_HELP = (
    "Where storage, cards, audit and logins live: postgresql://USER@HOST/DB, sqlite:///PATH or a file path "
    f"[${STATE_URL_ENV}, else state.sqlite3 in the state folder]."
)


def validate_state_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from skillc.runtime.state.url import StateUrlError, parse_state_url

    text = value if value is not None else os.environ.get(STATE_URL_ENV) or None
    if text is None:
        return None
    try:
        parse_state_url(text)
    except StateUrlError as err:
        source = "--state" if value is not None else f"${STATE_URL_ENV}"
        raise click.BadParameter(str(err), ctx=ctx, param_hint=source) from None
    return text


def state_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--state URL``: checked here, so a bad URL is a usage error before anything starts."""
    return click.option(
        "--state", "state_url", default=None, metavar="URL", callback=validate_state_url, help=STATE_HELP
    )(f)


def server_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """PATHS, --host, --port and --state-dir: the same for every command that starts a server."""
    for option in reversed(
        (
            click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path)),
            click.option("--host", default="127.0.0.1", show_default=True, help="The interface to listen on."),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=8765,
                show_default=True,
                help="The port (0 picks a free one).",
            ),
            click.option(
                "--state-dir",
                type=click.Path(path_type=Path, file_okay=False),
                default=None,
                help="Where storage, cards and the audit log live [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
            ),
            click.option(
                "--state", "state_url", default=None, metavar="URL", callback=validate_state_url, help=STATE_HELP
            ),
        )
    ):
        f = option(f)
    return f


def probe_port(host: str, port: int) -> int:
    """The port a server will get on ``host`` (``--port 0``: a free one), or a usage error when it is
    busy, said before anything is served. (Handing uvicorn the bound socket instead cost ~40 ms per
    request here.)"""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            click.echo(f"skillc: error: cannot listen on {host}:{port}: {err.strerror or err}", err=True)
            sys.exit(EXIT_USAGE)
        return int(probe.getsockname()[1])


def json_alias(fmt: str, as_json: bool) -> str:
    """``--json`` is kept as the short form of ``--format json``."""
    return "json" if as_json else fmt


def parse_args_json(text: str, option: str = "--args") -> object:
    """``--args`` as JSON: bounded in depth before it is parsed (json.loads recurses)."""
    return _bounded_json(text, f"{option} is too deeply nested", f"{option} is not valid JSON: {{err}}")


def parse_json_text(text: str, label: str) -> object:
    """A JSON data file: bounded in depth before it is parsed; a one-line error otherwise."""
    return _bounded_json(text, f"{label} is too deeply nested", f"{label}: not JSON ({{err}})")


def _bounded_json(text: str, too_deep_prefix: str, not_json: str) -> object:
    from skillc.runtime.api.values import DEPTH_LIMIT, json_depth, too_deep

    depth = json_depth(text)
    if depth > DEPTH_LIMIT:
        click.echo(f"skillc: error: {too_deep_prefix}: {too_deep(depth)}", err=True)
        sys.exit(EXIT_USAGE)
    try:
        return json.loads(text)
    except ValueError as err:
        click.echo("skillc: error: " + not_json.format(err=err), err=True)
        sys.exit(EXIT_USAGE)


# Auth (docs/serve.md, "Authentication"): serve as an OAuth 2.1 protected resource.
AUTH_SECRET_ENV = "SKILLC_AUTH_CLIENT_SECRET"  # the same name as skillc.server.auth.config.CLIENT_SECRET_ENV


def auth_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--auth-*`` options, ``--resource-url`` and ``--insecure-no-auth``."""
    for option in reversed(
        (
            click.option(
                "--auth-issuer",
                default=None,
                metavar="URL",
                help="Require a bearer token issued by this OAuth authorization server on every MCP request "
                "(its iss); each request runs as the token's user. With --auth-jwks or --auth-introspect.",
            ),
            click.option(
                "--auth-jwks",
                default=None,
                metavar="URL|FILE",
                help="Verify tokens as JWTs signed by a key of this JSON Web Key Set (an https URL, or a file).",
            ),
            click.option(
                "--auth-introspect",
                default=None,
                metavar="URL",
                help="Verify tokens by RFC 7662 introspection at this URL, as --auth-client-id with the secret "
                f"in ${AUTH_SECRET_ENV} (or the variable --auth-client-secret-env names).",
            ),
            click.option("--auth-client-id", default=None, help="The OAuth client id used for introspection."),
            click.option(
                "--auth-client-secret-env",
                default=AUTH_SECRET_ENV,
                show_default=True,
                metavar="NAME",
                help="The environment variable that holds the introspection client secret (never a flag: "
                "flags show in ps).",
            ),
            click.option(
                "--auth-audience",
                default=None,
                help="What a token's aud must name [the --resource-url].",
            ),
            click.option(
                "--auth-scope",
                "auth_scopes",
                multiple=True,
                help="A scope every token must grant (repeatable); a token without it gets 403.",
            ),
            click.option(
                "--auth-user-claim",
                default=None,
                metavar="CLAIM",
                help="Take the caller's user DID from this token claim (its value must be a DID) "
                "[did:web:<issuer host and path>:<sub>].",
            ),
            click.option(
                "--resource-url",
                default=None,
                metavar="URL",
                help="The public URL of /mcp, as clients reach it (the protected-resource metadata's resource "
                "and the default audience) [http://HOST:PORT/mcp; required when HOST is not loopback].",
            ),
            click.option(
                "--insecure-no-auth",
                is_flag=True,
                help="Without --auth-issuer, listen on a non-loopback --host anyway: every caller on the network "
                "acts as the one configured user (its storage, logins and consent). Not with --auth-issuer.",
            ),
        )
    ):
        f = option(f)
    return f


def _usage(message: str) -> None:
    click.echo(f"skillc: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _https_or_loopback(url: str, flag: str) -> None:
    """An https URL, or http to a loopback host (a test or a sidecar): tokens and secrets never
    travel in clear text over a network."""
    from urllib.parse import urlsplit

    from skillc.server.runner import is_loopback

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        _usage(f"{flag} {url}: not an http(s) URL")
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        _usage(f"{flag} {url}: use https (http only to a loopback host)")


def auth_config(
    *,
    issuer: str | None,
    jwks: str | None,
    introspect: str | None,
    client_id: str | None,
    secret_env: str,
    audience: str | None,
    scopes: tuple[str, ...],
    user_claim: str | None,
    resource_url: str | None,
    insecure_no_auth: bool,
    host: str,
    port: int,
) -> Any:
    """The AuthConfig the flags describe (None: no auth); a bad combination is a usage error."""
    from skillc.server.auth.config import AuthConfig
    from skillc.server.runner import endpoint_url, is_loopback

    given = {
        "--auth-jwks": jwks,
        "--auth-introspect": introspect,
        "--auth-client-id": client_id,
        "--auth-audience": audience,
        "--auth-scope": scopes or None,
        "--auth-user-claim": user_claim,
        "--resource-url": resource_url,
    }
    if issuer is None:
        named = [flag for flag, value in given.items() if value is not None]
        if named:
            _usage(f"{', '.join(named)} need --auth-issuer (the authorization server that issues the tokens)")
        return None
    if insecure_no_auth:
        _usage("--insecure-no-auth and --auth-issuer contradict each other (pick one)")
    if (jwks is None) == (introspect is None):
        _usage("--auth-issuer needs exactly one of --auth-jwks URL|FILE and --auth-introspect URL")
    _https_or_loopback(issuer, "--auth-issuer")
    jwks_url: str | None = None
    jwks_file: Path | None = None
    if jwks is not None:
        if client_id is not None:
            _usage("--auth-client-id is for --auth-introspect; JWTs are verified by --auth-jwks alone")
        if jwks.startswith(("http://", "https://")):
            _https_or_loopback(jwks, "--auth-jwks")
            jwks_url = jwks
        else:
            from skillc.server.auth.jwks_file import read_jwks

            jwks_file = Path(jwks)
            _usable(jwks_file, read_jwks(jwks_file), "JSON Web Key Set (--auth-jwks)")
            jwks_file = jwks_file.resolve()  # workers start elsewhere
    if introspect is not None:
        _https_or_loopback(introspect, "--auth-introspect")
        if client_id is None:
            _usage("--auth-introspect needs --auth-client-id (the server authenticates as that client)")
        if not os.environ.get(secret_env):
            _usage(f"--auth-introspect needs the client secret in the environment variable ${secret_env}")
    if resource_url is None:
        if not is_loopback(host):
            _usage(f"--auth-issuer with --host {host} needs --resource-url (the public URL clients reach /mcp at)")
        resource_url = endpoint_url(host, port)
    else:
        _https_or_loopback(resource_url, "--resource-url")
    return AuthConfig(
        issuer=issuer,
        resource_url=resource_url,
        audience=audience,
        jwks_url=jwks_url,
        jwks_file=jwks_file,
        introspection_url=introspect,
        client_id=client_id,
        client_secret_env=secret_env,
        required_scopes=scopes,
        user_claim=user_claim,
    )
