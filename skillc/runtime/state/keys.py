"""Keys every instance of a fleet must hold alike: the one that names event sessions, the one that
signs consent tokens, the one that signs wx.login tokens. The first instance to ask makes a key;
the others read it, so a token one instance signs, any other accepts.

The wx.login key is different when the operator gives it (below): then it never enters the store."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from skillc.runtime.state.store import StateStore
from skillc.runtime.state.url import StateUrl

KEY_BYTES = 32

# A key never changes once made, so a process asks the store once per key.
_known: dict[tuple[StateUrl, str], bytes] = {}
_known_lock = threading.Lock()


def shared_key(store: StateStore, name: str) -> bytes:
    """The key ``name`` of the store, made now if the store has none (of two instances making it
    at once, the first insert wins and both read that one)."""
    with _known_lock:
        known = _known.get((store.url, name))
    if known is not None:
        return known
    insert = store.dialect.insert_absent("server_keys", ("name", "value"), ("name",))
    store.execute(insert, (name, secrets.token_hex(KEY_BYTES)))
    rows = store.execute("SELECT value FROM server_keys WHERE name = ?", (name,))
    key = bytes.fromhex(str(rows[0][0]))
    with _known_lock:
        _known[(store.url, name)] = key
    return key


# -- the identity key's own source ------------------------------------------------------------
# The key that signs wx.login tokens is the one key a backend outside skillc holds too, so an
# operator gives it (and rotates it) rather than the store making it: from the environment, or a
# file of its own. Either holds one or more keys; the first signs, every one verifies, so a token
# signed before a rotation stays valid until it expires while the older key is still listed.

IDENTITY_KEY_ENV = "SKILLC_IDENTITY_KEY"
IDENTITY_KEY_FILE_ENV = "SKILLC_IDENTITY_KEY_FILE"


@dataclass(frozen=True)
class SigningKeys:
    current: bytes  # signs
    accepted: tuple[bytes, ...]  # verify: the current key first, then the older ones still listed


class KeyTextError(ValueError):
    """Key text that is not one or more keys of KEY_BYTES hex-encoded bytes."""


def parse_keys(text: str) -> SigningKeys:
    """Keys one per line (or separated by commas or spaces); ``#`` starts a comment."""
    words = [w for line in text.splitlines() for w in line.split("#", 1)[0].replace(",", " ").split()]
    keys: list[bytes] = []
    for n, word in enumerate(words, 1):
        try:
            key = bytes.fromhex(word)
        except ValueError:
            key = b""
        if len(key) != KEY_BYTES:
            raise KeyTextError(f"key {n} is not {KEY_BYTES} hex-encoded bytes")
        keys.append(key)
    if not keys:
        raise KeyTextError("holds no key")
    return SigningKeys(keys[0], tuple(dict.fromkeys(keys)))


def environment_keys(environ: Mapping[str, str] | None = None) -> SigningKeys | None:
    """The identity keys ``$SKILLC_IDENTITY_KEY`` holds (None when it is unset)."""
    text = (os.environ if environ is None else environ).get(IDENTITY_KEY_ENV)
    return None if text is None else parse_keys(text)


def environment_key_file(environ: Mapping[str, str] | None = None) -> Path | None:
    name = (os.environ if environ is None else environ).get(IDENTITY_KEY_FILE_ENV)
    return Path(name) if name else None
