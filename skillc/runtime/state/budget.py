"""Will this process's pools fit the PostgreSQL server? Checked when `skillc serve` starts.

Each worker keeps a pool of up to ``--state-pool-max`` connections, so one instance may open
workers x max of them; the server accepts max_connections less the ones it reserves for
superusers. A configuration that cannot fit even alone is refused (SRV053) before any worker
starts, instead of failing calls under load later; one that fits alone but not beside the
connections already open (other instances of the fleet) is a warning, since those may be the very
instances this one replaces.
"""

from __future__ import annotations

from pydantic import BaseModel

from skillc.runtime.state.store import StateError, StateUnavailable
from skillc.runtime.state.url import StateUrl

CODE = "SRV053"


class PoolBudget(BaseModel):
    workers: int
    pool_max: int
    max_connections: int
    reserved: int
    open_now: int  # client connections already open (other instances, tools)

    @property
    def wanted(self) -> int:
        return self.workers * self.pool_max

    @property
    def usable(self) -> int:
        return self.max_connections - self.reserved

    def refusal(self) -> str | None:
        if self.wanted <= self.usable:
            return None
        return (
            f"{CODE} {self.workers} workers x --state-pool-max {self.pool_max} = {self.wanted} connections, but the"
            f" PostgreSQL server accepts {self.usable} (max_connections {self.max_connections} less"
            f" {self.reserved} reserved): lower --workers or --state-pool-max, or raise max_connections"
        )

    def warning(self) -> str | None:
        if self.refusal() is not None or self.wanted + self.open_now <= self.usable:
            return None
        return (
            f"{CODE} {self.wanted} connections for this instance and {self.open_now} already open exceed the"
            f" {self.usable} the PostgreSQL server accepts: under load some calls will answer SRV050/SRV051"
            " (instances x workers x --state-pool-max must fit max_connections)"
        )


def pool_budget(url: StateUrl, workers: int) -> PoolBudget:
    """Read the server's limits over one plain connection (closed at once)."""
    import psycopg

    assert url.kind == "postgresql" and url.dsn is not None
    try:
        with psycopg.connect(url.dsn, connect_timeout=10, autocommit=True) as conn:
            row = conn.execute(
                "SELECT current_setting('max_connections')::int,"
                " current_setting('superuser_reserved_connections')::int,"
                " (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')"
            ).fetchone()
    except psycopg.Error as err:
        raise StateUnavailable(f"cannot connect to the state store {url.redacted()}: {err}") from err
    if row is None:  # pragma: no cover - the query always answers one row
        raise StateError("the state store did not say its max_connections")
    # This connection is one of the open ones: not counted against the fleet.
    return PoolBudget(
        workers=workers,
        pool_max=url.pool.max_size,
        max_connections=int(row[0]),
        reserved=int(row[1]),
        open_now=max(int(row[2]) - 1, 0),
    )
