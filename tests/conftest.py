"""Shared fixtures: paths, the rule for optional tools (skip locally, fail under CI), and the one
hypothesis profile every run uses.

CI is any non-empty ``CI`` environment variable (``CI=true`` from .ci/run, ``CI=1``, ...).

Hypothesis runs derandomized everywhere (profile "skillc"): the examples are the same on every
machine, with or without CI, and no example database is replayed. Hypothesis would otherwise pick
its own "ci" profile only when ``CI`` is set and random seeds plus the local database elsewhere, so
a local run and CI tested different inputs. To explore other inputs, give a seed:
``SKILLC_HYPOTHESIS_SEED=N`` (or ``--hypothesis-seed=N``), or ``SKILLC_HYPOTHESIS_SEED=random``
for a fresh one; the report header names the seed, and rerunning with it reproduces the run.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# One plugin a job: the grouped skip reasons at the end of a run; --cpu-hogs N for loaded runs.
pytest_plugins = ["tests.skip_summary", "tests.cpu_hogs"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COFFEE = EXAMPLES / "coffee-skill"
FIXTURES = ROOT / "tests" / "fixtures"
PEERS = ROOT / "tests" / "peers"


def ci_enabled(environ: Mapping[str, str]) -> bool:
    """Whether the environment is CI: any non-empty ``CI`` value (``true``, ``1``, ``yes`` ...)."""
    return environ.get("CI", "").strip() != ""


IN_CI = ci_enabled(os.environ)

# `skillc check` keeps a user cache (skillc/user_cache.py); the suite gets one of its own, so a
# run never reads or writes the user's ~/.cache and subprocesses inherit the same place.
if "SKILLC_TEST_CACHE_HOME" not in os.environ:
    import tempfile

    os.environ["SKILLC_TEST_CACHE_HOME"] = tempfile.mkdtemp(prefix="skillc-test-cache-")
    os.environ["XDG_CACHE_HOME"] = os.environ["SKILLC_TEST_CACHE_HOME"]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache of the test's own ($XDG_CACHE_HOME), empty at the start."""
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def inline_component(wxml: str, wxss: str = "") -> Any:
    """A one-file card (``t.wxml``, ``t.wxss``) compiled through the real frontend, which must find
    no error in it: a CompiledComponent (imported here, so that collecting the tests that never
    render stays cheap)."""
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.wxml import parse_wxml
    from skillc.frontend.wxss import parse_wxss
    from skillc.ir.component import CompiledComponent
    from skillc.ir.lower import lower_document
    from skillc.ir.styles import compile_stylesheet

    sink = DiagnosticSink()
    template = lower_document(parse_wxml(wxml, file="t.wxml", sink=sink), load=lambda _: None, sink=sink)
    sheet = compile_stylesheet(parse_wxss(wxss, file="t.wxss", sink=sink)) if wxss else None
    assert [d for d in sink if d.severity == "error"] == []
    return CompiledComponent("t", template, sheet)


