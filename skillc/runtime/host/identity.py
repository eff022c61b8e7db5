"""Capability tokens: what ``wx.login`` issues, ``wx.checkSession`` validates and ``wx.request``
carries to allow-listed hosts.

A token is a JWT (RFC 7519) signed with HMAC-SHA256 by a key kept with skillc's state
(``identity.key``, 32 random bytes hex-encoded, created on first use with mode 0600), so a
backend that holds the key can verify it with any JWT library. Its claims bind it to the user,
agent and merchant DIDs and the skill (id and scope: a copy of the skill in another folder is
another skill) and give it an expiry (``login_ttl_s``). The ``code`` of ``wx.login`` is the token
itself: skillc runs no ``code2Session`` exchange a short code would need.

The latest token per (user, agent, merchant, skill scope) is kept in the state store, so a
later call (another ``skillc call``, another MCP request) finds the session ``wx.login`` opened,
as WeChat keeps a mini program's login state between launches.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from skillc.diagnostics import Diagnostic
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.state import StateStore, StateUrl, open_state, state_url_of
from skillc.runtime.state.keys import (
    IDENTITY_KEY_ENV,
    KeyTextError,
    SigningKeys,
    environment_key_file,
    parse_keys,
    shared_key,
)

KEY_BYTES = 32
_HEADER = {"alg": "HS256", "typ": "JWT"}

# The headers an allow-listed host gets (docs/security.md, "Identity"). A skill cannot set them
# itself: its own headers with the prefix are dropped, so a backend may trust what it reads.
HEADER_PREFIX = "x-skillc-"
USER_HEADER = "X-Skillc-User-DID"
AGENT_HEADER = "X-Skillc-Agent-DID"
MERCHANT_HEADER = "X-Skillc-Merchant-DID"
CAPABILITY_HEADER = "X-Skillc-Capability"

# WeChat's own words for a session that has run out.
EXPIRED = "session time out, need relogin (the capability token has expired)"
ANONYMOUS = "the caller is anonymous: there is no user to log in (give a user DID: --user DID)"
NOT_LOGGED_IN = "not logged in (call wx.login first)"

_LOGIN_COLUMNS = ("user_did", "agent_did", "merchant_did", "skill_scope", "token", "expires")

Binding = Literal["user", "agent", "merchant", "skill"]


class CapabilityClaims(BaseModel):
    """The payload of a capability token. ``iat``/``exp`` are NumericDates (seconds since the
    epoch, to the millisecond)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    iss: Literal["skillc"] = "skillc"
    sub: str = Field(description="the user DID")
    agent_did: str
    merchant_did: str
    skill_id: str
    skill_scope: str = Field(description="the skill id and a digest of its folder")
    iat: float
    exp: float
    jti: str = Field(description="random, so two logins never give the same token")

    @classmethod
    def of(cls, context: ApiCallContext, now: float, ttl_s: float) -> CapabilityClaims:
        return cls(
            sub=context.user_did,
            agent_did=context.agent_did,
            merchant_did=context.merchant_did,
            skill_id=context.skill_id,
            skill_scope=context.scope,
            iat=round(now, 3),
            exp=round(now + ttl_s, 3),
            jti=secrets.token_hex(16),
        )

    def mismatch(self, context: ApiCallContext) -> Binding | None:
        """The first binding this token does not share with ``context``, or None."""
        if self.sub != context.user_did:
            return "user"
        if self.agent_did != context.agent_did:
            return "agent"
        if self.merchant_did != context.merchant_did:
            return "merchant"
        if self.skill_id != context.skill_id or self.skill_scope != context.scope:
            return "skill"
        return None


