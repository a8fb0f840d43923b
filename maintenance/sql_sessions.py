"""SQL sessions that cannot wait for ever: the state database's and pyiceberg's SQL catalog's,
on PostgreSQL and MariaDB/MySQL, once connected.

Connecting is bounded by the drivers' connect timeouts (`state/database.py`,
`timeouts.bounded_sql_url`); what comes after was not. Two ways a session waited without end:
- **On the server**: a statement waiting for a row another session holds. A holder paused
  (SIGSTOP, a frozen VM) inside a state transaction keeps its row locks for as long as it is
  paused, and a takeover's UPDATE of that lease waited as long. The server now ends a session
  idle inside a transaction after `IDLE_IN_TRANSACTION_S` (its locks go with it), a lock wait
  after `LOCK_WAIT_S` and any statement after `STATEMENT_S`: PostgreSQL's
  `idle_in_transaction_session_timeout`, `lock_timeout`, `statement_timeout`; MariaDB's
  `idle_transaction_timeout`, `innodb_lock_wait_timeout`, `max_statement_time` (MySQL has
  only the lock wait's). The idle bound is below the lock wait's, so a takeover waits for a
  paused holder's row lock once and then goes on, rather than failing.
- **On the wire**: a server (or a proxy, a load balancer) that stops answering a connection
  it keeps open. TCP keepalives do not see it (the peer's kernel still answers them), and
  libpq has no read timeout: every wait of a psycopg connection is now bounded by
  `ANSWER_S` (`BoundedConnection`), after which the connection is closed and the call fails
  as unreachable; PyMySQL's read and write timeouts do the same for MariaDB/MySQL.
`ANSWER_S` is above the server's bounds, so a server that answers says why itself, and the
whole stays under a minute. Migrations lift the bounds on their own connection
(`unbounded`): altering a large run history may take longer, and happens once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, event

IDLE_IN_TRANSACTION_S = 15
LOCK_WAIT_S = 20
STATEMENT_S = 30
ANSWER_S = 40
TCP_USER_TIMEOUT_MS = 30_000  # unacknowledged data: a peer gone without a word (libpq)


def bound_sessions(engine: Engine) -> Engine:
    """Give every new connection of `engine` the bounds above (server and client side); a
    SQLite engine is unchanged (a local file: its busy timeout bounds its waits)."""
    backend = engine.dialect.name
    if backend == "postgresql" and engine.dialect.driver == "psycopg":
        event.listen(engine, "do_connect", _bounded_psycopg_connect)
        event.listen(engine, "connect", _postgresql_bounds)
    elif backend in ("mysql", "mariadb"):
        event.listen(engine, "connect", _mysql_bounds)
    return engine


def postgresql_bounds_sql(*, lifted: bool = False) -> str:
    """The server side's bounds as one SET statement (0: none, for migrations)."""
    values = (0, 0, 0) if lifted else (IDLE_IN_TRANSACTION_S * 1000, LOCK_WAIT_S * 1000, STATEMENT_S * 1000)
    names = ("idle_in_transaction_session_timeout", "lock_timeout", "statement_timeout")
    return "; ".join(f"SET {name} = {value}" for name, value in zip(names, values))


def _postgresql_bounds(dbapi_connection: Any, _record: Any) -> None:
    with dbapi_connection.cursor() as cursor:
        cursor.execute(postgresql_bounds_sql())
    dbapi_connection.commit()


def _mysql_bounds(dbapi_connection: Any, _record: Any) -> None:
    """MariaDB has all three bounds; MySQL only the lock wait's (its `max_execution_time`
    bounds reads only, and the client's read timeout bounds every statement anyway)."""
    with dbapi_connection.cursor() as cursor:
        cursor.execute(_mysql_bounds_sql(dbapi_connection))
    dbapi_connection.commit()


def _mysql_bounds_sql(dbapi_connection: Any, *, lifted: bool = False) -> str:
    mariadb = "mariadb" in str(dbapi_connection.get_server_info()).lower()
    settings = {"innodb_lock_wait_timeout": 50 if lifted else LOCK_WAIT_S}
    if mariadb:
        settings |= {"idle_transaction_timeout": 0 if lifted else IDLE_IN_TRANSACTION_S, "max_statement_time": 0 if lifted else STATEMENT_S}
    return "SET " + ", ".join(f"SESSION {name} = {value}" for name, value in settings.items())


def _bounded_psycopg_connect(_dialect: Any, _record: Any, cargs: tuple[Any, ...], cparams: dict[str, Any]) -> Any:
    return bounded_connection_class().connect(*cargs, **cparams)


_BOUNDED: list[type] = []


def bounded_connection_class() -> type:
    """A psycopg `Connection` each of whose waits for the server ends after `ANSWER_S` (or its
    `answer_within_s`, None for none): the connection is then closed, its state unknown, and
    the wait fails with psycopg's OperationalError, which SQLAlchemy reports as a lost
    connection (the pool makes a new one next time)."""
    if _BOUNDED:
        return _BOUNDED[0]
    import psycopg
    from psycopg import errors

    wait_timeout = errors._WaitTimeout  # psycopg's own "no answer within the timeout" (3.3)

    class BoundedConnection(psycopg.Connection):  # type: ignore[type-arg]
        answer_within_s: float | None = ANSWER_S

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            bound = timeout if timeout is not None else self.answer_within_s
            try:
                return super().wait(gen, interval=interval, timeout=bound)
            except wait_timeout as exc:
                if timeout is not None:
                    raise
                self.pgconn.finish()
                raise psycopg.OperationalError(f"the server did not answer within {bound:.0f} s; connection closed") from exc

    _BOUNDED.append(BoundedConnection)
    return BoundedConnection


@contextmanager
def unbounded(connection: Connection) -> Iterator[None]:
    """This connection without the bounds, for a migration (and the wait for another
    process's); bounded again afterwards, or invalidated where that fails, so the pool never
    hands out an unbounded connection."""
    backend = connection.dialect.name
    if backend not in ("postgresql", "mysql", "mariadb"):
        yield
        return
    _set_bounds(connection, lifted=True)
    try:
        yield
    finally:
        try:
            connection.rollback()
            _set_bounds(connection, lifted=False)
        except Exception:  # noqa: BLE001 - the connection is broken: the caller's error says why
            connection.invalidate()


def _set_bounds(connection: Connection, *, lifted: bool) -> None:
    dbapi_connection = connection.connection.dbapi_connection
    if connection.dialect.name == "postgresql":
        if hasattr(dbapi_connection, "answer_within_s"):
            dbapi_connection.answer_within_s = None if lifted else ANSWER_S
        connection.exec_driver_sql(postgresql_bounds_sql(lifted=lifted))
    else:
        connection.exec_driver_sql(_mysql_bounds_sql(dbapi_connection, lifted=lifted))
        dbapi_connection._read_timeout = None if lifted else ANSWER_S  # PyMySQL's own (the state database's)
    connection.commit()
