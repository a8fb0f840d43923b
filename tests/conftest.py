"""Shared fixtures: one icemaint home and one Spark session for the whole test run."""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config, parse_config
from maintenance.workload.cdc import CdcOptions, CdcResult, run_cdc_workload
from maintenance.workload.model import CdcModel
from maintenance.workload.shape import TableShape

_names = itertools.count(1)


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("icemaint-home")
    os.environ["ICEMAINT_HOME"] = str(path)
    return path


@pytest.fixture(scope="session")
def config(home: Path) -> Config:
    return parse_config({}, source="tests", base_dir=home)


@pytest.fixture(scope="session")
def spark(config: Config) -> Iterator[object]:
    from maintenance.spark.session import get_spark, stop_spark

    session = get_spark(config)
    yield session
    stop_spark()


def fresh_ref(config: Config, prefix: str = "t") -> TableRef:
    """A table name no other test uses."""
    return TableRef(config.default_catalog, ("tests",), f"{prefix}{next(_names)}")


CdcFactory = Callable[..., tuple[TableRef, CdcResult, CdcModel]]


@pytest.fixture()
def cdc_table(spark: object, config: Config) -> CdcFactory:
    """Make a generated CDC table: cdc_table(shape=..., rows=..., commits=...)."""

    def make(*, shape: TableShape | None = None, ref: TableRef | None = None, **options: object) -> tuple[TableRef, CdcResult, CdcModel]:
        ref = ref or fresh_ref(config)
        opts = CdcOptions(shape=shape or TableShape(), **{"rows": 3000, "commits": 5, **options})  # type: ignore[arg-type]
        result, model = run_cdc_workload(spark, config, ref, opts)  # type: ignore[arg-type]
        return ref, result, model

    return make


# -- state databases: every lease test runs on SQLite, PostgreSQL and MariaDB, for real ----
POSTGRES_ADMIN_URL = os.environ.get("ICEMAINT_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MARIADB_ADMIN_URL = os.environ.get("ICEMAINT_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test")


def _server_database(admin_url: str, name: str) -> Iterator[str]:
    """A new, empty database on a real server for this test run; dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            if admin.dialect.name == "postgresql":
                conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                conn.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()


def new_state_url(kind: str, tmp_path: Path) -> Iterator[str]:
    name = f"icemaint_{uuid.uuid4().hex[:10]}"
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / (name + '.db')}"
    elif kind == "postgresql":
        yield from _server_database(POSTGRES_ADMIN_URL, name)
    else:
        yield from _server_database(MARIADB_ADMIN_URL, name)


STATE_KINDS = ["sqlite", "postgresql", "mariadb"]
SERVER_KINDS = ("postgresql", "mariadb")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tiers a test's fixtures imply, added to those its module declares (`pytestmark`,
    decorators; `tests/test_tiers.py` checks the declarations):
    `spark`: a test that uses the shared Spark session, directly or through a fixture.
    `slow_on_servers`: a test over the state database kinds (the `state` fixture, or its own
    parameter) that is `slow` on PostgreSQL and MariaDB (spawned processes against a server),
    so `make test` runs it on SQLite and `make test-integration` on the servers."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):  # the shared session: not in `make test-fast`
            item.add_marker(pytest.mark.spark)
        callspec = getattr(item, "callspec", None)
        if item.get_closest_marker("slow_on_servers") and callspec is not None and any(v in SERVER_KINDS for v in callspec.params.values()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(params=STATE_KINDS)
def empty_state_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty state database (no schema yet), of each kind."""
    yield from new_state_url(request.param, tmp_path)


@pytest.fixture(params=STATE_KINDS, scope="module")
def state(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A migrated state store of each kind, shared by a module's tests."""
    from maintenance.state.database import ensure_schema, make_engine
    from maintenance.state.store import StateStore

    for url in new_state_url(request.param, tmp_path_factory.mktemp("state")):
        engine = make_engine(url)
        ensure_schema(engine)
        yield StateStore.on(engine)
        engine.dispose()


@pytest.fixture()
def sqlite_store(tmp_path: Path) -> Iterator[object]:
    """A migrated state store on SQLite, the test's own (what a daemon's door writes into)."""
    from maintenance.state.database import ensure_schema, make_engine
    from maintenance.state.store import StateStore

    engine = make_engine(f"sqlite:///{tmp_path / 'state.db'}")
    ensure_schema(engine)
    yield StateStore.on(engine)
    engine.dispose()


# -- the catalog matrix's services (tests/services): started once, only when a test asks ----
@pytest.fixture(scope="session")
def catalog_services(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """SeaweedFS (S3 and its Iceberg REST catalog) and a Hive Metastore, for the whole run.

    Their logs stay in the services folder when a test failed (the path is printed), and
    the folder is removed after a run without failures."""
    import shutil

    from tests.services.stack import start_services

    folder = tmp_path_factory.mktemp("services")
    services = start_services(folder)
    try:
        yield services
    finally:
        services.stop()
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("catalog services startup: " + ", ".join(f"{k} {v:.1f}" for k, v in services.timings.items()))
        if request.session.testsfailed:
            if reporter is not None:
                reporter.write_line(f"catalog services: logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
