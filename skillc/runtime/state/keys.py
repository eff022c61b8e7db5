"""Keys every instance of a fleet must hold alike: the one that names event sessions, the one that
signs consent tokens, the one that signs wx.login tokens. The first instance to ask makes a key;
the others read it, so a token one instance signs, any other accepts."""

from __future__ import annotations

import secrets
import threading

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
