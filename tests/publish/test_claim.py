"""The claim without the JVM (`publish/claim.py`): a pyiceberg commit of the run's epoch that
never lands over a newer holder's, on a real SQL catalog and a real lease (SQLite state)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config
from maintenance.lease.fence import Fence, FencedError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.publish.claim import claim_table
from maintenance.state.store import open_state
from maintenance.table.marks import EPOCH_PROPERTY
from maintenance.workload.fleet import FleetOptions, make_fleet


@pytest.fixture
def table_and_fence(config: Config) -> Iterator[tuple[TableRef, Fence]]:
    namespace = f"claim_{time.monotonic_ns()}"
    make_fleet(get_catalog(config, "local"), "local", FleetOptions(tables=1, namespace=namespace, commits=1, rows=10))
    ref = TableRef("local", (namespace,), "t00000")
    state = open_state(config)
    asked_at = time.monotonic()
    lease = state.leases.acquire(str(ref), "holder", ttl_s=30)
    assert lease is not None
    keeper = LeaseKeeper(state.leases, lease, ttl_s=30, asked_at=asked_at)
    yield ref, Fence(state.leases, keeper, job="orphans", run_id="run-1")
    state.leases.release(keeper.lease)


def set_epoch(config: Config, ref: TableRef, epoch: int) -> None:
    with load_table(config, ref).transaction() as tx:
        tx.set_properties({EPOCH_PROPERTY: str(epoch)})


def test_a_claim_writes_the_epoch_once(config: Config, table_and_fence: tuple[TableRef, Fence]) -> None:
    ref, fence = table_and_fence
    claim_table(lambda: load_table(config, ref), fence)
    first = load_table(config, ref)
    assert first.properties[EPOCH_PROPERTY] == str(fence.epoch)
    claim_table(lambda: load_table(config, ref), fence)  # named already: no second commit
    assert load_table(config, ref).metadata_location == first.metadata_location


def test_a_newer_epoch_written_after_our_look_fails_the_commit_itself(config: Config, table_and_fence: tuple[TableRef, Fence]) -> None:
    """The claim looked at the table, then another holder wrote a newer epoch: the catalog's
    commit checks the requirement against the metadata it replaces and refuses."""
    ref, fence = table_and_fence
    stale = load_table(config, ref)
    set_epoch(config, ref, fence.epoch + 5)
    with pytest.raises(FencedError, match="newer lease"):
        claim_table(lambda: stale, fence)
    assert load_table(config, ref).properties[EPOCH_PROPERTY] == str(fence.epoch + 5)


def test_a_newer_epoch_while_the_lease_is_ours_moves_our_epoch_past_it(config: Config, table_and_fence: tuple[TableRef, Fence]) -> None:
    """The state database was reset (our epoch restarted low) while the table remembers a
    higher one: holding the lease, we move past it rather than fence ourselves."""
    ref, fence = table_and_fence
    set_epoch(config, ref, fence.epoch + 5)
    claim_table(lambda: load_table(config, ref), fence)
    assert fence.epoch > 5 and load_table(config, ref).properties[EPOCH_PROPERTY] == str(fence.epoch)


@pytest.mark.process
def test_a_rest_catalog_is_told_apart_without_importing_its_client_where_none_is_used(config: Config) -> None:
    """The claim leaves the epoch check to the catalog on REST only; it tells a REST catalog
    apart without importing pyiceberg's REST client, which a job on a SQL or Hive catalog
    never needs (0.1 s of every job's start)."""
    import subprocess
    import sys

    from pyiceberg.catalog.rest import RestCatalog

    from maintenance.publish.claim import _is_rest

    assert _is_rest(RestCatalog.__new__(RestCatalog))  # an instance without a server to ask: the class is what is told
    assert not _is_rest(get_catalog(config, "local"))
    loaded = subprocess.run([sys.executable, "-c", "import sys, maintenance.run.runner; print('pyiceberg.catalog.rest' in sys.modules)"],
                            capture_output=True, text=True, timeout=120)
    assert loaded.stdout.strip() == "False", loaded.stderr[-2000:]