def require(available: bool, reason: str) -> None:
    """Skip with a one-line reason when a tool is missing; under CI, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"CI is set but a required tool is missing: {reason}", pytrace=False)
    pytest.skip(reason)


# -- hypothesis ---------------------------------------------------------------------------------

SEED_ENV = "SKILLC_HYPOTHESIS_SEED"
PROFILE = "skillc"
SEEDED_PROFILE = "skillc-seeded"
for _name, _derandomize in ((PROFILE, True), (SEEDED_PROFILE, False)):
    settings.register_profile(
        _name,
        derandomize=_derandomize,
        database=None,  # no replay of a local .hypothesis/ that CI does not have
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
# Loaded on import, before any test module builds its @settings (they inherit from this profile).
settings.load_profile(PROFILE)


def seed_from_environment(environ: Mapping[str, str]) -> int | None:
    """The seed SKILLC_HYPOTHESIS_SEED asks for: an integer, "random" for a fresh one, unset for none."""
    raw = environ.get(SEED_ENV, "").strip()
    if not raw:
        return None
    if raw.lower() == "random":
        return random.SystemRandom().randrange(2**32)
    try:
        return int(raw)
    except ValueError:
        raise pytest.UsageError(f"{SEED_ENV} must be an integer or 'random', not {raw!r}") from None


@pytest.hookimpl(tryfirst=True)  # before the hypothesis plugin reads --hypothesis-seed
def pytest_configure(config: pytest.Config) -> None:
    seed = config.getoption("hypothesis_seed", None)
    if seed is None:
        seed = seed_from_environment(os.environ)
        if seed is not None:
            config.option.hypothesis_seed = str(seed)  # the hypothesis plugin makes it the global seed
    if seed is not None:
        # A derandomized profile ignores any seed, so a seeded run needs the other profile.
        settings.load_profile(SEEDED_PROFILE)


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.getoption("hypothesis_seed", None)
    profile = settings.get_current_profile_name()
    if seed is None:
        return (
            f"hypothesis: profile {profile!r}, derandomized (the same examples on every run, CI or not); "
            f"{SEED_ENV}=N or =random to explore"
        )
    return f"hypothesis: profile {profile!r}, seed {seed} (rerun with {SEED_ENV}={seed})"


@pytest.fixture(scope="session")
def node_bin() -> str:
    node = shutil.which("node")
    require(node is not None, "node is not installed")
    assert node is not None
    return node


@pytest.fixture(scope="session")
def peers_dir(node_bin: str) -> Path:
    """tests/peers/node_modules, installed by `make test` from tests/peers/package-lock.json."""
    require((PEERS / "node_modules").is_dir(), "npm peer packages not installed (make peers)")
    return PEERS / "node_modules"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("SKILLC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    require(path is not None, "chromium is not installed (apt-get install chromium)")
    assert path is not None
    return path


class _RequestRecords(logging.Handler):
    def __init__(self, kinds: tuple[type, ...]) -> None:
        super().__init__()
        self.kinds = kinds
        self.records: list[Any] = []

    def emit(self, record: logging.LogRecord) -> None:
        request = getattr(record, "skillc_request", None)
        if isinstance(request, self.kinds):
            self.records.append(request)


@contextmanager
def request_records(*, http: bool = False) -> Iterator[list[Any]]:
    """The server's one-record-per-request log while the block runs: the MCP requests'
    RequestRecord values, and with ``http`` the other HTTP requests' HttpRecord values too."""
    from skillc.server.request_log import REQUEST_LOGGER, HttpRecord, RequestRecord

    handler = _RequestRecords((RequestRecord, HttpRecord) if http else (RequestRecord,))
    logger = logging.getLogger(REQUEST_LOGGER)
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One stateless JSON-RPC request to a served MCP endpoint; its ``result``."""
    import httpx

    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    response = httpx.post(url, json=body, headers=headers, timeout=30)
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer["result"]


# -- PostgreSQL (the state store's second engine) -----------------------------------------------

STATE_STORE_OPTION = "--state-store"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        STATE_STORE_OPTION,
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="where RuntimeConfig's state lives by default: postgresql runs the suite on a fresh schema per test",
    )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL database the tests may create schemas in: $SKILLC_TEST_POSTGRES_URL,
    else a throwaway cluster from Debian's binaries; skipped without either (a failure under CI)."""
    from tests import postgres_cluster as pg

    given = os.environ.get(pg.TEST_URL_ENV)
    if given:
        yield given
        return
    bindir = pg.find_bin()
    require(bindir is not None, f"no PostgreSQL: set {pg.TEST_URL_ENV} or install postgresql (initdb, pg_ctl)")
    assert bindir is not None
    cluster = pg.Cluster(bindir)
    try:
        yield cluster.start()
    finally:
        from skillc.runtime.state import close_pools

        close_pools()
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_admin(postgres_server: str) -> Iterator[Any]:
    """One connection to the test server for the whole run: dropping a test's schema costs no
    new connection (a test that never opened its store has no schema to drop)."""
    import psycopg

    with psycopg.connect(postgres_server, autocommit=True) as conn:
        yield conn


@pytest.fixture
def postgres_url(postgres_server: str, postgres_admin: Any) -> Iterator[str]:
    """A state URL naming a fresh schema of the test server: made by the first store that opens
    it (migration creates the schema a URL's search_path names), dropped after the test."""
    from skillc.runtime.state import close_pools, parse_state_url
    from tests import postgres_cluster as pg

    name = pg.new_schema_name()
    url = pg.schema_url(postgres_server, name)
    try:
        yield url
    finally:
        close_pools(parse_state_url(url))
        postgres_admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture(autouse=True, scope="module")
def _module_state_store(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under --state-store=postgresql, a module's module-scoped servers get a schema of their own
    (as they get a tmp folder of their own on SQLite): made on first use, dropped after the module."""
    if request.config.getoption(STATE_STORE_OPTION) != "postgresql":
        yield
        return
    from skillc.runtime.state import close_pools, parse_state_url
    from tests import postgres_cluster as pg

    server = request.getfixturevalue("postgres_server")
    admin = request.getfixturevalue("postgres_admin")
    name = pg.new_schema_name()
    url = pg.schema_url(server, name)
    old = os.environ.get("SKILLC_STATE_URL")
    os.environ["SKILLC_STATE_URL"] = url
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SKILLC_STATE_URL", None)
        else:
            os.environ["SKILLC_STATE_URL"] = old
        close_pools(parse_state_url(url))
        admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture(autouse=True)
def _test_state_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --state-store=postgresql, each test's RuntimeConfig defaults to a fresh schema."""
    if request.config.getoption(STATE_STORE_OPTION) != "postgresql":
        monkeypatch.delenv("SKILLC_STATE_URL", raising=False)  # a developer's own store stays out of the tests
        return
    monkeypatch.setenv("SKILLC_STATE_URL", request.getfixturevalue("postgres_url"))
