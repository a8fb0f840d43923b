"""What each due job is predicted to cost, and to save the table's readers (issue 59).

**Benefit**: reader-seconds saved per day = the scans readers make of the table a day times
what the job removes from each, by the reader model the plan shows (`table/reader_cost.py`:
`relieved_bytes` for the part of a scan's extra cost the job relieves, `READER_BYTES_PER_S`
to say it in seconds). The scans are the readers' own reports (`state/scan_days.py`: their
rate, and what one scan reads: data files and bytes, delete files applied), so a table read
a thousand times a day through a filter on one partition counts its scans as they are. A
table no reader reports on is assumed to be scanned whole `ASSUMED_SCANS_PER_DAY` a day, so
it is still ranked by the same model, as the triggers alone ranked it before; its prediction
says it was assumed. Upkeep jobs (`JobSpec.relieves` None: EXPIRE, ORPHANS, STATS,
MANIFESTS) relieve readers of nothing the model counts: their benefit is 0, and a budget
gives them a share of their own (`schedule/budget.py`).

**Cost**: compute-seconds of the job's run (`run/compute.py`: CPU seconds of its Spark tasks
and its own threads), the job's own estimate from the table's health (`JobSpec.estimate`)
times this deployment's calibration for that job: the least, over its last
`CALIBRATION_RUNS` committed runs that recorded a prediction, of the run's measured cost
(`run_cost_s`) over the estimate it recorded (why the least: below). A job without such
runs borrows the median of the factors of the due jobs that have them (`factor`):
estimates are in seconds of a job on an idle machine, and a deployment whose
compute-seconds are a tenth of them says so of every job; with 1, a job never run here
was predicted 20-40 times its compute-seconds on the budget fleet and never fit a budget. Without any runs the factor is 1.

A prediction is of a run that finds Spark running: a daemon's every run but its first, a
cron `run`'s every job but its first. A run that started Spark pays the JVM's warm-up (class
loading, Janino, the JIT) that no later run of the process pays: on the budget fleets of
sessions 74-75 (16 daemons) a daemon's first MERGE cost 2.06-2.43 compute-seconds and its
second 0.43-0.61, a fifth. So a job's factor is that of its runs that found Spark running;
a job with none borrows the others' (above); where no job has one (a daemon after its first
run, a deployment of cron runs alone) the runs that started Spark calibrate at
`WARM_SHARE_OF_COLD` of what they cost. (Before session 76 the cold factor itself was the
next prediction: a daemon's second run was predicted four times its cost, and on a budget
of a few compute-seconds an hour a daemon whose first run was its only one stalled for the
hour, every job predicted at the cold run's cost.) A process's first run costs more than
predicted, by the warm-up; the budget is charged what it measured. The memory is short
(`CALIBRATION_RUNS`) because what a job costs drifts: a JVM's JIT speeds it up for tens of
runs (a MERGE 0.56 -> 0.26 compute-seconds over five runs on the budget fleet), and a table
maintained often has less backlog for each run; replayed over the fleets' 104 runs that
followed a daemon's first, 3 runs predicted as well as 5 or better in every variant tried.

The least of the three, not their median: the same work's compute-seconds vary upward, not
around a centre. A job's first runs in a process are dearer than its later ones (its own
code paths not yet compiled by the JIT: a COMPACT's first run in a warm daemon 0.27
compute-seconds, its next ones 0.14-0.19), and CPU time grows, never shrinks, with a busy
machine's cache misses and collections. The cheapest recent run is what the job costs as the
process now runs it; a table's growth is the estimate's to follow. Replayed over the 128
runs of the kept fleets that followed a daemon's first (sessions 74-76): within 25% 75% of
them with the median of 3, 86% with the least, 84% with the newest alone.

Measured on the budget fleet (`benchmarks/budget_fleet.py`, 2 cores shared by six JVMs), a
calibration of wall seconds predicted within 25% 42-67% of runs (session 73): the rest was
the machine's load, which no model of the job's data can predict; compute-seconds leave
the load out (docs/benchmarks.md, "A budget spent where readers gain", has what they
predict). Each run records what was predicted for it (`counters.predicted`), which is what
the next calibration and the status page compare the measured run with.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from maintenance.jobs import registry
from maintenance.run.outcome import COMMITTED
from maintenance.schedule.decisions import Decision
from maintenance.state.runs import RunRecord
from maintenance.state.scan_days import ReadSummary
from maintenance.state.store import StateStore
from maintenance.table.health import TableHealth
from maintenance.table.reader_cost import READER_BYTES_PER_S, DeleteWeights, ScanShape, relieved_bytes, scan_extra_bytes

ASSUMED_SCANS_PER_DAY = 1.0
CALIBRATION_RUNS = 3
WARM_SHARE_OF_COLD = 0.2  # a warm run's compute-seconds over its process's first run's (module docstring)
MIN_COST_S = 0.01  # a warm run on a small table costs 0.1-0.5 compute-seconds (the budget fleet's): a floor well below
PREDICTED = "predicted"  # the run counters' key of what was predicted for the run
SPARK_START = "spark_start_s"  # the run counters' key of the seconds the run waited for Spark to start
COMPUTE = "compute_s"  # the run counters' key of the run's compute-seconds (`run/compute.py`)
REPORTED, ASSUMED, UPKEEP = "reported", "assumed", "upkeep"  # what a benefit rests on


@dataclass(frozen=True)
class Prediction:
    cost_s: float  # the run's compute-seconds, calibrated
    benefit_s_per_day: float  # reader-seconds saved per day
    scans_per_day: float  # readers' scans a day (reported, or assumed)
    basis: str  # REPORTED, ASSUMED or UPKEEP
    calibration: float  # the factor the job's estimate was multiplied by
    # what the benefit rests on: one scan as readers reported it (or a full scan, assumed),
    # the model's weights of its delete files, and what the job removes from it
    scan: ScanShape | None = None
    weights: DeleteWeights | None = None
    relieved_per_scan: float = 0.0  # bytes (the model's byte-equivalents)

    @property
    def value(self) -> float:
        """Reader-seconds saved per day for each compute-second of the job (a cost below
        `MIN_COST_S` counts as that much, so that no prediction of nothing wins by dividing)."""
        return self.benefit_s_per_day / max(self.cost_s, MIN_COST_S)

    def to_json(self) -> dict[str, Any]:
        return {"cost_s": round(self.cost_s, 3), "benefit_s_per_day": round(self.benefit_s_per_day, 3), "scans_per_day": round(self.scans_per_day, 2),
                "benefit_basis": self.basis, "calibration": round(self.calibration, 4)}


def calibration(runs: Iterable[RunRecord]) -> dict[str, float]:
    """Per job, the least measured over predicted cost of its newest `CALIBRATION_RUNS`
    committed runs that recorded a prediction (`runs`: newest first) and found Spark
    running; for a job with none, of its runs that started Spark, times
    `WARM_SHARE_OF_COLD` where no job has a run that found Spark running (module docstring)."""
    warm: dict[str, list[float]] = {}
    cold: dict[str, list[float]] = {}
    for run in runs:
        predicted = (run.counters or {}).get(PREDICTED) or {}
        estimate = predicted.get("estimate_s")
        if run.status != COMMITTED or run.ended_at_ms is None or not isinstance(estimate, (int, float)) or estimate <= 0:
            continue
        found = (cold if spark_start_s(run) > 0 else warm).setdefault(run.job, [])
        if len(found) < CALIBRATION_RUNS:
            found.append(run_cost_s(run) / estimate)
    factors = {job: min(measured) for job, measured in warm.items()}
    if not factors:
        return {job: min(measured) * WARM_SHARE_OF_COLD for job, measured in cold.items()}
    return factors


def factor(job: str, factors: Mapping[str, float]) -> float:
    """The calibration of `job`: its own, else the median of the others', else 1 (module docstring)."""
    if job in factors:
        return factors[job]
    return statistics.median(factors.values()) if factors else 1.0


