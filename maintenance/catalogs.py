"""Table names and catalogs: pyiceberg's view of each configured catalog.

A table is `namespace.table` in the default catalog or `catalog.namespace.table`.
Loading goes through pyiceberg (no JVM), so health, planning and name checks are fast
and an unknown table is reported before Spark is ever started.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.exceptions import ValidationError as MetadataValidationError
from pyiceberg.table import Table
from sqlalchemy import Engine, create_engine
from sqlalchemy.exc import SQLAlchemyError
from thrift.transport.TTransport import TTransportException

from maintenance.config import CatalogConfig, Config
from maintenance.errors import (
    CatalogUnavailableError,
    ConfigError,
    IcemaintError,
    UnknownTableError,
    UnreadableMetadataError,
    UsageError,
    misconfigured,
)
from maintenance.redact import redact_text
from maintenance.sql_sessions import bound_sessions
from maintenance.timeouts import (
    GLUE_RETRIES,
    bounded_glue_config_class,
    bounded_session_class,
    bounded_sql_url,
    bounded_thrift_socket_module,
)

# What a catalog that cannot be reached raises (requests' errors are OSErrors; a Hive
# Metastore's Thrift transport has its own).
UNREACHABLE = (OSError, ConnectionError, SQLAlchemyError, TTransportException)


@dataclass(frozen=True)
class TableRef:
    """A fully qualified table: the catalog it lives in, its namespace and name."""

    catalog: str
    namespace: tuple[str, ...]
    name: str

    def __post_init__(self) -> None:
        # Its text is the key of every per-table map of a cycle, asked for some 30 times a
        # table: made once (0.1 s of a warm `plan` over 2,000 tables, when made each time).
        object.__setattr__(self, "_text", ".".join((self.catalog, *self.namespace, self.name)))

    @property
    def identifier(self) -> str:
        """`namespace.table`, as pyiceberg names it inside its catalog."""
        return ".".join((*self.namespace, self.name))

    @property
    def spark_namespace(self) -> str:
        """`catalog.namespace`, quoted for Spark SQL."""
        return ".".join(f"`{part}`" for part in (self.catalog, *self.namespace))

    @property
    def spark_name(self) -> str:
        """`catalog.namespace.table`, quoted for Spark SQL."""
        return ".".join(f"`{part}`" for part in (self.catalog, *self.namespace, self.name))

    def __str__(self) -> str:
        return self._text  # type: ignore[attr-defined, no-any-return]


def parse_table_ref(text: str, config: Config) -> TableRef:
    parts = [p for p in text.strip().split(".")]
    if len(parts) < 2 or any(not p for p in parts):
        raise UsageError(f"table name '{text}' must be namespace.table or catalog.namespace.table")
    if len(parts) == 2:
        return TableRef(config.default_catalog, (parts[0],), parts[1])
    # With three or more parts the first names a catalog; an unknown one is an error
    # rather than a guess at a nested namespace, so a typo never hits the wrong table.
    config.catalog(parts[0])
    return TableRef(parts[0], tuple(parts[1:-1]), parts[-1])


def _bound_pyiceberg_clients(kind: str) -> None:
    """pyiceberg's REST, Hive, Glue and SQL clients with timeouts (`timeouts.py` says why): its
    REST catalog makes every session from its module's `Session`, its Hive client its socket
    from its module's `TSocket`, its Glue catalog its botocore config from its module's
    `Config`, its SQL catalog its engine from its module's `create_engine` (whose sessions
    `sql_sessions.py` bounds once connected); each name points at a bounded one, once per
    process, before its first catalog (a process with SQL catalogs only imports none of the
    others: 0.7 s of a cron tick)."""
    if kind == "rest":
        import pyiceberg.catalog.rest as rest

        if getattr(rest.Session, "__name__", "") != "BoundedSession":
            rest.Session = bounded_session_class()  # type: ignore[misc]
    if kind == "hive":
        import pyiceberg.catalog.hive as hive

        if getattr(hive.TSocket.TSocket, "__name__", "") != "BoundedTSocket":
            hive.TSocket = bounded_thrift_socket_module()
    if kind == "sql":
        import pyiceberg.catalog.sql as sql

        if getattr(sql.create_engine, "__name__", "") != "bounded_create_engine":
            sql.create_engine = bounded_create_engine  # type: ignore[assignment]
    if kind == "glue":
        import pyiceberg.catalog.glue as glue

        if getattr(glue.Config, "__name__", "") != "BoundedGlueConfig":
            glue.Config = bounded_glue_config_class()  # type: ignore[misc]


def bounded_create_engine(*args: Any, **kwargs: Any) -> Engine:
    """SQLAlchemy's `create_engine`, its sessions bounded (`sql_sessions.py`): what pyiceberg's
    SQL catalog makes its engine with."""
    return bound_sessions(create_engine(*args, **kwargs))


def pyiceberg_properties(catalog: CatalogConfig) -> dict[str, str]:
    props: dict[str, str] = {"type": catalog.type, **catalog.properties, **catalog.pyiceberg_properties}
    if catalog.uri:
        props["uri"] = bounded_sql_url(catalog.uri) if catalog.type == "sql" else catalog.uri
    if catalog.warehouse:
        props["warehouse"] = catalog.warehouse
    if catalog.type == "sql":
        _ensure_sqlite_folder(catalog.uri)
        props.setdefault("init_catalog_tables", "false")  # pyiceberg's default makes them in any database: `_catalog_tables`
    if catalog.type == "glue":
        props.setdefault("glue.max-retries", str(GLUE_RETRIES))  # pyiceberg's ten retries would wait for minutes
    return props


def _sqlite_file(uri: str | None) -> Path | None:
    """The database file of a `sqlite:///path` catalog URI; None for other URIs and for
    SQLite in memory."""
    if not uri or not uri.startswith("sqlite:"):
        return None
    from sqlalchemy.engine import make_url

    database = make_url(uri).database
    return Path(database) if database and database != ":memory:" else None


def _ensure_sqlite_folder(uri: str | None) -> None:
    path = _sqlite_file(uri)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def _require_existing_database(config: Config, name: str) -> None:
    """Maintenance reads a catalog that exists: a SQLite catalog whose file is missing is a
    mistyped path, and SQLAlchemy would create an empty catalog there that lists no table and
    makes every cycle say "nothing due" (exit 0). Only writers of tables (`workload`, the
    tests) create a catalog, through `get_catalog`."""
    path = _sqlite_file(config.catalog(name).uri)
    if path is not None and not path.exists():
        raise ConfigError(f"catalog '{name}': its SQLite database {path} does not exist (icemaint never creates a catalog; check the catalog's uri)")


@lru_cache(maxsize=None)
def _load_catalog_cached(name: str, frozen_props: tuple[tuple[str, str], ...]) -> Catalog:
    return load_catalog(name, **dict(frozen_props))


def get_catalog(config: Config, name: str, *, create: bool = False) -> Catalog:
    """The catalog, through pyiceberg. A SQL catalog's database must hold the catalog's tables
    (`_catalog_tables`); `create`: a writer of tables (`workload`) makes them where missing."""
    catalog_config = config.catalog(name)
    props = pyiceberg_properties(catalog_config)
    _bound_pyiceberg_clients(catalog_config.type)
    try:
        catalog = _load_catalog_cached(name, tuple(sorted(props.items())))
        if catalog_config.type == "sql":
            _catalog_tables(catalog, name, create=create or catalog_config.embedded)
    except IcemaintError:
        raise
    except Exception as exc:  # pyiceberg raises many kinds; all mean "cannot use it now"
        raise _catalog_error(name, exc) from exc
    return catalog


CATALOG_TABLES = ("iceberg_tables", "iceberg_namespace_properties")  # pyiceberg's and Iceberg's JdbcCatalog's
_seen_catalog_tables: set[int] = set()  # catalogs (by id, as cached) whose tables were found


def _catalog_tables(catalog: Catalog, name: str, *, create: bool) -> None:
    """A SQL catalog's database holds the catalog's tables, or it is not the writers' catalog:
    pyiceberg would make them in whatever database the uri names (a mistyped database, a
    user's application database) and list nothing from it, so every cycle would say "nothing
    due". Such a database is the configuration's error, naming the catalog, and nothing is
    made in it; only icemaint's own catalog (the embedded default's) and a writer of tables
    (`workload`, the demo) make them, with `create`."""
    if id(catalog) in _seen_catalog_tables:
        return
    from sqlalchemy import inspect

    engine = catalog.engine  # type: ignore[attr-defined]
    missing = [table for table in CATALOG_TABLES if not inspect(engine).has_table(table)]
    if missing and create:
        catalog.create_tables()  # type: ignore[attr-defined]
    elif missing:
        database = redact_text(engine.url.render_as_string(hide_password=False))
        raise ConfigError(f"catalog '{name}': its database {database} holds no Iceberg catalog (no table {', '.join(missing)}); "
                          "icemaint creates none in a database it did not make: check the catalog's uri (the database your writers' catalog uses)")
    _seen_catalog_tables.add(id(catalog))


def load_table(config: Config, ref: TableRef) -> Table:
    _require_existing_database(config, ref.catalog)
    catalog = get_catalog(config, ref.catalog)
    try:
        return catalog.load_table(ref.identifier)
    except (NoSuchTableError, NoSuchNamespaceError):
        raise UnknownTableError(f"unknown table '{ref}'") from None
    except UNREACHABLE as exc:
        raise _catalog_error(ref.catalog, exc) from exc
    except (MetadataValidationError, ValueError) as exc:  # the metadata file is damaged: not JSON, or not table metadata
        raise UnreadableMetadataError(f"table '{ref}': its current metadata file cannot be read ({_metadata_problem(exc)}); "
                                      f"{_metadata_location(catalog, ref)}") from exc


def _metadata_problem(exc: BaseException) -> str:
    errors = getattr(exc.__cause__ if isinstance(exc, MetadataValidationError) else exc, "errors", None)
    if callable(errors):  # pydantic: say which field, not the whole report
        try:
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
        except Exception:  # noqa: BLE001 - only the wording is at stake
            pass
    return _one_line(exc)


def _metadata_location(catalog: Catalog, ref: TableRef) -> str:
    """Where the damaged metadata is, where the catalog says so without parsing it (pyiceberg's
    SQL catalog); other catalogs read or parse it themselves."""
    from pyiceberg.catalog.sql import IcebergTables, SqlCatalog

    if not isinstance(catalog, SqlCatalog):
        return "the catalog names the file"
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    try:
        with Session(catalog.engine) as session:
            location = session.scalar(select(IcebergTables.metadata_location).where(
                IcebergTables.catalog_name == catalog.name, IcebergTables.table_namespace == ".".join(ref.namespace), IcebergTables.table_name == ref.name))
    except SQLAlchemyError:
        location = None
    return f"file {location}" if location else "the catalog names the file"


def list_tables(config: Config, *catalogs: str) -> list[TableRef]:
    """Every table of the named catalogs (default: every configured one), namespaces walked
    to any depth."""
    refs = []
    for name in catalogs or tuple(config.catalogs):
        _require_existing_database(config, name)
        catalog = get_catalog(config, name)
        try:
            pending = [tuple(ns) for ns in catalog.list_namespaces()]
            while pending:
                namespace = pending.pop()
                refs.extend(TableRef(name, tuple(ident[:-1]), ident[-1]) for ident in catalog.list_tables(namespace))
                pending.extend(tuple(ns) for ns in catalog.list_namespaces(namespace) if tuple(ns) != namespace)
        except (NoSuchNamespaceError, NotImplementedError):
            continue
        except UNREACHABLE as exc:
            raise _catalog_error(name, exc) from exc
    return sorted(refs, key=str)


def catalog_listing(config: Config, name: str) -> tuple[list[TableRef], dict[str, str] | None]:
    """The catalog's tables (as `list_tables`) and each one's current metadata location (by
    `str(TableRef)`) where the catalog keeps them in a table of its own (pyiceberg's SQL
    catalog): there one query answers both, where walking the namespaces took a query per
    namespace and another for the locations (0.1 s of a warm cron tick over 2,000 tables).
    The locations are None for catalogs that say one only by loading the table (Hive, REST)."""
    from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    _require_existing_database(config, name)
    catalog = get_catalog(config, name)
    if not isinstance(catalog, SqlCatalog):
        return list_tables(config, name), None
    query = select(IcebergTables.table_namespace, IcebergTables.table_name, IcebergTables.metadata_location).where(IcebergTables.catalog_name == catalog.name)
    # Its own listing leaves out what Java and Rust writers keep in the same table (views),
    # on the layouts that say which rows are views (`iceberg_type`): the same filter here.
    tables_only = getattr(catalog, "_iceberg_type_filter", lambda: None)()
    if tables_only is not None:
        query = query.where(tables_only)
    try:
        with Session(catalog.engine) as session:
            rows = session.execute(query).all()
    except UNREACHABLE as exc:
        raise _catalog_error(name, exc) from exc
    refs = {TableRef(name, tuple(namespace.split(".")), table): location for namespace, table, location in rows}
    return sorted(refs, key=str), {str(ref): location for ref, location in refs.items() if location}


def no_table_hint(config: Config, name: str) -> str:
    """Why a configured catalog may list no table, said as precisely as the catalog lets us:
    pyiceberg's SQL catalog keys every table by the catalog's name, so a name that differs
    from the writers' (Spark's `spark.sql.catalog.<name>`) lists nothing although the database
    is full; the names it does hold are said."""
    from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    catalog = get_catalog(config, name)
    if isinstance(catalog, SqlCatalog):
        try:
            with Session(catalog.engine) as session:
                others = sorted(n for n in session.scalars(select(IcebergTables.catalog_name).distinct()) if n != name)
        except UNREACHABLE:
            others = []
        if others:
            return (f"its database holds tables of catalog {', '.join(repr(n) for n in others)}: a catalog's name in the "
                    f"configuration must be the name its writers use")
    return "check the catalog's name, uri and warehouse (a table the writers made would be listed here)"


def _catalog_error(name: str, exc: BaseException) -> IcemaintError:
    """Unreachable is a failure that may pass (exit 1); a wrong role, database, password or
    database file is the configuration's (exit 2)."""
    reason = _one_line(exc)
    if misconfigured(reason):
        return ConfigError(f"catalog '{name}': {reason}")
    return CatalogUnavailableError(f"catalog '{name}' is unavailable: {reason}")


def _one_line(exc: BaseException) -> str:
    text = redact_text(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def table_exists(config: Config, ref: TableRef) -> bool:
    try:
        load_table(config, ref)
    except UnknownTableError:
        return False
    return True
