"""The auth in front of ``/mcp``: the SDK's bearer backend verifies the token
(:class:`~mcp.server.auth.middleware.bearer_auth.BearerAuthBackend`), its
:class:`~mcp.server.auth.middleware.bearer_auth.RequireAuthMiddleware` answers 401 (with
``WWW-Authenticate: Bearer ... resource_metadata="..."``) or 403 for a missing scope, its
:class:`~mcp.server.auth.middleware.auth_context.AuthContextMiddleware` makes ``get_access_token()``
work, and :class:`BindCaller` binds the request's :class:`~skillc.server.caller.Caller`, which every
part that scopes by user reads (skillc.server.caller).

Both context variables are set in the request's task before the SDK's stateless session manager
starts the task that runs the MCP handlers; a task copies its parent's context when it starts, so
the handlers see them (tests/test_serve_auth.py checks it through a real call)."""

from __future__ import annotations

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from pydantic import AnyHttpUrl
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from skillc.server.auth.config import AuthConfig
from skillc.server.auth.identity import caller_of
from skillc.server.auth.introspection import IntrospectionVerifier
from skillc.server.auth.jwks_file import read_jwks
from skillc.server.auth.jwt_verifier import JwtVerifier
from skillc.server.caller import calling_as


def token_verifier(config: AuthConfig) -> TokenVerifier:
    """The verifier ``config`` names (a JWKS file is read again here: each worker reads its own)."""
    if config.introspection_url is not None:
        return IntrospectionVerifier(config)
    if config.jwks_file is not None:
        keys, problems, _text = read_jwks(config.jwks_file)
        if keys is None:
            raise ValueError("; ".join(d.message for d in problems) or "the JWKS file is unusable")
        return JwtVerifier(config, keys)
    return JwtVerifier(config)


class BindCaller:
    """Run the rest of the request as the caller its verified token names."""

    def __init__(self, app: ASGIApp, config: AuthConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        caller = None
        if isinstance(user, AuthenticatedUser):
            token = user.access_token
            caller = caller_of(token.claims or {}, self.config, token.client_id)
        if caller is None:  # RequireAuthMiddleware lets nothing else through; never run as nobody
            raise RuntimeError("an authenticated request without a caller")
        with calling_as(caller):
            await self.app(scope, receive, send)


def metadata_url(config: AuthConfig) -> str:
    """Where the protected-resource metadata (RFC 9728) of ``config.resource_url`` is served."""
    return str(build_resource_metadata_url(AnyHttpUrl(config.resource_url)))


def protect(app: ASGIApp, config: AuthConfig, verifier: TokenVerifier) -> ASGIApp:
    """``app`` behind a verified bearer token with every required scope."""
    inner = AuthContextMiddleware(BindCaller(app, config))
    required = RequireAuthMiddleware(inner, list(config.required_scopes), AnyHttpUrl(metadata_url(config)))
    return AuthenticationMiddleware(required, backend=BearerAuthBackend(verifier))


def metadata_routes(config: AuthConfig) -> list[Route]:
    """The protected-resource metadata document: this resource, its authorization server, its scopes."""
    return create_protected_resource_routes(
        resource_url=AnyHttpUrl(config.resource_url),
        authorization_servers=[AnyHttpUrl(config.issuer)],
        scopes_supported=list(config.required_scopes) or None,
        resource_name="skillc",
    )