def calibrated_cost_s(estimate_s: float, calibration_factor: float) -> float:
    """A prediction's cost: the job's estimate (never below 0) times its calibration. Both are
    recorded with the prediction, so `predicted_cost_s` reads it back by this same rule."""
    return max(estimate_s, 0.0) * calibration_factor


def spark_start_s(run: RunRecord) -> float:
    """What the run waited for Spark to start (a process's first job); 0 when it found it running."""
    waited = (run.counters or {}).get(SPARK_START)
    return float(waited) if isinstance(waited, (int, float)) else 0.0


def run_cost_s(run: RunRecord) -> float:
    """What an ended run cost, as a prediction predicts it: its compute-seconds, or, for a run
    that did not record them (made before they were, or Spark did not say), `job_seconds`."""
    compute = (run.counters or {}).get(COMPUTE)
    return float(compute) if isinstance(compute, (int, float)) else job_seconds(run)


def job_seconds(run: RunRecord) -> float:
    """An ended run's wall seconds less what it waited for Spark to start (a daemon's first
    run starts the JVM and the session, tens of seconds no later run pays)."""
    assert run.ended_at_ms is not None
    return max(0.0, (run.ended_at_ms - run.started_at_ms) / 1000 - spark_start_s(run))


def predict(decision: Decision, health: TableHealth | None, summary: ReadSummary | None, factors: Mapping[str, float]) -> Prediction:
    """The job's predicted cost and benefit (module docstring)."""
    calibrated = factor(decision.job, factors)
    cost = calibrated_cost_s(decision.estimated_s, calibrated)
    relief = registry.job(decision.job).relieves if decision.job in registry.JOB_NAMES else None
    if relief is None or health is None:
        return Prediction(cost, 0.0, summary.scans_per_day if summary else 0.0, UPKEEP, calibrated)
    if summary is not None:
        scan = ScanShape(data_files=summary.data_files, data_bytes=summary.data_bytes, equality_delete_files=summary.equality_delete_files,
                         position_delete_files=summary.position_delete_files)
        scans, basis = summary.scans_per_day, REPORTED
    else:
        scan, scans, basis = ScanShape.full_scan(health), ASSUMED_SCANS_PER_DAY, ASSUMED
    weights = DeleteWeights.of(health)
    relieved = relieved_bytes(relief, scan, weights)
    return Prediction(cost, scans * relieved / READER_BYTES_PER_S, scans, basis, calibrated, scan, weights, relieved)


