"""The shop database: build it from the text seed in ``data/`` and open it read-only.

The builder is deterministic: the same seed gives the same file, byte for byte. The server never
writes: it opens the file through a ``mode=ro`` URI, so even a bug cannot change the shop.

    >>> conn = open_readonly(ensure_default())
    >>> conn.execute("SELECT count(*) FROM orders").fetchone()
    (3000,)
    >>> conn.execute("DELETE FROM orders")
    Traceback (most recent call last):
    ...
    sqlite3.OperationalError: attempt to write a readonly database
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SCHEMA = DATA_DIR / "schema.sql"
SEED_DIR = DATA_DIR / "seed"
# Tables in the order their foreign keys allow them to be filled.
TABLES = ("customers", "products", "orders", "order_items")
ENV_VAR = "MCP_LAB_DB"


def default_path() -> Path:
    """Where the embedded default database lives: ``$MCP_LAB_DB``, else ``data/build/shop.db``."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    return DATA_DIR / "build" / "shop.db"


def build(path: Path | str | None = None) -> Path:
    """Build the shop database at ``path`` (default: :func:`default_path`) and return the path.

    The file is written under a temporary name and moved into place, so a server starting at the
    same moment sees either no file or a complete one, never half a database.
    """
    # Here, not at the top: every server imports this module to open the shop, and builds it at most
    # once (tempfile brings shutil, random and bz2: a few ms of each start).
    import tempfile

    target = Path(path) if path is not None else default_path()
    if not SCHEMA.is_file():
        raise FileNotFoundError(
            f"the shop's seed data is not in {DATA_DIR}: install the project from its checkout with pip install -e ."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".shop-", suffix=".db", dir=target.parent)
    os.close(fd)
    try:
        os.unlink(tmp)  # sqlite creates the file itself
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(SCHEMA.read_text(encoding="utf-8"))
            with conn:
                for table in TABLES:
                    _load_csv(conn, table, SEED_DIR / f"{table}.csv")
        finally:
            conn.close()
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _load_csv(conn: sqlite3.Connection, table: str, csv_path: Path) -> None:
    import csv  # as tempfile in build: only a build reads the seed

    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = next(rows)
        # SQL parameters carry values only, never a table's or a column's name: these names come
        # from our own seed files and are checked to be plain names before they become SQL.
        if table not in TABLES or not all(name.isidentifier() for name in header):
            raise ValueError(f"{csv_path}: not a shop table with plain column names: {table} {header}")
        marks = ", ".join("?" for _ in header)
        sql = f"INSERT INTO {table} ({', '.join(header)}) VALUES ({marks})"  # noqa: S608 (names checked above)
        conn.executemany(sql, rows)


def ensure_default() -> Path:
    """Return the default database, building it first if it does not exist yet."""
    path = default_path()
    if not path.exists():
        build(path)
    return path


def open_readonly(path: Path | str, immutable: bool = True, shared: bool = False) -> sqlite3.Connection:
    """Open ``path`` read-only: writes fail with ``sqlite3.OperationalError``.

    A missing file is an error here (``mode=ro`` never creates one), not a silent empty database.
    ``immutable=False`` for a copy that this process also writes (the advanced track's write
    tools): then every read sees the last committed write. ``shared=True``: usable from several
    threads (the HTTP server's), which must then take turns.
    """
    # mode=ro: writes fail. immutable=1: the file is never changed under us (a rebuild writes a new
    # file and renames it), so sqlite can skip its locks and journal checks on every query.
    uri = Path(path).resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, check_same_thread=not shared)
    conn.execute("PRAGMA query_only = ON")
    # sqlite reads the file lazily: read it now, so that a file that is not a database fails
    # here (sqlite3.DatabaseError) instead of on every tool call.
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return conn
