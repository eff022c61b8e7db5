"""Who is calling: the identity one request runs as.

``skillc serve`` with auth (docs/security.md) verifies the request's bearer token before MCP sees
it and binds a :class:`Caller` for the request; every part that scopes by user (storage, consent,
logins, the audit log, and through the session capability cards, events and artefacts) reads it
here. Without auth nothing is bound: the server has one user, the one its configuration names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    """An authenticated caller. ``did``: the user DID its storage, consent, logins and audit lines
    are kept under; ``subject`` and ``issuer``: the token's ``sub`` and ``iss``; ``client_id``: the
    OAuth client the token was issued to."""

    did: str
    subject: str
    issuer: str | None = None
    client_id: str | None = None


_current: ContextVar[Caller | None] = ContextVar("skillc_caller", default=None)


def current_caller() -> Caller | None:
    """The authenticated caller of the running request; None when the server runs without auth."""
    return _current.get()


def caller_scope(caller: Caller | None) -> str:
    """What a session capability is bound to: the caller's DID, or "" for the one user of a server
    without auth. A capability issued to one caller never opens anything for another."""
    return caller.did if caller is not None else ""


@contextmanager
def calling_as(caller: Caller | None) -> Iterator[None]:
    """Run the body as ``caller`` (the auth middleware binds each request this way)."""
    token = _current.set(caller)
    try:
        yield
    finally:
        _current.reset(token)