def predict_due(evaluation_due: list[Decision], health: Mapping[str, TableHealth], state: StateStore) -> None:
    """Attach to each due decision its prediction: the readers' summaries of the due tables
    and the calibration of the due jobs, read from the state database once each."""
    if not evaluation_due:
        return
    summaries = state.scans.summaries({d.table for d in evaluation_due})
    runs = [run for job in sorted({d.job for d in evaluation_due}) for run in state.runs.list(job=job, status=COMMITTED, limit=CALIBRATION_RUNS * 4)]
    factors = calibration(runs)
    for decision in evaluation_due:
        decision.prediction = predict(decision, health.get(decision.table), summaries.get(decision.table), factors)


def recorded(prediction: Prediction, estimate_s: float) -> dict[str, Any]:
    """What a run records of its prediction (`counters.predicted`): the estimate (the
    calibration divides the measured duration by it), and what the benefit rests on (what
    `measured_relief` compares the scans after the run with)."""
    found = {**prediction.to_json(), "estimate_s": round(estimate_s, 3), "relieved_per_scan": round(prediction.relieved_per_scan)}
    if prediction.scan is not None and prediction.weights is not None:
        found.update(scan_before=dataclasses.asdict(prediction.scan), delete_weights=dataclasses.asdict(prediction.weights))
    return found


def predicted_cost_s(predicted: Mapping[str, Any]) -> float | None:
    """The cost a run recorded as predicted for it (`recorded`), to compare with what it cost:
    its estimate times its calibration where it recorded both (runs before 2026-12-07 kept
    `cost_s` to a tenth of a second, up to a third of a warm COMPACT's 0.15 compute-seconds on
    the budget fleet), else `cost_s`; None where it recorded no prediction."""
    estimate, factor_used, cost = predicted.get("estimate_s"), predicted.get("calibration"), predicted.get("cost_s")
    if isinstance(estimate, (int, float)) and isinstance(factor_used, (int, float)):
        return calibrated_cost_s(float(estimate), float(factor_used))
    return float(cost) if isinstance(cost, (int, float)) else None


def measured_relief(predicted: Mapping[str, Any], after: ScanShape) -> float | None:
    """What the run removed from each scan, measured: the model's extra cost of a scan as
    readers reported it before the run (`scan_before`) less that of their scans after it
    (`after`, their mean), both weighed as the prediction weighed them. None where the
    prediction recorded no scan (upkeep)."""
    before, weights = predicted.get("scan_before"), predicted.get("delete_weights")
    if not isinstance(before, dict) or not isinstance(weights, dict):
        return None
    model = DeleteWeights(**weights)
    return scan_extra_bytes(ScanShape(**before), model) - scan_extra_bytes(after, model)
