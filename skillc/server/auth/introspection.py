"""Bearer tokens checked by the authorization server (RFC 7662 token introspection): the server
posts the token, authenticated as its own OAuth client (HTTP Basic, client credentials), and takes
the answer only when it says ``active``, names the configured issuer (when it names one), names
this resource's audience in ``aud`` and has not expired. A
:class:`mcp.server.auth.provider.TokenVerifier`.

The MCP authorization spec requires a resource server to check a token was issued for it, so an
answer without ``aud`` is refused too."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import httpx
from mcp.server.auth.provider import AccessToken

from skillc.server.auth.config import AuthConfig
from skillc.server.auth.identity import caller_of, client_id_of, scopes_of

log = logging.getLogger("skillc.server.auth")

_MAX_ANSWER_BYTES = 64 * 1024


class IntrospectionVerifier:
    def __init__(self, config: AuthConfig) -> None:
        if config.introspection_url is None or config.client_id is None:
            raise ValueError("introspection needs a URL and a client id")
        secret = os.environ.get(config.client_secret_env)
        if not secret:
            raise ValueError(f"the introspection client secret is not set (${config.client_secret_env})")
        self.config = config
        self._url = config.introspection_url
        self._auth = httpx.BasicAuth(config.client_id, secret)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            answer = await self._introspect(token)
        except (httpx.HTTPError, ValueError) as err:
            log.warning("token introspection failed: %s", err)
            return None
        why = self._refusal(answer)
        if why is not None:
            log.info("bearer token refused: %s", why)
            return None
        client_id = client_id_of(answer)
        caller = caller_of(answer, self.config, client_id)
        if caller is None:
            log.info("bearer token refused: the token names no usable subject / user DID")
            return None
        exp = answer.get("exp")
        return AccessToken(
            token=token,
            client_id=client_id,
            scopes=scopes_of(answer),
            expires_at=int(exp) if isinstance(exp, (int, float)) else None,
            resource=self.config.expected_audience,
            subject=caller.subject or None,
            claims={**answer, "iss": answer.get("iss", self.config.issuer)},
        )

    async def _introspect(self, token: str) -> dict[str, Any]:
        # A client per call: verify_token runs on whichever event loop serves the request.
        async with httpx.AsyncClient(timeout=self.config.fetch_timeout_s, follow_redirects=False) as client:
            reply = await client.post(
                self._url,
                data={"token": token, "token_type_hint": "access_token"},
                auth=self._auth,
                headers={"accept": "application/json"},
            )
        if reply.status_code != 200:
            raise ValueError(f"the introspection endpoint answered {reply.status_code}")
        if len(reply.content) > _MAX_ANSWER_BYTES:
            raise ValueError("the introspection answer is too large")
        answer = reply.json()
        if not isinstance(answer, dict):
            raise ValueError("the introspection answer is not a JSON object")
        return answer

    def _refusal(self, answer: dict[str, Any]) -> str | None:
        if answer.get("active") is not True:
            return "not active"
        iss = answer.get("iss")
        if iss is not None and iss != self.config.issuer:
            return f"issuer {iss!r} is not {self.config.issuer!r}"
        aud = answer.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if self.config.expected_audience not in audiences:
            return f"audience {aud!r} does not name {self.config.expected_audience!r}"
        exp = answer.get("exp")
        if isinstance(exp, (int, float)) and exp + self.config.leeway_s < time.time():
            return "expired"
        nbf = answer.get("nbf")
        if isinstance(nbf, (int, float)) and nbf - self.config.leeway_s > time.time():
            return "not yet valid"
        return None
