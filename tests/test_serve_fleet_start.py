"""Every instance migrates the store as it starts (docs/deploy.md, "Migrations at start"): two
real `skillc serve` processes started at once on a fresh PostgreSQL schema both come up, the
schema is migrated once, and each names its connections (``application_name``)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.state import SCHEMA_VERSION, connect_state, parse_state_url
from skillc.runtime.state.schema import migrate
from tests.test_serve_observability import SLOW, _env, endpoint, running
from tests.waiting import PATIENCE_S, wait_until


def test_two_instances_starting_at_once_on_a_fresh_database_migrate_it_once(
    tmp_path: Path, postgres_url: str, postgres_admin: Any
) -> None:
    schema = parse_state_url(postgres_url)
    command = [sys.executable, "-m", "skillc", "serve", str(SLOW), "--port", "0", "--log-format", "json"]
    command += ["--state", postgres_url]
    with (
        running(
            [*command, "--state-dir", str(tmp_path / "a")],
            _env(SKILLC_INSTANCE="inst-a", SKILLC_IDENTITY_KEY=os.urandom(32).hex()),
        ) as a,
        running([*command, "--state-dir", str(tmp_path / "b")], _env(SKILLC_INSTANCE="inst-b")) as b,
    ):
        endpoint(a), endpoint(b)  # both listen: neither failed on the other's migration
        store = connect_state(schema)
        try:
            versions = [int(r[0]) for r in store.execute("SELECT version FROM skillc_schema ORDER BY version")]
        finally:
            store.close()
        assert versions == list(range(1, SCHEMA_VERSION + 1))

        def names() -> set[str]:
            rows = postgres_admin.execute("SELECT application_name FROM pg_stat_activity").fetchall()
            return {str(r[0]) for r in rows}

        wait_until(lambda: {"skillc inst-a/0", "skillc inst-b/0"} <= names(), PATIENCE_S, "both instances' names")
        for served in (a, b):
            served.proc.terminate()
            assert served.proc.wait(timeout=PATIENCE_S) == 0
    # The instance given no wx.login key says its key is a row of the store; the other does not.
    assert [any("SRV090" in line for line in s.lines) for s in (a, b)] == [False, True]


@pytest.mark.parametrize("round_", range(3))
def test_migrations_racing_on_a_fresh_schema_apply_each_step_once(postgres_url: str, round_: int) -> None:
    """Eight stores migrating one fresh schema at the same moment (the start of a fleet, tightened
    to the instant): the advisory lock makes one apply the steps and the others find them done."""
    url = parse_state_url(postgres_url)
    stores = [connect_state(url) for _ in range(8)]
    start = threading.Barrier(len(stores))
    errors: list[BaseException] = []
    applied: list[list[int]] = []

    def run(store: Any) -> None:
        start.wait()
        try:
            applied.append(migrate(store).applied)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=PATIENCE_S)
    for store in stores:
        store.close()
    assert errors == []
    assert sorted(v for steps in applied for v in steps) == list(range(1, SCHEMA_VERSION + 1))


def test_serve_reports_a_store_it_cannot_migrate_in_one_line(tmp_path: Path) -> None:
    """An instance whose store is unreachable says so and exits, instead of serving without one."""
    command = [sys.executable, "-m", "skillc", "serve", str(SLOW), "--port", "0"]
    command += ["--state", "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"]
    done = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=PATIENCE_S)
    assert done.returncode != 0
    assert "cannot connect to the state store" in done.stderr
