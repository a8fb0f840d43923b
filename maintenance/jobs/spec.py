"""The job contract: what every job is, so the rest of icemaint never special-cases one.

A job is a folder under `maintenance/jobs/` whose `__init__.py` exports `SPEC`, and one
line in `registry.py`. The spec names its functions by `lazy`, so reading the registry (the
command line's help, `icemaint jobs`) imports no job's planner or runner, nor pyiceberg. The spec names its typed options (one parser for policies, table
properties and flags: `options.py`), a pure `plan` (metadata only, never Spark: the
daemon runs it while evaluating and the job reuses it when nothing moved), a `run` that
does the work from that plan, and a rough `estimate` for `icemaint plan`. Everything
around them (lease, format check, planning, dry runs, staged publishing, verification,
the run record) is the runner's, done once for all jobs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from maintenance.jobs.options import OptionSpec, declared, parse_options
from maintenance.progress import Progress

if TYPE_CHECKING:
    from pyiceberg.table import Table

    from maintenance.catalogs import TableRef
    from maintenance.config import Config
    from maintenance.run.context import JobContext
    from maintenance.run.outcome import JobOutcome
    from maintenance.table.files import SnapshotFiles
    from maintenance.table.health import PartitionHealth, TableHealth


SCAN_BYTES_PER_S = 100 * 1024 * 1024  # the pace job estimates assume: one core reading Parquet
DATA_JOB_FIXED_S = 5.0  # a data job's start, planning and commit, whatever it reads
SECONDS_PER_FILE = 0.05  # what estimates assume a file the job opens costs beyond its bytes (object-store round trips, footers, delete index)


def data_job_estimate_s(fixed_s: float, volume_bytes: float, files: int) -> float:
    """A rough duration for a job that reads (and writes) table files: its fixed part, its
    bytes at `SCAN_BYTES_PER_S`, and `SECONDS_PER_FILE` for each file it opens. The files
    count because a small table's bytes are nothing beside its files: on the budget fleet a
    warm COMPACT of 62 files (24 data, 38 deletes) cost 0.34 compute-seconds, one of 24 data
    files 0.15, of 149 files 0.60, of bytes that are all under 200 KB (`schedule/value.py`
    calibrates an estimate into compute-seconds by one factor per job, which only a
    measure that follows the work can carry from one table to another)."""
    return fixed_s + volume_bytes / SCAN_BYTES_PER_S + files * SECONDS_PER_FILE


def partitions_estimate_s(partitions: Iterable[PartitionHealth], *, passes: int, delete_files: Callable[[PartitionHealth], int]) -> float:
    """`data_job_estimate_s` of a job that reads the data of `partitions` `passes` times
    (2: read and write it again) and opens each of their data files and the delete files
    `delete_files` counts of each (MERGE and COMPACT: all; CONVERT: equality deletes)."""
    chosen = list(partitions)
    return data_job_estimate_s(DATA_JOB_FIXED_S, passes * sum(p.data_bytes for p in chosen),
                               sum(p.data_files + delete_files(p) for p in chosen))


def lazy(module: str, name: str) -> Callable[..., Any]:
    """The function `name` of `module`, imported on its first call: a job's spec names its
    planner and runner so, and importing the spec stays cheap."""
    found: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not found:
            found.append(getattr(importlib.import_module(module), name))
        return found[0](*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = module
    return call


class Plan(Protocol):
    """What a job's planner returns: enough to run it, and to say what it would do."""

    snapshot_id: int | None  # the snapshot it was made on

    @property
    def empty(self) -> bool: ...

    def counters(self, detail: bool = False) -> dict[str, Any]:
        """What the plan found; with `detail` (a dry run) also the lists of what it would do."""
        ...

    def nothing_to_do(self) -> str:
        """Why an empty plan found nothing, in one line an operator can act on (the rule
        and the thresholds it applied): a noop's `reason`."""
        ...


@dataclass
class PlanInput:
    """What a planner may look at: the table's metadata (pyiceberg), never Spark."""

    ref: TableRef
    table: Table
    config: Config
    now_ms: int
    files_hint: SnapshotFiles | None = field(default=None, repr=False)
    # a run's progress callback, for planners with a long phase of their own (ORPHANS lists
    # the location); None while evaluating, where nobody watches
    progress: Progress | None = field(default=None, repr=False)

    def report(self, step: str, **counts: int) -> None:
        """A step of planning, with its counts, to whoever watches the run."""
        if self.progress is not None:
            self.progress(step, **counts)

    @cached_property
    def files(self) -> SnapshotFiles:
        """The current snapshot's live files (read once per process and snapshot)."""
        from maintenance.table.files import snapshot_files

        return self.files_hint if self.files_hint is not None else snapshot_files(self.table)


OptionsT = TypeVar("OptionsT")
PlanT = TypeVar("PlanT", bound=Plan)


@dataclass(frozen=True)
class JobSpec(Generic[OptionsT, PlanT]):
    name: str
    summary: str  # one line: the command's help, `icemaint jobs`
    options: type[OptionsT]
    plan: Callable[[PlanInput, OptionsT], PlanT]
    run: Callable[[JobContext, PlanT], JobOutcome]
    estimate: Callable[[TableHealth], float]  # rough seconds, for `icemaint plan`
    # what it removes from readers' scans (`table/reader_cost.py`: REWRITTEN, SMALL_FILES, ...);
    # None: upkeep, which readers do not see (a budget keeps it a share of its own)
    relieves: str | None = None
    formats: tuple[int, ...] = (1, 2)  # table format versions it handles; others are refused
    plans_from_metadata: bool = True  # False: planning touches storage (ORPHANS lists it)
    plans_at_a_time: bool = False  # True: its plan depends on the time too, not only on the metadata (EXPIRE's retention)
    check_options: Callable[[OptionsT, bool], None] | None = None  # (options, dry_run): a UsageError if unfit
    check_table: Callable[[Table, OptionsT], None] | None = None  # (table, options): a UsageError if unfit for this table (command line)
    counters: Mapping[str, str] = field(default_factory=dict)  # the job's own counters and lists, described (shared ones: jobs/counters.py)
    # False: a run changes no snapshot and no file a snapshot names (ORPHANS), so the table's
    # health after it is the health before, and is not read again for the run record (on
    # the largest tables that is a read of every manifest, in time and in memory)
    health_after: bool = True

    def option_specs(self) -> list[OptionSpec]:
        return declared(self.options)

    def parse_options(self, values: OptionsT | Mapping[str, Any] | None = None, *, source: str = "option") -> OptionsT:
        """Options from an instance, or from raw values by field name (any source)."""
        if isinstance(values, self.options):
            return values
        return parse_options(self.options, dict(values or {}), source=source)

    def refusal(self, format_version: int, table: str) -> str | None:
        """Why the job does not run on a table of this format, or None."""
        if format_version in self.formats:
            return None
        supported = " and ".join(f"v{v}" for v in self.formats)
        return f"{self.name.upper()} supports format {supported} tables; {table} is format v{format_version}"


@dataclass(frozen=True)
class PreparedPlan:
    """A plan made while evaluating, reusable by the job if the table did not move."""

    snapshot_id: int | None
    options: Any
    plan: Any
