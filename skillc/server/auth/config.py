"""What ``skillc serve --auth-*`` configures: who issues tokens, for which audience, how a token is
verified, and how its subject becomes the caller's user DID. JSON-safe, so ``--workers`` hands the
same settings to every worker; the introspection secret is named by its environment variable, never
carried as a value (it would show in the worker's options)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

# Asymmetric signatures only: a symmetric (HS*) key would be a secret the server shares with the
# issuer, and "none" is no signature at all. Each name is tied to the key type that may verify it.
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
# Clock skew tolerated on exp / nbf / iat, seconds.
DEFAULT_LEEWAY_S = 30.0
# A JWKS URL is fetched at most this long; its keys are kept this long before they are fetched again
# (a token signed by an unknown kid refetches sooner, at most once per cooldown).
DEFAULT_FETCH_TIMEOUT_S = 5.0
DEFAULT_JWKS_LIFESPAN_S = 300.0
CLIENT_SECRET_ENV = "SKILLC_AUTH_CLIENT_SECRET"


class AuthConfig(BaseModel):
    """``issuer``: the authorization server (the token's ``iss``, listed in the protected-resource
    metadata). ``resource_url``: the public URL of ``/mcp`` (the metadata's ``resource``).
    ``audience``: what ``aud`` must name (default: ``resource_url``). Exactly one of ``jwks_url``,
    ``jwks_file`` (JWT access tokens) or ``introspection_url`` (RFC 7662, authenticated as
    ``client_id`` with the secret in the environment variable ``client_secret_env``).
    ``required_scopes``: every one must be granted (else 403). ``user_claim``: a claim whose value is
    the caller's DID (instead of the ``did:web`` made from the issuer and ``sub``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    issuer: str
    resource_url: str
    audience: str | None = None
    jwks_url: str | None = None
    jwks_file: Path | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret_env: str = CLIENT_SECRET_ENV
    required_scopes: tuple[str, ...] = ()
    user_claim: str | None = None
    algorithms: tuple[str, ...] = ALLOWED_ALGORITHMS
    leeway_s: float = Field(default=DEFAULT_LEEWAY_S, ge=0, le=600)
    fetch_timeout_s: float = Field(default=DEFAULT_FETCH_TIMEOUT_S, gt=0, le=120)
    jwks_lifespan_s: float = Field(default=DEFAULT_JWKS_LIFESPAN_S, gt=0)

    @property
    def expected_audience(self) -> str:
        return self.audience or self.resource_url
