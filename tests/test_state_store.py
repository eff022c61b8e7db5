"""The state store on both engines: storage, cards, audit, logins, migrations and `skillc state`.

Every store-level test runs on SQLite and on PostgreSQL (a fresh schema of the throwaway
cluster; skipped without PostgreSQL, a failure under CI)."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.runtime.api.audit import AuditLog, call_record
from skillc.runtime.cards.card_store import CardRecord, CardStore
from skillc.runtime.contracts import ApiCallContext, AuditOutcome, RiskLevel
from skillc.runtime.host.identity import LoginStore
from skillc.runtime.host.storage import Storage, StorageError, StorageScope
from skillc.runtime.state import SCHEMA_VERSION, StateError, StateUrl, connect_state, open_state, parse_state_url
from skillc.runtime.state.schema import TABLES, migrate, schema_version
from skillc.runtime.state.url import StateUrlError
from tests.conftest import COFFEE


@pytest.fixture(params=["sqlite", "postgresql"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A state URL of each engine, empty."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'state.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))


def _ctx(session: str = "s1", user: str = "did:u") -> ApiCallContext:
    return ApiCallContext(user_did=user, agent_did="did:a", merchant_did="did:m", skill_id="coffee", session_id=session)


def test_storage_round_trip_ordering_and_quota(state: str) -> None:
    storage = Storage(parse_state_url(state), key_max_bytes=64, total_max_bytes=100)
    scope = storage.scope("did:u", "did:m", "coffee")
    for key, value in (("b", "1"), ("a", '"x"'), ("B", "2"), ("é", "3")):
        scope.set(key, value)
    scope.set("b", "10")  # replaces, does not add
    assert scope.get("b") == "10" and scope.get("nope") is None
    info = scope.info()
    assert info.keys == ["B", "a", "b", "é"]  # byte order on both engines, not the locale's
    assert (info.currentSize, info.limitSize) == (1, 0)
    with pytest.raises(StorageError) as big:
        scope.set("k", "x" * 80)
    assert str(big.value) == "entry size 81 bytes exceeds the limit of 64 bytes"
    other = storage.scope("did:other", "did:m", "coffee")
    assert other.get("b") is None
    other.set("k", "y" * 60)
    with pytest.raises(StorageError) as full:
        other.set("k2", "y" * 40)
    assert str(full.value) == "exceed storage max size 0MB"
    scope.remove("a")
    assert scope.info().keys == ["B", "b", "é"]
    scope.clear()
    assert scope.info().keys == [] and other.info().keys == ["k"]


def test_concurrent_sets_never_pass_the_quota(state: str) -> None:
    """The quota check and the write are one locked transaction: of 8 threads racing to add a
    20-byte entry to a 100-byte scope, exactly 5 succeed (in each of 10 rounds)."""
    storage = Storage(parse_state_url(state), total_max_bytes=100)
    for round_ in range(10):
        scope = storage.scope(f"did:u{round_}", "did:m", "coffee")
        outcomes: list[bool] = []
        barrier = threading.Barrier(8)

        def put(
            i: int, scope: StorageScope = scope, outcomes: list[bool] = outcomes, barrier: threading.Barrier = barrier
        ) -> None:
            barrier.wait()
            try:
                scope.set(f"k{i}", "v" * 18)
                outcomes.append(True)
            except StorageError:
                outcomes.append(False)

        threads = [threading.Thread(target=put, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == [False] * 3 + [True] * 5
        assert len(scope.info().keys) == 5


def test_cards_insert_load_save_and_prune(state: str) -> None:
    store = CardStore(parse_state_url(state))
    for i in (1, 2, 3):  # each card's seq taken in its insert: above every card before it
        record = CardRecord(card_id=f"c{i}", seq=0, component_path="c/x", api_name="a", context=_ctx(), created=100.0)
        store.insert_new(record, {"n": i, "name": "拿铁"})
        assert record.seq == i
        stored = store.load(f"c{i}")
        assert stored is not None and stored[0] == record  # the stored record names its seq too
    store.save_data("c2", {"n": 22})
    loaded = store.load("c2")
    assert loaded is not None and loaded[1] == {"n": 22} and loaded[0].card_id == "c2"
    expired = loaded[0].model_copy(update={"expired": True})
    store.save_record(expired)
    assert [r.card_id for r in store.session_cards("coffee", "s1")] == ["c1", "c2", "c3"]
    # c2 expired: pruned although live; c3 live and kept; c1 not live and old: pruned.
    assert store.prune("coffee", keep={"c2", "c3"}, older_than=200.0, max_rows=10, max_bytes=1 << 20) == 2
    assert [r.card_id for r in store.session_cards("coffee", "s1")] == ["c3"]
    assert store.load("c1") is None


def test_a_card_mounted_again_under_its_id_replaces_the_row(state: str) -> None:
    # `run` and `render` choose their card ids ("card-1"): a second mount into the same state
    # replaces the first card, with a new seq, instead of failing on the key.
    store = CardStore(parse_state_url(state))
    for n in (1, 2):
        record = CardRecord(card_id="card-1", seq=0, component_path="c/x", api_name="a", context=_ctx())
        store.insert_new(record, {"n": n})
        assert record.seq == n
    loaded = store.load("card-1")
    assert loaded is not None and loaded[0].seq == 2 and loaded[1] == {"n": 2}


def test_audit_records_and_ui_records_in_order(state: str) -> None:
    log = AuditLog(parse_state_url(state))
    for i in range(3):
        log.write(call_record(_ctx(), api_name=f"api{i}", risk=RiskLevel.L2, arguments={"i": i},
                              outcome=AuditOutcome.OK, detail=None, duration_ms=1.0))  # fmt: skip
        log.write_ui(json.dumps({"n": i}))
    assert [r.api_name for r in log.records()] == ["api0", "api1", "api2"]
    assert [r.api_name for r in log.records(limit=2)] == ["api1", "api2"]
    assert log.ui_records(limit=2) == ['{"n": 1}', '{"n": 2}']


def test_a_later_login_replaces_the_stored_token(state: str) -> None:
    logins = LoginStore(parse_state_url(state))
    assert logins.current(_ctx()) is None
    logins.save(_ctx(), "token-1", 10.0)
    logins.save(_ctx(), "token-2", 20.0)
    logins.save(_ctx(user="did:v"), "token-v", 20.0)
    assert (logins.current(_ctx()), logins.current(_ctx(user="did:v"))) == ("token-2", "token-v")


def test_migrate_is_forward_only_and_idempotent(state: str) -> None:
    url = parse_state_url(state)
    store = connect_state(url)
    try:
        assert schema_version(store) == 0
        report = migrate(store)
        every = list(range(1, SCHEMA_VERSION + 1))
        assert (report.before, report.after, report.applied) == (0, SCHEMA_VERSION, every)
        assert migrate(store).applied == []
        store.execute("INSERT INTO skillc_schema (version) VALUES (?)", (SCHEMA_VERSION + 1,))
        with pytest.raises(StateError) as newer:
            migrate(store)
        assert str(newer.value) == (
            f"the state store {url.redacted()} is at schema version {SCHEMA_VERSION + 1}, newer than this skillc"
            f" knows ({SCHEMA_VERSION}): upgrade skillc"
        )
    finally:
        store.close()


def test_a_file_from_before_versioning_is_adopted(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE storage (user_did TEXT NOT NULL, merchant_did TEXT NOT NULL, skill_id TEXT NOT NULL,"
            " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (user_did, merchant_did, skill_id, key))"
        )
        db.execute("INSERT INTO storage VALUES ('u', 'm', 's', 'k', '1')")
    scope = Storage(path).scope("u", "m", "s")
    assert scope.get("k") == "1"
    assert schema_version(open_state(path)) == SCHEMA_VERSION


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_state_migrate_and_check_commands(state: str) -> None:
    url = parse_state_url(state)
    where = url.redacted()
    code, out = _invoke("state", "check", "--state", state)
    if url.kind == "sqlite":
        assert (code, out) == (1, f"problem: the state file {url.path} does not exist\n{where}: 1 problem\n")
    else:
        assert code == 1
        assert out.splitlines() == [
            f"problem: schema version 0, expected {SCHEMA_VERSION} (run `skillc state migrate`)",
            *(f"problem: table {t} is missing" for t in TABLES),
            f"{where}: {1 + len(TABLES)} problems",
        ]
    code, out = _invoke("state", "migrate", "--state", state)
    assert code == 0 and out.splitlines()[0] == "applied migration 1: storage, cards, audit, ui_audit and logins"
    assert out.splitlines()[-1] == f"{where}: schema version 0 -> {SCHEMA_VERSION}"
    assert _invoke("state", "migrate", "--state", state) == (
        0,
        f"{where}: schema version {SCHEMA_VERSION}, up to date\n",
    )
    Storage(url).scope("u", "m", "s").set("k", '{"a":1}')
    assert _invoke("state", "check", "--state", state) == (
        0,
        f"{where}: ok (schema version {SCHEMA_VERSION}, 1 JSON values parsed)\n",
    )


def test_check_finds_bad_json_and_orphan_cards(state: str) -> None:
    url = parse_state_url(state)
    store = CardStore(url)
    store.insert(CardRecord(card_id="c1", seq=1, component_path="c", api_name="a", context=_ctx()), {"n": 1})
    store.store.execute("UPDATE cards SET data = ? WHERE card_id = ?", ("{not json", "c1"))
    store.insert(CardRecord(card_id="c2", seq=2, component_path="c", api_name="a", context=_ctx()), {})
    store.store.execute("UPDATE cards SET session_id = ? WHERE card_id = ?", ("elsewhere", "c2"))
    code, out = _invoke("state", "check", "--state", state)
    assert (code, out.splitlines()) == (
        1,
        [
            "problem: cards.data of card_id='c1' is not JSON",
            "problem: cards row 'c2': its record belongs to another card or session (orphan)",
            f"{url.redacted()}: 2 problems",
        ],
    )


def test_check_runs_sqlite_integrity_check(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    store = CardStore(path)
    store.insert(CardRecord(card_id="c1", seq=1, component_path="c", api_name="a", context=_ctx()), {})
    # The index now claims to cover another column than the rows it holds.
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = replace(sql, '(seq)', '(card_id)') WHERE name = 'cards_seq'")
    code, out = _invoke("state", "check", "--state", str(path))
    assert code == 1
    assert out.splitlines() == [
        "problem: integrity_check: row 1 missing from index cards_seq",
        f"sqlite://{path}: 1 problem",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the state URL is empty"),
        ("mysql://db/x", "'mysql://db/x': unknown state store 'mysql' (use sqlite:///PATH or postgresql://...)"),
        ("sqlite://host/x", "'sqlite://host/x': a sqlite:// URL takes no host (write sqlite:///absolute/path)"),
        ("sqlite:", "'sqlite:' names no SQLite file"),
        ("postgresql://", "'postgresql://' names no PostgreSQL server or database"),
    ],
)
def test_bad_state_urls_are_refused(text: str, message: str) -> None:
    with pytest.raises(StateUrlError) as err:
        parse_state_url(text)
    assert str(err.value) == message
    code, out = _invoke("state", "check", "--state", text)
    assert code == 2 and f"Error: Invalid value for --state: {message}" in out


def test_state_url_forms() -> None:
    assert parse_state_url("sqlite:///var/s.db") == StateUrl.sqlite(Path("/var/s.db"))
    assert parse_state_url("sqlite:rel/s.db") == StateUrl.sqlite(Path("rel/s.db"))
    assert parse_state_url("/var/s.db") == StateUrl.sqlite(Path("/var/s.db"))
    pg = parse_state_url("postgres://skillc:secret@db:5432/skillc")
    assert (pg.kind, pg.redacted()) == ("postgresql", "postgres://skillc:***@db:5432/skillc")


def test_unreachable_postgresql_is_one_error_line() -> None:
    code, out = _invoke("state", "migrate", "--state", "postgresql://nobody@127.0.0.1:1/x")
    assert code == 1
    assert out.startswith("skillc: error: cannot connect to the state store postgresql://nobody@127.0.0.1:1/x: ")


def test_skillc_call_keeps_storage_and_audit_in_the_given_store(state: str, tmp_path: Path) -> None:
    """`skillc call --state URL`: the order confirmOrder stores and its audit row are in that store."""
    args = ["call", str(COFFEE), "confirmOrder", "--args", '{"drinkId": "d01"}', "--approve", "--json"]
    code, out = _invoke(*args, "--state", state, "--state-dir", str(tmp_path / "unused"))
    assert code == 0, out
    order_id = json.loads(out)["result"]["structuredContent"]["order"]["orderId"]
    assert not (tmp_path / "unused" / "state.sqlite3").exists()
    url = parse_state_url(state)
    assert [r.api_name for r in AuditLog(url).records()] == ["confirmOrder"]
    rows = open_state(url).execute("SELECT key FROM storage ORDER BY key")
    assert [r[0] for r in rows] == ["coffee.order." + order_id, "coffee.orderSeq"]


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--state-dir", "skillc: error: cannot open the state store {tmp}/afile/sub/state.sqlite3: Not a directory\n"),
        ("--state", "skillc: error: cannot connect to the state store postgresql://nobody@127.0.0.1:1/x: "),
    ],
)
def test_a_call_whose_store_cannot_be_opened_is_one_error_line(
    flag: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a traceback: the state dir under a regular file, or a PostgreSQL that refuses."""
    monkeypatch.delenv("SKILLC_STATE_URL", raising=False)  # a state URL would win over --state-dir
    (tmp_path / "afile").write_text("")
    target = str(tmp_path / "afile" / "sub") if flag == "--state-dir" else "postgresql://nobody@127.0.0.1:1/x"
    result = CliRunner().invoke(main, ["call", str(COFFEE), "searchDrinks", "--args", "{}", flag, target])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.startswith(message.format(tmp=tmp_path))
    assert "Traceback" not in result.output


def test_migrate_creates_the_schema_the_url_names(postgres_server: str) -> None:
    import psycopg

    from tests import postgres_cluster as pg

    name = "skillc_" + secrets.token_hex(4)
    url = pg.schema_url(postgres_server, name.upper())  # unquoted in search_path: folded to lower case
    try:
        code, out = _invoke("state", "migrate", "--state", url)
        assert code == 0 and out.splitlines()[-1].endswith(f": schema version 0 -> {SCHEMA_VERSION}"), out
        with psycopg.connect(postgres_server) as conn:
            rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (name,)).fetchall()
        assert {r[0] for r in rows} == {*TABLES, "skillc_schema"}
        assert _invoke("state", "check", "--state", url)[0] == 0
    finally:
        from skillc.runtime.state import close_pools

        close_pools(parse_state_url(url))
        pg.drop_schema(postgres_server, name)
