"""The state database's schema (`state/database.py`): migrations from an empty database, upgraded
twice and by two processes at once, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from maintenance.state.database import head_revision, make_engine, newest_migration, upgrade
from tests.support import lease_workers
from tests.support.lease_workers import run_workers


def test_migration_from_empty_database_and_upgrade_twice(empty_state_url: str) -> None:
    engine = make_engine(empty_state_url)
    assert not inspect(engine).get_table_names()

    assert upgrade(engine) == head_revision()
    tables = set(inspect(engine).get_table_names())
    assert {"icemaint_leases", "icemaint_runs", "alembic_version"} <= tables
    assert upgrade(engine) == head_revision()  # a no-op
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    engine.dispose()


def test_the_migration_files_name_alembics_head() -> None:
    """The upgraded database's fast check (`newest_migration`, without Alembic) reads the
    head from the files' names: it must be the head Alembic's own graph says."""
    assert newest_migration() == head_revision() is not None


@pytest.mark.process
def test_two_processes_upgrading_at_once_both_succeed(empty_state_url: str) -> None:
    outcomes = run_workers(lease_workers.upgrade_database, [(empty_state_url,)] * 2, timeout=120)
    assert outcomes == [("ok", head_revision())] * 2
