"""A throwaway PostgreSQL cluster for the tests, from Debian's binaries, and a fresh schema per test.

``SKILLC_TEST_POSTGRES_URL`` names a server to use instead (a database the tests may create
schemas in). Otherwise ``initdb`` makes a cluster in a temporary folder and ``pg_ctl`` starts it
on a free port, listening on a Unix socket in that folder only. initdb refuses to run as root, so
as root the cluster belongs to the ``postgres`` user the Debian package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

TEST_URL_ENV = "SKILLC_TEST_POSTGRES_URL"
BIN_GLOB = "/usr/lib/postgresql/*/bin"
OWNER = "postgres"


def find_bin() -> Path | None:
    """The newest Debian PostgreSQL bin folder with initdb and pg_ctl, else those on PATH."""
    for folder in sorted(glob.glob(BIN_GLOB), key=lambda p: int(Path(p).parent.name), reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _runuser() -> str:
    """runuser lives in /usr/sbin, which a root shell's PATH may lack (su without -, some CI images)."""
    for candidate in (shutil.which("runuser"), "/usr/sbin/runuser", "/sbin/runuser"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError("running as root and runuser (util-linux) is not installed: it starts the cluster as postgres")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """initdb + pg_ctl start in a temporary folder; :meth:`stop` removes it all."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="skillc-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam(OWNER)
            except KeyError:
                raise RuntimeError(f"running as root and there is no {OWNER!r} user for initdb") from None
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self._as = [_runuser(), "-u", OWNER, "--"]

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.root / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(argv[0]).name} failed ({done.returncode}): {done.stderr.strip()} {tail}")

    def start(self, max_connections: int = 200) -> str:
        """Start the cluster; the URL of its ``postgres`` database."""
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", OWNER, "-E", "UTF8",
                  "--no-sync", "--no-instructions")  # fmt: skip
        self.options = (
            f"-k {self.root} -p {self.port} -c listen_addresses='' -c fsync=off -c max_connections={max_connections}"
        )
        self._pg_ctl("start")
        return f"postgresql://{OWNER}@/postgres?host={quote(str(self.root), safe='')}&port={self.port}"

    def _pg_ctl(self, *action: str) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-o", self.options,
                  "-w", "-t", "60", *action)  # fmt: skip

    def stop_server(self) -> None:
        """``pg_ctl stop -m fast``: every connection is terminated; the data stays for :meth:`start_server`."""
        self._pg_ctl("stop", "-m", "fast")

    def start_server(self) -> None:
        """Start the stopped server again; returns once it accepts connections."""
        self._pg_ctl("start")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is terminated; returns once the server accepts again."""
        self._pg_ctl("restart", "-m", "fast")

    def stop(self) -> None:
        if self.data.exists():
            subprocess.run([*self._as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                           capture_output=True, timeout=60)  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


def schema_url(base: str, schema: str) -> str:
    """``base`` with every connection's search_path set to ``schema`` (libpq's ``options``)."""
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}options={quote(f'-csearch_path={schema}', safe='')}"


def new_schema_name() -> str:
    return "t_" + secrets.token_hex(6)


def new_schema(base: str) -> tuple[str, str]:
    """A fresh, empty schema in ``base``'s database: (its name, a URL whose tables live in it)."""
    import psycopg

    name = new_schema_name()
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return name, schema_url(base, name)


def drop_schema(base: str, name: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
