"""Table names and catalogs: pyiceberg's view of each configured catalog.

A table is `namespace.table` in the default catalog or `catalog.namespace.table`.
Loading goes through pyiceberg (no JVM), so health, planning and name checks are fast
and an unknown table is reported before Spark is ever started.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.exceptions import ValidationError as MetadataValidationError
from pyiceberg.table import Table
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
from maintenance.timeouts import bounded_session_class, bounded_sql_url, bounded_thrift_socket_module

# What a catalog that cannot be reached raises (requests' errors are OSErrors; a Hive
# Metastore's Thrift transport has its own).
UNREACHABLE = (OSError, ConnectionError, SQLAlchemyError, TTransportException)


@dataclass(frozen=True)
class TableRef:
    """A fully qualified table: the catalog it lives in, its namespace and name."""

    catalog: str
    namespace: tuple[str, ...]
    name: str

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
        return ".".join((self.catalog, *self.namespace, self.name))


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
    """pyiceberg's REST and Hive clients with timeouts (`timeouts.py` says why): its REST
    catalog makes every session from its module's `Session`, its Hive client its socket from
    its module's `TSocket`; both names point at bounded ones, once per process, each before
    its first catalog (a process with SQL catalogs only imports neither: 0.7 s of a cron tick)."""
    if kind == "rest":
        import pyiceberg.catalog.rest as rest

        if getattr(rest.Session, "__name__", "") != "BoundedSession":
            rest.Session = bounded_session_class()  # type: ignore[misc]
    if kind == "hive":
        import pyiceberg.catalog.hive as hive

        if getattr(hive.TSocket.TSocket, "__name__", "") != "BoundedTSocket":
            hive.TSocket = bounded_thrift_socket_module()


def pyiceberg_properties(catalog: CatalogConfig) -> dict[str, str]:
    props: dict[str, str] = {"type": catalog.type, **catalog.properties, **catalog.pyiceberg_properties}
    if catalog.uri:
        props["uri"] = bounded_sql_url(catalog.uri) if catalog.type == "sql" else catalog.uri
    if catalog.warehouse:
        props["warehouse"] = catalog.warehouse
    if catalog.type == "sql":
        _ensure_sqlite_folder(catalog.uri)
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


def get_catalog(config: Config, name: str) -> Catalog:
    catalog = config.catalog(name)
    props = pyiceberg_properties(catalog)
    _bound_pyiceberg_clients(catalog.type)
    try:
        return _load_catalog_cached(name, tuple(sorted(props.items())))
    except Exception as exc:  # pyiceberg raises many kinds; all mean "cannot use it now"
        raise _catalog_error(name, exc) from exc


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


def metadata_locations(config: Config, name: str) -> dict[str, str] | None:
    """Every table's current metadata location (by `str(TableRef)`), in one query, where the
    catalog keeps them in a table of its own (pyiceberg's SQL catalog); None for catalogs
    that say it only by loading each table (Hive, REST)."""
    from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    _require_existing_database(config, name)
    catalog = get_catalog(config, name)
    if not isinstance(catalog, SqlCatalog):
        return None
    query = select(IcebergTables.table_namespace, IcebergTables.table_name, IcebergTables.metadata_location).where(IcebergTables.catalog_name == catalog.name)
    try:
        with Session(catalog.engine) as session:
            rows = session.execute(query).all()
    except UNREACHABLE as exc:
        raise _catalog_error(name, exc) from exc
    return {str(TableRef(name, tuple(namespace.split(".")), table)): location for namespace, table, location in rows if location}


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
