"""Bearer tokens as JWT access tokens (RFC 9068): the signature by a key of the issuer's JWKS (from
a URL, fetched with a timeout and cached, or from a file), then ``iss``, ``aud``, ``exp`` / ``nbf``
(with a small leeway) and the caller's DID. A :class:`mcp.server.auth.provider.TokenVerifier`.

The algorithm is taken from the token only after checking that it is an allowed asymmetric one and
that the key found for it is of that algorithm's type: ``none`` and ``HS*`` never verify, so a
token "signed" with the public key as an HMAC secret (algorithm confusion) is refused before any
signature is computed.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
import jwt
from jwt import PyJWK, PyJWKClient, PyJWKSet
from mcp.server.auth.provider import AccessToken

from skillc.server.auth.config import ALLOWED_ALGORITHMS, AuthConfig
from skillc.server.auth.identity import caller_of, client_id_of, scopes_of

log = logging.getLogger("skillc.server.auth")

# The key types (and for EC, the curve) each algorithm verifies with.
_KEY_TYPE = {
    **{f"{f}{n}": "RSA" for f in ("RS", "PS") for n in (256, 384, 512)},
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
_CURVE = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


class TokenRefused(Exception):
    """Why a token was refused (logged, never sent: the client gets the plain 401)."""


def key_fits(key: PyJWK, alg: str) -> bool:
    data: dict[str, Any] = getattr(key, "_jwk_data", {})
    if data.get("use") not in (None, "sig"):
        return False
    if data.get("alg") not in (None, alg):
        return False
    if key.key_type != _KEY_TYPE.get(alg):
        return False
    return alg not in _CURVE or data.get("crv") == _CURVE[alg]


class JwtVerifier:
    """``keys``: a file's key set; without it the keys come from ``config.jwks_url``."""

    def __init__(self, config: AuthConfig, keys: PyJWKSet | None = None) -> None:
        self.config = config
        self.algorithms = tuple(a for a in config.algorithms if a in ALLOWED_ALGORITHMS)
        self._keys = keys
        self._client: PyJWKClient | None = None
        if keys is None:
            if config.jwks_url is None:
                raise ValueError("a JWT verifier needs a JWKS file or URL")
            self._client = PyJWKClient(
                config.jwks_url,
                cache_keys=True,
                cache_jwk_set=True,
                lifespan=config.jwks_lifespan_s,
                timeout=config.fetch_timeout_s,
            )

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await self._verify(token)
        except (TokenRefused, jwt.PyJWTError) as err:
            log.info("bearer token refused: %s", err)
            return None

    async def _verify(self, token: str) -> AccessToken:
        header = jwt.get_unverified_header(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise TokenRefused(f"algorithm {alg!r} is not allowed")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise TokenRefused("kid is not a string")
        key = await anyio.to_thread.run_sync(self._key, kid, alg)
        claims: dict[str, Any] = jwt.decode(
            token,
            key=key.key,
            algorithms=[alg],
            audience=self.config.expected_audience,
            issuer=self.config.issuer,
            leeway=self.config.leeway_s,
            options={"require": ["exp", "iss", "aud"], "verify_signature": True},
        )
        client_id = client_id_of(claims)
        caller = caller_of(claims, self.config, client_id)
        if caller is None:
            raise TokenRefused("the token names no usable subject / user DID")
        exp = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=client_id,
            scopes=scopes_of(claims),
            expires_at=int(exp) if isinstance(exp, (int, float)) else None,
            resource=self.config.expected_audience,
            subject=caller.subject or None,
            claims=claims,
        )

    def _key(self, kid: str | None, alg: str) -> PyJWK:
        """The key for ``kid`` (blocking: a URL's key set may be fetched)."""
        if self._client is not None:
            try:
                if kid is not None:
                    key = self._client.get_signing_key(kid)
                    candidates = [key]
                else:
                    candidates = self._client.get_signing_keys()
            except jwt.PyJWKClientError as err:
                raise TokenRefused(f"no key: {err}") from None
        else:
            assert self._keys is not None
            candidates = [k for k in self._keys.keys if kid is None or k.key_id == kid]
        fitting = [k for k in candidates if key_fits(k, alg)]
        # Without a kid, only a set with exactly one fitting key says which key signed.
        if len(fitting) != 1:
            raise TokenRefused(f"no single {alg} key for kid {kid!r}")
        return fitting[0]
