"""reference.database: the deterministic shop builder and the read-only connection.

Building twice gives byte-identical files; every table holds exactly the rows of its CSV in
data/seed; the database is consistent; the read-only connection the server uses refuses
every kind of write; a missing or non-database file is an error, never a silent empty shop.
"""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest
from conftest import ShopOracle, file_hash

from reference import database
from reference.server import make_server
from reference.shop import STATUSES

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)

SEED = database.SEED_DIR


def csv_rows(table: str) -> tuple[list[str], list[list[str]]]:
    with open(SEED / f"{table}.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def test_build_twice_is_byte_identical(tmp_path: Path) -> None:
    first = database.build(tmp_path / "a" / "shop.db")
    second = database.build(tmp_path / "b" / "shop.db")
    assert first.read_bytes() == second.read_bytes()


def test_rebuild_in_place_replaces_the_file_and_leaves_no_temporaries(tmp_path: Path, shop_db: Path) -> None:
    target = tmp_path / "shop.db"
    target.write_bytes(b"an old, broken file")
    assert database.build(target) == target
    assert file_hash(target) == file_hash(shop_db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop.db"]


@pytest.mark.parametrize("table", database.TABLES)
def test_tables_hold_exactly_the_seed_rows(shop_db: Path, table: str) -> None:
    header, rows = csv_rows(table)
    conn = sqlite3.connect(f"{shop_db.as_uri()}?mode=ro", uri=True)
    try:
        # Names from database.TABLES and the seed files' headers, not from a request.
        (count,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608
        stored = conn.execute(f"SELECT {', '.join(header)} FROM {table}").fetchall()  # noqa: S608
    finally:
        conn.close()
    assert count == len(rows) > 0
    assert sorted(tuple(str(v) for v in row) for row in stored) == sorted(tuple(r) for r in rows)


@pytest.mark.parametrize(
    ("table", "header"),
    [
        ("customers", ["id", "name) VALUES (1, 'x'); DROP TABLE orders; --"]),
        ("customers", ["id", "e mail"]),
        ("customers; DROP TABLE orders", ["id", "name"]),
        ("sqlite_master", ["name"]),
    ],
)
def test_seed_names_that_are_not_plain_names_never_become_sql(tmp_path: Path, table: str, header: list[str]) -> None:
    # Names cannot be SQL parameters, so the builder checks them before they become SQL.
    seed = tmp_path / "seed.csv"
    with open(seed, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, ["1"] * len(header)])
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(database.SCHEMA.read_text(encoding="utf-8"))
        with pytest.raises(ValueError, match="not a shop table with plain column names"):
            database._load_csv(conn, table, seed)
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (0,)  # nothing ran
    finally:
        conn.close()


def test_database_is_consistent(shop_db: Path) -> None:
    conn = sqlite3.connect(f"{shop_db.as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        (orphans,) = conn.execute(
            "SELECT count(*) FROM orders o LEFT JOIN order_items i ON i.order_id = o.id WHERE i.order_id IS NULL"
        ).fetchone()
        assert orphans == 0, "every order has at least one line item"
    finally:
        conn.close()


def test_seed_statuses_are_the_schema_statuses(oracle: ShopOracle) -> None:
    _, rows = csv_rows("orders")
    assert {row[2] for row in rows} == set(STATUSES)
    assert sorted(STATUSES) == oracle.statuses()


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders",
        "UPDATE products SET stock = 0",
        "INSERT INTO customers (id, name, email, city, country, joined) VALUES (999, 'x', 'x', 'x', 'x', 'x')",
        "CREATE TABLE t (x)",
        "DROP TABLE order_items",
    ],
)
def test_read_only_connection_cannot_write(shop_db: Path, shop_db_hash: str, sql: str) -> None:
    conn = database.open_readonly(shop_db)
    try:
        with pytest.raises(sqlite3.OperationalError):
            conn.execute(sql)
        # Even with query_only switched off, the mode=ro URI still refuses.
        conn.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute(sql)
            conn.commit()
    finally:
        conn.close()
    assert file_hash(shop_db) == shop_db_hash


def test_server_connection_cannot_write(shop_db: Path, shop_db_hash: str) -> None:
    server = make_server(shop_db)
    # The server's tools close over the one connection it opened; reach it through a tool.
    count = server.toolbox.tools["count_orders"].run
    conn = next(
        cell.cell_contents for cell in count.__closure__ or () if isinstance(cell.cell_contents, sqlite3.Connection)
    )
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM orders")
    with pytest.raises(sqlite3.OperationalError):
        conn.executescript("PRAGMA query_only = OFF; DELETE FROM orders;")
    assert file_hash(shop_db) == shop_db_hash


def test_open_missing_file_fails_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    with pytest.raises(sqlite3.OperationalError):
        database.open_readonly(missing)
    assert not missing.exists()


def test_open_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is not a database\n" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        database.open_readonly(bogus)


def test_default_path_and_ensure_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shop_db: Path) -> None:
    monkeypatch.delenv(database.ENV_VAR, raising=False)
    assert database.default_path() == database.DATA_DIR / "build" / "shop.db"
    target = tmp_path / "deep" / "dir" / "shop.db"
    monkeypatch.setenv(database.ENV_VAR, str(target))
    assert database.default_path() == target
    assert database.ensure_default() == target  # built on first use
    assert file_hash(target) == file_hash(shop_db)
    stamp = target.stat().st_mtime_ns
    assert database.ensure_default() == target  # and not rebuilt after that
    assert target.stat().st_mtime_ns == stamp
    elsewhere = tmp_path / "elsewhere.db"
    monkeypatch.setenv(database.ENV_VAR, str(elsewhere))
    assert database.build() == elsewhere  # build() with no path builds the default
    assert file_hash(elsewhere) == file_hash(shop_db)


def test_build_without_the_seed_data_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-editable install has no data/ beside the package: the error says what to do."""
    monkeypatch.setattr(database, "SCHEMA", tmp_path / "missing" / "schema.sql")
    with pytest.raises(FileNotFoundError, match="pip install -e"):
        database.build(tmp_path / "shop.db")
    assert not (tmp_path / "shop.db").exists()
