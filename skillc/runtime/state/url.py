"""Where state lives: ``--state`` / ``$SKILLC_STATE_URL`` parsed into a :class:`StateUrl`.

Accepted forms: ``sqlite:///absolute/path.sqlite3``, ``sqlite:relative/path.sqlite3``, a bare file
path (SQLite), and ``postgresql://`` or ``postgres://`` URLs as libpq takes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict

from skillc.runtime.config import STATE_URL_ENV, PoolSettings, RuntimeConfig

__all__ = ["STATE_URL_ENV", "PoolSettings", "StateUrl", "StateUrlError", "parse_state_url", "state_url_of"]


class StateUrlError(ValueError):
    """A ``--state`` value that names no store skillc can open."""


class StateUrl(BaseModel):
    """One state store: a SQLite file, or a PostgreSQL database (``dsn`` as libpq takes it), and
    for PostgreSQL the pool to reach it with."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["sqlite", "postgresql"]
    path: Path | None = None
    dsn: str | None = None
    pool: PoolSettings = PoolSettings()

    @classmethod
    def sqlite(cls, path: Path) -> StateUrl:
        return cls(kind="sqlite", path=path)

    def redacted(self) -> str:
        """The URL to print: a PostgreSQL password is replaced by ``***``."""
        if self.kind == "sqlite":
            return f"sqlite://{self.path}" if self.path and self.path.is_absolute() else f"sqlite:{self.path}"
        parts = urlsplit(self.dsn or "")
        if parts.password is None:
            return self.dsn or ""
        netloc = parts.netloc.rsplit("@", 1)
        user = netloc[0].split(":", 1)[0]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def parse_state_url(text: str) -> StateUrl:
    """The store ``text`` names; :class:`StateUrlError` says why it names none."""
    value = text.strip()
    if not value:
        raise StateUrlError("the state URL is empty")
    scheme = value.split(":", 1)[0].lower() if ":" in value else ""
    if scheme in ("postgresql", "postgres"):
        parts = urlsplit(value)
        if not parts.netloc and not parts.path.strip("/") and not parts.query:
            raise StateUrlError(f"{value!r} names no PostgreSQL server or database")
        return StateUrl(kind="postgresql", dsn=value)
    if scheme == "sqlite":
        rest = value[len("sqlite:") :]
        if rest.startswith("//"):
            rest = rest[2:]
            if rest and not rest.startswith("/"):
                raise StateUrlError(f"{value!r}: a sqlite:// URL takes no host (write sqlite:///absolute/path)")
        if not rest:
            raise StateUrlError(f"{value!r} names no SQLite file")
        return StateUrl.sqlite(Path(rest))
    if len(scheme) > 1 and "/" not in scheme and "\\" not in scheme:
        raise StateUrlError(f"{value!r}: unknown state store {scheme!r} (use sqlite:///PATH or postgresql://...)")
    return StateUrl.sqlite(Path(value))


def state_url_of(config: RuntimeConfig) -> StateUrl:
    """The configured store: ``config.state_url``, else the SQLite file in the state folder."""
    if config.state_url:
        url = parse_state_url(config.state_url)
        pool = config.state_pool
        return url if url.kind == "sqlite" or pool == url.pool else url.model_copy(update={"pool": pool})
    return StateUrl.sqlite(config.state_file)
