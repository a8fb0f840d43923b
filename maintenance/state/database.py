"""The state database: engines, the database clock, and migrations on start.

SQLite (the embedded default), PostgreSQL and MariaDB/MySQL are supported. The schema is
created and changed only by Alembic migrations; every process upgrades on start, under a
cross-process lock, so several daemons starting together do not race. Alembic itself (about
half a second to import, with every dialect's DDL) is imported only when the database is not
at the newest migration: a cron tick or a CLI command on an upgraded database reads the
recorded revision with one query and goes on.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import structlog
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    create_engine,
    event,
    literal_column,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from maintenance.errors import ConfigError, IcemaintError, misconfigured
from maintenance.redact import redact_text
from maintenance.sql_sessions import ANSWER_S, TCP_USER_TIMEOUT_MS, bound_sessions, unbounded

log = structlog.get_logger(__name__)

# An installed icemaint ships the migrations inside the package (pyproject.toml maps the
# repository's migrations/ to maintenance/migrations); a checkout or editable install has
# them only at the repository root, where README and `alembic -c migrations/alembic.ini` use them.
_PACKAGED_MIGRATIONS = Path(str(resources.files("maintenance").joinpath("migrations")))
MIGRATIONS_DIR = _PACKAGED_MIGRATIONS if _PACKAGED_MIGRATIONS.is_dir() else Path(__file__).resolve().parents[2] / "migrations"
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}
_PG_LOCK_KEY = 0x1CE3A1  # pg_advisory_lock key for migrations
_MYSQL_LOCK_NAME = "icemaint_migrations"
_upgraded: set[str] = set()
_upgrade_guard = threading.Lock()


class StateUnavailableError(IcemaintError):
    """The state database cannot be reached now; retrying later may succeed."""


def normalise_url(url: str) -> str:
    """Pick the drivers we ship (psycopg 3, PyMySQL) when the URL names none."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ConfigError(f"state url '{redact_text(url)}' is not a database URL")
    return f"{_DRIVERS.get(scheme, scheme)}://{rest}"


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(f"state url '{redact_text(url)}' is not a database URL") from None
    try:
        if parsed.get_backend_name() == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"timeout": 60})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        # An unreachable database fails fast (connect_timeout); a connection whose server went
        # away silently is found dead in seconds, not after the OS's TCP timeout (libpq's
        # keepalives and TCP user timeout; PyMySQL's read and write timeouts); once connected,
        # every statement, lock wait and answer is bounded too (`sql_sessions.py`).
        connect_args: dict[str, object]
        if parsed.get_backend_name() == "postgresql":
            connect_args = {"connect_timeout": 5, "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
                            "tcp_user_timeout": TCP_USER_TIMEOUT_MS}
        else:
            connect_args = {"connect_timeout": 5, "read_timeout": ANSWER_S, "write_timeout": ANSWER_S}
        return bound_sessions(create_engine(url, pool_pre_ping=True, pool_recycle=1800, connect_args=connect_args))
    except (NoSuchModuleError, ImportError) as exc:
        raise ConfigError(f"state url '{redact_text(url)}': unsupported database ({exc})") from None


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.close()


NAMES_AT_ONCE = 500  # values in one IN (...) list


def in_groups(values: Collection[str]) -> list[list[str]]:
    """`values`, sorted, in groups of at most `NAMES_AT_ONCE`: one IN (...) list each, so a
    query by thousands of names stays within every backend's statement limits."""
    ordered = sorted(values)
    return [ordered[start:start + NAMES_AT_ONCE] for start in range(0, len(ordered), NAMES_AT_ONCE)]


def db_now_ms(engine_or_conn: Engine | Connection) -> ColumnElement[int]:
    """The database's clock as epoch milliseconds, as a SQL expression."""
    backend = engine_or_conn.dialect.name
    if backend == "postgresql":
        return literal_column("CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)")
    if backend in ("mysql", "mariadb"):
        return literal_column("CAST(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS SIGNED)")
    if backend == "sqlite":
        return literal_column("CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)")
    raise ConfigError(f"state database '{backend}' is not supported (use sqlite, postgresql or mariadb/mysql)")


