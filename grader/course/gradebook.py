"""A new course's gradebook, made as nbgrader makes it, without nbgrader's ``alembic`` subprocess.

nbgrader's ``Gradebook``, opening a database with no tables, creates its tables and records the
newest of its own migrations in ``alembic_version``. It learns that migration by running the
``alembic heads`` command: a second Python that imports SQLAlchemy and Alembic again, about 3 s of
CPU on this machine, once for every new course (``make lab``'s private course, each instructor's
``mcp-lab course init``). :func:`seed` does the same two steps in this process, with Alembic's own
API for the migration, and nbgrader then opens a gradebook that is there.

    >>> import sqlite3, tempfile
    >>> with tempfile.TemporaryDirectory() as course:
    ...     path = seed(Path(course))
    ...     with sqlite3.connect(path) as db:
    ...         db.execute("SELECT version_num FROM alembic_version").fetchall() == [(head(),)]
    True
"""

from __future__ import annotations

from pathlib import Path

FILE = "gradebook.db"  # nbgrader's default (CourseDirectory.db_url: sqlite:///ROOT/gradebook.db)


def head() -> str:
    """The newest of nbgrader's migrations: what ``alembic heads`` prints first, read with Alembic's API."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    return ScriptDirectory(ALEMBIC_DIR).get_heads()[0]


def seed(course: Path) -> Path:
    """``course``'s gradebook, made now if it is not there yet (an existing one is left as it is)."""
    path = course / FILE
    if path.exists():
        return path
    from nbgrader.api import Base
    from sqlalchemy import create_engine, text

    made = course / f".{FILE}.new"  # whole or not at all: nbgrader never opens half a gradebook
    made.unlink(missing_ok=True)
    engine = create_engine(f"sqlite:///{made}")
    try:
        with engine.begin() as db:
            Base.metadata.create_all(bind=db)
            db.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);"))
            db.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": head()})
    finally:
        engine.dispose()
    made.replace(path)
    return path
