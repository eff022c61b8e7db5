"""``skillc state migrate|check``: the state store's schema and integrity."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from skillc.cli.options import state_option
from skillc.cli.output import EXIT_ERRORS

if TYPE_CHECKING:
    from skillc.runtime.state import StateStore, StateUrl


@click.group()
def state() -> None:
    """The state store: apply schema migrations, check integrity.

    \b
    Examples:
      skillc state migrate --state postgresql://skillc@db.internal/skillc
      skillc state check --state ~/.local/state/skillc/state.sqlite3
    """


def _url(state_url: str | None, state_dir: str | None) -> StateUrl:
    from pathlib import Path

    from skillc.runtime.config import RuntimeConfig, default_state_dir
    from skillc.runtime.state import state_url_of

    config = RuntimeConfig(state_dir=Path(state_dir) if state_dir else default_state_dir(), state_url=state_url)
    return state_url_of(config)


def _open(url: StateUrl) -> StateStore:
    from skillc.runtime.state import StateError, connect_state

    try:
        return connect_state(url)
    except StateError as err:
        click.echo(f"skillc: error: {err}", err=True)
        sys.exit(EXIT_ERRORS)


_state_dir_option = click.option(
    "--state-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="The folder of the default SQLite file [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
)


@state.command()
@state_option
@_state_dir_option
def migrate(state_url: str | None, state_dir: str | None) -> None:
    """Bring the store's schema to this skillc's version (forward only; safe while instances run).

    Prints the version before and after and the migrations applied. Exit status: 0 done (or
    nothing to do), 1 the store cannot be reached or is newer than this skillc, 2 a bad --state.
    """
    from skillc.runtime.state import StateError
    from skillc.runtime.state.schema import MIGRATIONS
    from skillc.runtime.state.schema import migrate as run_migrations

    store = _open(_url(state_url, state_dir))
    try:
        report = run_migrations(store)
    except StateError as err:
        click.echo(f"skillc: error: {err}", err=True)
        sys.exit(EXIT_ERRORS)
    finally:
        store.close()
    where = store.url.redacted()
    if not report.applied:
        click.echo(f"{where}: schema version {report.after}, up to date")
        return
    names = {m.version: m.name for m in MIGRATIONS}
    for version in report.applied:
        click.echo(f"applied migration {version}: {names[version]}")
    click.echo(f"{where}: schema version {report.before} -> {report.after}")


@state.command()
@state_option
@_state_dir_option
def check(state_url: str | None, state_dir: str | None) -> None:
    """Verify the store: schema version current, every table present, JSON columns parse, no
    orphan card rows, and for SQLite `PRAGMA integrity_check`. Reads only.

    Exit status: 0 sound, 1 a problem (each printed on a line) or the store cannot be reached,
    2 a bad --state.
    """
    from skillc.runtime.state.check import check_state

    url = _url(state_url, state_dir)
    if url.path is not None and not url.path.exists():  # connecting would create it
        click.echo(f"problem: the state file {url.path} does not exist")
        click.echo(f"{url.redacted()}: 1 problem")
        sys.exit(EXIT_ERRORS)
    store = _open(url)
    where = url.redacted()
    try:
        report = check_state(store)
    finally:
        store.close()
    for problem in report.problems:
        click.echo(f"problem: {problem}")
    if report.problems:
        n = len(report.problems)
        click.echo(f"{where}: {n} problem{'s' if n != 1 else ''}")
        sys.exit(EXIT_ERRORS)
    click.echo(f"{where}: ok (schema version {report.version}, {report.rows} JSON values parsed)")
