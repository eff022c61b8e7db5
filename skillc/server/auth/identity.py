"""From a verified token's claims to the caller: its user DID.

By default the DID is ``did:web`` of the issuer's host and path with the token's ``sub`` as the last
segment, each segment percent-encoded (``https://auth.example.com/realms/shop`` and ``sub`` ``u:42``
give ``did:web:auth.example.com:realms:shop:u%3A42``): ``sub`` is unique only per issuer, so the
issuer is part of the name, and no two (issuer, sub) pairs give one DID. An issuer that puts a DID
in a claim of its own is named by ``user_claim``; a token without it (or whose value is not a DID)
is refused rather than mapped to some other user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from skillc.server.auth.config import AuthConfig
from skillc.server.caller import Caller

_MAX_DID = 2048  # a DID is a storage key; a claim longer than this is not one


def _segment(text: str) -> str:
    return quote(text, safe="")


def issuer_did_prefix(issuer: str) -> str:
    """``did:web:<host>[%3Aport][:path:segments]`` of an issuer URL."""
    parts = urlsplit(issuer)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}%3A{parts.port}"
    path = [_segment(p) for p in parts.path.split("/") if p]
    return ":".join(["did", "web", host, *path])


def did_of(claims: Mapping[str, Any], config: AuthConfig) -> str | None:
    """The caller's DID from a verified token's claims, or None (the token is then refused)."""
    if config.user_claim is not None:
        value = claims.get(config.user_claim)
        if isinstance(value, str) and value.startswith("did:") and len(value) <= _MAX_DID and value.isprintable():
            return value
        return None
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        return None
    did = f"{issuer_did_prefix(config.issuer)}:{_segment(sub)}"
    return did if len(did) <= _MAX_DID else None


def caller_of(claims: Mapping[str, Any], config: AuthConfig, client_id: str | None) -> Caller | None:
    did = did_of(claims, config)
    if did is None:
        return None
    sub = claims.get("sub")
    iss = claims.get("iss")
    return Caller(
        did=did,
        subject=sub if isinstance(sub, str) else "",
        issuer=iss if isinstance(iss, str) else config.issuer,
        client_id=client_id,
    )


def scopes_of(claims: Mapping[str, Any]) -> list[str]:
    """``scope`` (RFC 8693/9068: space-separated) or ``scp`` (a list, as some issuers send)."""
    scope = claims.get("scope", claims.get("scp"))
    if isinstance(scope, str):
        return scope.split()
    if isinstance(scope, list):
        return [s for s in scope if isinstance(s, str)]
    return []


def client_id_of(claims: Mapping[str, Any]) -> str:
    for name in ("client_id", "azp", "cid"):
        value = claims.get(name)
        if isinstance(value, str) and value:
            return value
    sub = claims.get("sub")
    return sub if isinstance(sub, str) else ""