class IdentityError(Exception):
    """A login or a session check that fails: ``reason`` is the wx ``fail`` text, and
    ``diagnostic`` what the outcome reports (None for an ordinary expiry or no login)."""

    def __init__(self, reason: str, diagnostic: Diagnostic | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.diagnostic = diagnostic


# -- the key --------------------------------------------------------------------------------


def _key_error(path: Path, what: str) -> IdentityError:
    message = f"the identity key {path} {what}"
    return IdentityError(message, Diagnostic.make("RUN062", message))


def load_key(path: Path) -> bytes:
    """The signing key at ``path``, created (mode 0600) when there is none yet."""
    return load_keys(path).current


def load_keys(path: Path) -> SigningKeys:
    """The keys at ``path`` (the first signs, the others only verify: docs/deploy.md, "Rotating
    the identity key"); a fresh key is created (mode 0600) when there is no file yet."""
    try:
        text = path.read_text("ascii")
    except FileNotFoundError:
        key = _create_key(path)
        return SigningKeys(key, (key,))
    except (OSError, UnicodeDecodeError) as err:
        raise _key_error(path, f"cannot be read: {getattr(err, 'strerror', None) or err}") from None
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise _key_error(path, f"is readable by other users (mode {mode:04o}); chmod 600 {path}")
    try:
        return parse_keys(text)
    except KeyTextError:
        raise _key_error(path, f"does not hold {KEY_BYTES} hex-encoded bytes") from None


_env_keys: dict[str, SigningKeys] = {}


def _environment_keys() -> SigningKeys | None:
    text = os.environ.get(IDENTITY_KEY_ENV)
    if text is None:
        return None
    known = _env_keys.get(text)
    if known is None:
        try:
            known = _env_keys[text] = parse_keys(text)
        except KeyTextError as err:
            message = f"the identity key in ${IDENTITY_KEY_ENV} {err}"
            raise IdentityError(message, Diagnostic.make("RUN062", message)) from None
    return known


def _create_key(path: Path) -> bytes:
    """Write a fresh key under a temporary name and link it into place: a reader never sees half a
    key, and of two processes creating it at once, one key wins and both use it."""
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(key.hex() + "\n")
            os.link(tmp, path)
        except FileExistsError:
            return load_key(path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as err:
        raise _key_error(path, f"cannot be created: {err.strerror or err}") from None
    return key


def key_in_store(config: RuntimeConfig) -> bool:
    """Whether the wx.login key of ``config`` would be the store's own row (PostgreSQL, and the
    operator gave no key): what ``skillc serve`` warns about (SRV090)."""
    if IDENTITY_KEY_ENV in os.environ or config.identity_key_file is not None or environment_key_file():
        return False
    return state_url_of(config).kind == "postgresql"


# -- tokens ---------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign(claims: CapabilityClaims, key: bytes) -> str:
    signing_input = _b64(_canonical(_HEADER)) + "." + _b64(_canonical(claims.model_dump(by_alias=True)))
    mac = hmac.new(key, signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + _b64(mac)


def verify(token: str, key: bytes | Sequence[bytes], context: ApiCallContext, now: float) -> CapabilityClaims:
    """The claims of a token that is valid for ``context`` at ``now``; else :class:`IdentityError`.
    ``key``: the key, or the keys any of which may have signed it (the current and older ones).

    The signature is checked before any claim is read, the binding before the expiry (a token of
    another skill is reported as that, expired or not)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise _refused("is malformed (not a JWT of three parts)")
    try:
        header = json.loads(_unb64(parts[0]))
        signature = _unb64(parts[2])
    except (ValueError, binascii.Error):
        raise _refused("is malformed (not base64url JSON)") from None
    if header != _HEADER:
        raise _refused("is malformed (only HS256 JWTs are issued)")
    signed = f"{parts[0]}.{parts[1]}".encode("ascii", "replace")
    keys = (key,) if isinstance(key, bytes) else key
    if not any(hmac.compare_digest(signature, hmac.new(k, signed, hashlib.sha256).digest()) for k in keys):
        raise _refused("has a signature that does not match (tampered with, or signed with another key)")
    try:
        claims = CapabilityClaims.model_validate_json(_unb64(parts[1]))
    except (ValueError, binascii.Error, ValidationError):
        raise _refused("is malformed (its claims are not skillc's)") from None
    bound = claims.mismatch(context)
    if bound is not None:
        raise _refused(f"is bound to another {bound}")
    if now >= claims.exp:
        raise IdentityError(EXPIRED)
    return claims


def _refused(what: str) -> IdentityError:
    reason = f"the capability token {what}"
    return IdentityError(reason, Diagnostic.make("RUN061", f"wx.checkSession: {reason}"))


# -- where the latest token of a caller lives -------------------------------------------------


class LoginStore:
    """The latest token per (user, agent, merchant, skill scope), in the state store."""

    def __init__(self, state: Path | StateUrl) -> None:
        self.store: StateStore = open_state(state)

    def save(self, context: ApiCallContext, token: str, expires: float) -> None:
        self.store.execute(
            self.store.dialect.upsert("logins", _LOGIN_COLUMNS, _LOGIN_COLUMNS[:4]),
            (context.user_did, context.agent_did, context.merchant_did, context.scope, token, expires),
        )

    def current(self, context: ApiCallContext) -> str | None:
        query = "SELECT token FROM logins WHERE user_did = ? AND agent_did = ? AND merchant_did = ? AND skill_scope = ?"
        keys = (context.user_did, context.agent_did, context.merchant_did, context.scope)
        rows = self.store.execute(query, keys)
        return str(rows[0][0]) if rows else None


_stores: dict[tuple[StateUrl, int], LoginStore] = {}
_stores_lock = threading.Lock()


def login_store(state: Path | StateUrl) -> LoginStore:
    """One store per state file or database for the process: a store opens a connection per
    thread, and the hosts that use it live for one call each."""
    url = state if isinstance(state, StateUrl) else StateUrl.sqlite(state)
    with _stores_lock:
        key = (url, os.getpid())  # a forked child opens its own connections
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = LoginStore(url)
        return store


# -- one call's identity ---------------------------------------------------------------------


class CallIdentity:
    """The identity side of one call's host: login, the session check and the request headers."""

    def __init__(
        self,
        context: ApiCallContext,
        config: RuntimeConfig,
        diagnostics: list[Diagnostic],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.context = context
        self.config = config
        self.diagnostics = diagnostics  # the host's: what the call's outcome reports
        self.clock = clock
        self._token = context.capability_token  # presented by the caller; a login replaces it

    def _store(self) -> LoginStore:
        return login_store(state_url_of(self.config))

    def _keys(self) -> SigningKeys:
        """The signing keys: ``$SKILLC_IDENTITY_KEY``, else the configured file (or
        ``$SKILLC_IDENTITY_KEY_FILE``); with a PostgreSQL store and neither, the store's own key,
        so that a token one instance of a fleet signs every instance accepts."""
        given = _environment_keys()
        if given is not None:
            return given
        path = self.config.identity_key_file or environment_key_file()
        if path is None and state_url_of(self.config).kind == "postgresql":
            key = shared_key(self._store().store, "identity")
            return SigningKeys(key, (key,))
        return load_keys(path or self.config.identity_key_path)

    def login(self) -> str:
        """A fresh token for this caller and skill, kept as its session's token."""
        if self.context.anonymous:
            raise IdentityError(ANONYMOUS)
        key = self._keys().current
        claims = CapabilityClaims.of(self.context, self.clock(), self.config.login_ttl_s)
        token = sign(claims, key)
        self._store().save(self.context, token, claims.exp)
        self._token = token
        return token

    def current(self) -> str | None:
        """The token this call presents: one it logged in with, the caller's, else the stored one."""
        return self._token if self._token is not None else self._store().current(self.context)

    def check(self) -> CapabilityClaims:
        if self.context.anonymous:
            raise IdentityError(ANONYMOUS)
        token = self.current()
        if token is None:
            raise IdentityError(NOT_LOGGED_IN)
        return verify(token, self._keys().accepted, self.context, self.clock())

    def request_headers(self) -> Mapping[str, str]:
        """The identity an allow-listed host gets: none for an anonymous caller, the DIDs, and the
        capability token while it is valid for this caller and skill."""
        c = self.context
        if c.anonymous:
            return {}
        dids = {USER_HEADER: c.user_did, AGENT_HEADER: c.agent_did, MERCHANT_HEADER: c.merchant_did}
        headers = {name: _header_value(value) for name, value in dids.items()}
        try:
            token = self.current()
            if token is not None:
                verify(token, self._keys().accepted, c, self.clock())
                headers[CAPABILITY_HEADER] = token
        except IdentityError as err:
            # An expired or foreign token is not forwarded (checkSession says why); a broken key is
            # the host's problem, and reported.
            if err.diagnostic is not None and err.diagnostic.code == "RUN062":
                self.diagnostics.append(err.diagnostic)
        return headers


# Printable ASCII stays; anything else (non-ASCII, spaces, CR/LF) is percent-encoded, so a DID from
# the command line can neither break the request nor add a header of its own.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def _header_value(value: str) -> str:
    return quote(value, safe=_HEADER_SAFE)
