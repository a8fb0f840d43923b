"""Every call to a catalog is bounded in time: a server that accepts connections and never
answers fails the call within a minute, instead of hanging `plan`, a job or the daemon.

The libraries do not bound them by themselves: pyiceberg's REST client sends its requests
without a timeout, its Hive client opens a Thrift socket without one, and its SQL catalog
connects with the driver's defaults (libpq waits for ever); Iceberg's Java clients wait
for minutes. The one rule, for both engines: connecting may take `CONNECT_TIMEOUT_S`, an
answer `READ_TIMEOUT_S`; a caller retrying (pyiceberg retries a refreshed OAuth token
once) stays within a minute. The state database has its own bounds
(`state/database.py`), and so do S3 clients (`table/s3_client.py`, `spark/session.py`).
AWS Glue through pyiceberg: botocore waits 60 s to connect and 60 s for an answer, and
pyiceberg asks for ten attempts: ten minutes and more against an endpoint that hangs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from maintenance.sql_sessions import TCP_USER_TIMEOUT_MS

CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 20


def bounded_session_class() -> type:
    """A `requests.Session` whose requests have the timeouts unless the caller gave one
    (pyiceberg's REST catalog makes its sessions from the name `Session` in its module:
    `catalogs.py` points that name here)."""
    from requests import Session

    class BoundedSession(Session):
        def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
            return super().request(method, url, *args, **kwargs)

    return BoundedSession


def bounded_thrift_socket_module() -> Any:
    """A stand-in for `thrift.transport.TSocket` whose sockets time out (pyiceberg's Hive
    client makes its socket as `TSocket.TSocket(host, port)`: `catalogs.py` points its
    `TSocket` name here)."""
    from types import SimpleNamespace

    from thrift.transport import TSocket

    class BoundedTSocket(TSocket.TSocket):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.setTimeout(READ_TIMEOUT_S * 1000)  # milliseconds; also bounds connecting

    names = {name: getattr(TSocket, name) for name in dir(TSocket) if not name.startswith("__")}
    return SimpleNamespace(**{**names, "TSocket": BoundedTSocket})


GLUE_RETRIES = 1  # after the first attempt (botocore's `max_attempts`): 2 x 20 s, plus connecting, < 60 s


def bounded_glue_config_class() -> Any:
    """A stand-in for botocore's `Config` whose clients time out (pyiceberg's Glue catalog
    makes its client's config as `Config(retries=...)`: `catalogs.py` points its `Config`
    name here). A timeout the caller gave wins; the attempts come from the catalog's
    `glue.max-retries` (`catalogs.py` sets `GLUE_RETRIES` where the user set none), which
    pyiceberg passes on as it was written, perhaps a string."""
    from botocore.config import Config

    class BoundedGlueConfig(Config):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
            kwargs.setdefault("read_timeout", READ_TIMEOUT_S)
            retries = dict(kwargs.get("retries") or {})
            if "max_attempts" in retries:
                retries["max_attempts"] = int(retries["max_attempts"])
                kwargs["retries"] = retries
            super().__init__(*args, **kwargs)

    return BoundedGlueConfig


def bounded_sql_url(url: str) -> str:
    """A SQL catalog's SQLAlchemy URL with the driver's timeouts added where it names none:
    libpq's `connect_timeout` (which covers the whole start-up, authentication included) and
    TCP user timeout, PyMySQL's connect, read and write timeouts. SQLite is a local file:
    unchanged. Once connected, `sql_sessions.py` bounds statements, lock waits and answers."""
    parts = urlsplit(url)
    dialect = parts.scheme.split("+", 1)[0]
    wanted: dict[str, str] = {}
    if dialect == "postgresql":
        wanted = {"connect_timeout": str(CONNECT_TIMEOUT_S), "tcp_user_timeout": str(TCP_USER_TIMEOUT_MS)}
    elif dialect in ("mysql", "mariadb"):
        wanted = {"connect_timeout": str(CONNECT_TIMEOUT_S), "read_timeout": str(READ_TIMEOUT_S), "write_timeout": str(READ_TIMEOUT_S)}
    if not wanted:
        return url
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    for key, value in wanted.items():
        query.setdefault(key, value)
    return urlunsplit(parts._replace(query=urlencode(query)))


def spark_catalog_timeouts(catalog_type: str, jdbc_uri: str | None, given: Mapping[str, str]) -> dict[str, str]:
    """The same bounds for Iceberg's Java catalog in Spark, as catalog properties (what the
    user set wins): the REST client's connection and socket timeouts, the JDBC driver's
    connect and socket timeouts (PostgreSQL's in seconds, MariaDB's and MySQL's in ms)."""
    props: dict[str, str] = {}
    if catalog_type == "rest":
        props = {"rest.client.connection-timeout-ms": str(CONNECT_TIMEOUT_S * 1000), "rest.client.socket-timeout-ms": str(READ_TIMEOUT_S * 1000)}
    elif catalog_type == "sql" and jdbc_uri:
        if jdbc_uri.startswith("jdbc:postgresql:"):
            props = {"jdbc.connectTimeout": str(CONNECT_TIMEOUT_S), "jdbc.socketTimeout": str(READ_TIMEOUT_S * 3)}
        elif jdbc_uri.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
            props = {"jdbc.connectTimeout": str(CONNECT_TIMEOUT_S * 1000), "jdbc.socketTimeout": str(READ_TIMEOUT_S * 3 * 1000)}
    return {key: value for key, value in props.items() if key not in given}


def spark_hive_timeouts() -> dict[str, str]:
    """Hive Metastore clients in Spark's JVM (Iceberg's HiveCatalog reads Hadoop's
    configuration): a socket timeout and few connection retries instead of minutes."""
    return {"spark.hadoop.hive.metastore.client.socket.timeout": f"{READ_TIMEOUT_S}s",
            "spark.hadoop.hive.metastore.client.connect.retry.delay": "1s",
            "spark.hadoop.hive.metastore.connect.retries": "2",
            "spark.hadoop.hive.metastore.failure.retries": "1"}
