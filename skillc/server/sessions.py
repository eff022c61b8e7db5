"""Session capabilities: the value a conversation's events, artefacts and cards answer to.

A session is minted by the server, never chosen or derived from anything a client can know or
copy (its clientInfo, a skill name, a card id): 128 random bits from :mod:`secrets` and a MAC
(HMAC-SHA256 under the fleet's shared ``session`` key) binding them to the caller's scope
(:func:`skillc.server.caller.caller_scope`: the authenticated user's DID, "" without auth). So:

- any worker or instance of a fleet verifies one without shared state (the key is shared);
- a capability minted for one caller never verifies for another (the MAC covers the scope);
- a value a client made up, or an old-format id, never verifies.

:class:`SessionBinder` decides the session of one request: the capability the request carries in
``_meta["skillc/session"]`` when it verifies for the caller, otherwise the connection's own fresh
one (over stateless HTTP every request is its own connection; over stdio the process's one
connection keeps one session). A value that does not verify is not an error: the request runs in
a fresh session, never another's, and the server logs SRV020 once per connection.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import weakref
from typing import Any

from skillc.server.caller import caller_scope, current_caller

log = logging.getLogger("skillc.server")

SESSION_META = "skillc/session"  # where a request carries, and a result names, its session

_NONCE_BYTES = 16  # 128 random bits
_MAC_HEX = 32  # the MAC cut to 128 bits: forging one is as hard as guessing the nonce
_PREFIX = "s1-"
_SHAPE = re.compile(rf"{_PREFIX}([0-9a-f]{{{_NONCE_BYTES * 2}}})-([0-9a-f]{{{_MAC_HEX}}})")
SESSION_PATTERN = rf"^{_PREFIX}[0-9a-f]{{{_NONCE_BYTES * 2}}}-[0-9a-f]{{{_MAC_HEX}}}$"


class SessionKeys:
    """Mints and verifies session capabilities under one key (the fleet's ``session`` key)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a session key needs at least 128 bits")
        self._key = key

    def _mac(self, scope: str, nonce: str) -> str:
        # Length-prefixed, so no scope/nonce pair can be spelled as another one.
        message = f"skillc-session/1\n{len(scope)}:{scope}\n{nonce}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:_MAC_HEX]

    def mint(self, scope: str) -> str:
        """A new session capability for ``scope`` (the caller's :func:`caller_scope`)."""
        nonce = secrets.token_hex(_NONCE_BYTES)
        return f"{_PREFIX}{nonce}-{self._mac(scope, nonce)}"

    def verify(self, value: object, scope: str) -> bool:
        """Whether ``value`` is a capability this fleet minted for ``scope`` (constant time in the
        MAC; a value of the wrong shape is refused before any MAC is computed)."""
        if not isinstance(value, str):
            return False
        match = _SHAPE.fullmatch(value)
        if match is None:
            return False
        return hmac.compare_digest(self._mac(scope, match.group(1)), match.group(2))


def current_scope() -> str:
    """The scope a capability of the running request is bound to."""
    return caller_scope(current_caller())


class _OneConnection:
    """The connection every request of a stdio process shares (an instance: weakly referenceable)."""


class SessionBinder:
    """The session of each request (see the module doc). ``connection`` is the transport's session
    object (``ctx.session``): one per stdio process, one per request over stateless HTTP."""

    def __init__(self, keys: SessionKeys) -> None:
        self.keys = keys
        # connection -> {scope: session}; weak, so a closed connection's entry goes with it.
        self._fresh: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()
        self._warned: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._pinned: object | None = None

    def one_connection(self) -> None:
        """Every request from now on comes over one connection (``serve --stdio``): they share one
        fresh session per caller. The SDK builds a connection object per request on the modern
        protocol, so the transport says so rather than the object."""
        self._pinned = _OneConnection()

    def verify(self, value: object) -> bool:
        """Whether ``value`` is a session of the running request's caller."""
        return self.keys.verify(value, current_scope())

    def session(self, connection: Any, meta: object) -> str:
        """The session of a request that came over ``connection`` carrying ``meta`` (its _meta)."""
        connection = self._pinned if self._pinned is not None else connection
        scope = current_scope()
        claimed = meta.get(SESSION_META) if isinstance(meta, dict) else None
        if claimed is not None and self.keys.verify(claimed, scope):
            return str(claimed)
        with self._lock:
            mine = self._fresh.setdefault(connection, {})
            session = mine.get(scope)
            if session is None:
                session = mine[scope] = self.keys.mint(scope)
            warn = claimed is not None and connection not in self._warned
            if warn:
                self._warned.add(connection)
        if warn:
            # The value itself is not logged: it may be another caller's real capability.
            log.warning("SRV020 a request named a session that is not its caller's; it runs in a fresh session")
        return session