@contextmanager
def unavailable_as_error(url: str | None = None) -> Iterator[None]:
    """A database that cannot be reached becomes one StateUnavailableError line."""
    try:
        yield
    except OperationalError as exc:
        reason = redact_text(str(exc.orig) if exc.orig is not None else str(exc)).strip().splitlines()[0]
        if misconfigured(reason):
            raise ConfigError(f"state database: {reason}") from exc
        raise StateUnavailableError(f"state database unreachable: {reason}") from exc
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise StateUnavailableError("state database connection lost") from exc
        raise


def _alembic_config(connection: Connection | None = None):  # type: ignore[no-untyped-def]
    from alembic.config import Config as AlembicConfig

    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def newest_migration() -> str | None:
    """The head revision as the migration files name it, without Alembic: each file is
    `NNNN_what.py` with `revision = "NNNN"`, each the next of the one before (a test holds
    this equal to Alembic's `head_revision`)."""
    numbers = sorted(path.name.split("_", 1)[0] for path in (MIGRATIONS_DIR / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))
    return numbers[-1] if numbers else None


def current_revision(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _recorded_revision(connection: Connection) -> str | None:
    """The revision Alembic recorded, by one plain query; None where it recorded none."""
    try:
        found = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except SQLAlchemyError:  # no such table yet: a new database
        connection.rollback()
        return None
    return found[0] if len(found) == 1 else None


def upgrade(engine: Engine) -> str | None:
    """Bring the schema to the newest migration; a no-op when it is there. Returns the revision."""
    if engine.dialect.name == "sqlite":
        # The first connection to a new file switches it to WAL, which needs the file to
        # itself: processes starting together take the file lock before connecting at all.
        with _sqlite_file_lock(engine):
            return _upgrade(engine)
    return _upgrade(engine)


def _upgrade(engine: Engine) -> str | None:
    with unavailable_as_error(), engine.connect() as connection:
        newest = newest_migration()
        if newest is not None and _recorded_revision(connection) == newest:
            return newest
        connection.rollback()
        from alembic import command

        head = head_revision()
        if current_revision(connection) == head:
            return head
        connection.rollback()
        with unbounded(connection), _migration_lock(engine, connection):
            # Another process may have upgraded while we waited for the lock.
            if current_revision(connection) != head:
                log.info("upgrading state database", to=head)
                command.upgrade(_alembic_config(connection), "head")
                connection.commit()
        return current_revision(connection)


def ensure_schema(engine: Engine) -> None:
    """Upgrade once per process and database (the CLI and the daemon call this on start)."""
    key = engine.url.render_as_string(hide_password=False)
    with _upgrade_guard:
        if key in _upgraded:
            return
        upgrade(engine)
        _upgraded.add(key)


@contextmanager
def _migration_lock(engine: Engine, connection: Connection) -> Iterator[None]:
    backend = engine.dialect.name
    if backend == "postgresql":
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _PG_LOCK_KEY})
        connection.commit()
        try:
            yield
        finally:
            connection.rollback()
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _PG_LOCK_KEY})
            connection.commit()
    elif backend in ("mysql", "mariadb"):
        got = connection.execute(text("SELECT GET_LOCK(:name, 300)"), {"name": _MYSQL_LOCK_NAME}).scalar()
        if got != 1:
            raise StateUnavailableError("state database: timed out waiting for the migration lock")
        try:
            yield
        finally:
            connection.rollback()
            connection.execute(text("SELECT RELEASE_LOCK(:name)"), {"name": _MYSQL_LOCK_NAME})
    else:
        yield  # SQLite: upgrade() already holds the file lock


@contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    database = engine.url.database
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate.lock", "a+") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)
