"""How the runner names a run that raised (`run/runner._classify_failure`), without Spark:
a real lease on the SQLite state database, lost or held, and each kind of error."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.errors import IcemaintError
from maintenance.lease.fence import Fence, FencedError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.publish.publisher import ContentChangedError
from maintenance.run.context import JobContext
from maintenance.run.outcome import FAILED, FENCED, JobResult
from maintenance.run.runner import JobRefusedError, _classify_failure
from maintenance.state.store import open_state

REF = TableRef("local", ("db",), "orders")


@pytest.fixture
def context(config: Config) -> Iterator[JobContext]:
    state = open_state(config)
    asked_at = time.monotonic()
    lease = state.leases.acquire(str(REF), "holder", ttl_s=30)
    assert lease is not None
    keeper = LeaseKeeper(state.leases, lease, ttl_s=30, asked_at=asked_at)
    yield JobContext(config=config, ref=REF, job="merge", run_id="run-1", fence=Fence(state.leases, keeper, job="merge", run_id="run-1"))
    state.leases.release(lease)


def classified(context: JobContext, exc: Exception) -> JobResult:
    result = JobResult("merge", str(REF), "running", "run-1")
    _classify_failure(context, exc, result)
    return result


def lose(context: JobContext) -> None:
    """What the lease keeper does when a renewal finds the lease gone."""
    context.fence.keeper.lost_reason = "taken over by another holder"
    context.fence.keeper.lost.set()


def test_a_change_of_content_fails_the_run_as_unverified(context: JobContext) -> None:
    result = classified(context, ContentChangedError("content changed: 3 rows/a before, 2 rows/b in the staged snapshot 7; nothing was published"))
    assert (result.status, result.content_verified) == (FAILED, False) and result.error is not None and result.error.startswith("content changed")


def test_refusals_and_our_own_errors_fail_the_run_in_their_own_words(context: JobContext) -> None:
    assert (classified(context, JobRefusedError("format 1 tables are not merged")).status, classified(context, IcemaintError("no such column")).error) == (
        FAILED, "no such column")


def test_a_fenced_commit_is_fenced(context: JobContext) -> None:
    assert classified(context, FencedError("commit refused: epoch 3 < 4")).status == FENCED


def test_once_the_lease_is_lost_any_error_is_fenced_and_says_why(context: JobContext) -> None:
    lose(context)
    ours = classified(context, IcemaintError("catalog said 500"))
    theirs = classified(context, RuntimeError("Job 12 cancelled because the group was cancelled"))
    assert ours.status == theirs.status == FENCED
    assert ours.error == "catalog said 500 (lease lost: taken over by another holder)"
    assert theirs.error == "cancelled: lease lost (taken over by another holder)"


def test_an_unexpected_error_fails_the_run_naming_its_type(context: JobContext) -> None:
    result = classified(context, KeyError("region"))
    assert result.status == FAILED and result.error == "KeyError: 'region'"
