"""Predictions of a due job's cost and of what it saves readers (`schedule/value.py`), and
the budget's choice from them on real tables: readers' reports decide the order, a run
records its prediction, and the next prediction is calibrated by the measured run."""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.readers.scan_reports import ScanFacts
from maintenance.run.outcome import COMMITTED, FAILED
from maintenance.schedule.decisions import Decision
from maintenance.schedule.value import (
    ASSUMED,
    ASSUMED_SCANS_PER_DAY,
    CALIBRATION_RUNS,
    COMPUTE,
    MIN_COST_S,
    PREDICTED,
    REPORTED,
    SPARK_START,
    UPKEEP,
    WARM_SHARE_OF_COLD,
    Prediction,
    calibration,
    factor,
    measured_relief,
    predict,
    predicted_cost_s,
    recorded,
)
from maintenance.state.runs import RunRecord
from maintenance.state.scan_days import ReadSummary
from maintenance.state.store import open_state
from maintenance.table.health import TableHealth, count_files
from maintenance.table.reader_cost import NO_COST, READER_BYTES_PER_S, REWRITTEN, DeleteWeights, ScanShape, relieved_bytes
from tests.conftest import CdcFactory
from tests.support.cli import run_cli
from tests.support.metadata import data, eq, snapshot


def run(job: str, seconds: float, estimate_s: float | None, status: str = COMMITTED, spark_start_s: float = 0.0, compute_s: float | None = None) -> RunRecord:
    counters: dict = {PREDICTED: {"estimate_s": estimate_s}} if estimate_s is not None else {}  # type: ignore[type-arg]
    if spark_start_s:
        counters[SPARK_START] = spark_start_s
    if compute_s is not None:
        counters[COMPUTE] = compute_s
    return RunRecord(str(uuid.uuid4()), "c.ns.t", job, status, "h", 1, 0, int(seconds * 1000), None, counters, None)


def test_calibration_is_the_least_measured_over_estimated_of_the_newest_committed_runs() -> None:
    """Compute-seconds of the same work vary upward (a job's first runs in a process, a busy
    machine): the cheapest of the newest runs is the job's cost; an older cheaper one is not."""
    runs = [run("merge", 30, 10), run("merge", 5, 10, FAILED), run("merge", 20, 10), run("merge", 7, None), run("merge", 100, 10), run("merge", 1, 10),
            run("compact", 4, 8)]

    assert calibration(runs) == {"merge": 2.0, "compact": 0.5}


def test_calibration_prefers_runs_that_found_spark_running() -> None:
    """A daemon's first run starts Spark (25 s of its 45 here) and warms the JVM up (15 s):
    the runs after it are the calibration. A job whose only runs started Spark (cron's)
    borrows the warm factors of the others rather than predict its runs at a cold one's cost."""
    daemon = [run("merge", 5, 10), run("merge", 45, 10, spark_start_s=25.0), run("merge", 6, 10)]
    cron = [run("compact", 30, 10, spark_start_s=10.0), run("compact", 50, 10, spark_start_s=20.0), run("compact", 33, 10, spark_start_s=10.0)]

    factors = calibration(daemon + cron)

    assert factors == {"merge": 0.5}
    assert factor("compact", factors) == pytest.approx(0.5)


def test_a_process_whose_only_run_started_spark_predicts_the_next_at_a_warm_share() -> None:
    """The budget fleet's stall (session 75): a daemon's first MERGE cost 2.27 compute-seconds,
    most of it the JVM's warm-up; predicted at that, no later job fit the 2.2 left of the
    hour. With no run that found Spark running, a run that started it calibrates at
    `WARM_SHARE_OF_COLD` of its cost (a warm MERGE there costs 0.3-0.5)."""
    factors = calibration([run("merge", 9, 5.0, spark_start_s=6.5, compute_s=2.27)])

    assert factors == {"merge": pytest.approx(2.27 / 5.0 * WARM_SHARE_OF_COLD)}
    assert factor("compact", factors) == pytest.approx(2.27 / 5.0 * WARM_SHARE_OF_COLD)
    assert calibration([run("merge", 9, 5.0, spark_start_s=6.5, compute_s=2.27), run("merge", 1, 5.0, compute_s=0.45)]) == {"merge": pytest.approx(0.09)}


def test_calibration_learns_compute_seconds_where_runs_recorded_them() -> None:
    """A run's compute-seconds are its cost (`run/compute.py`): 2 of a run's 9 wall seconds
    here; a run recorded before runs recorded them counts its wall seconds."""
    runs = [run("merge", 9, 10, compute_s=2.0), run("merge", 12, 10, compute_s=4.0), run("merge", 30, 10, compute_s=3.0), run("compact", 8, 4)]

    assert calibration(runs) == {"merge": 0.2, "compact": 2.0}


def test_a_job_never_run_here_borrows_the_calibration_of_those_that_ran() -> None:
    """Compute-seconds are a tenth of the estimates' seconds on the budget fleet: a COMPACT
    never run there predicted at its estimate (factor 1) never fit a budget of a few
    compute-seconds; it borrows the median of the jobs' factors that ran."""
    factors = calibration([run("merge", 9, 10, compute_s=0.5), run("expire", 3, 4, compute_s=0.4), run("stats", 3, 2, compute_s=0.6)])
    merge = Decision(TableRef("c", ("ns",), "t"), "merge", True, "triggered", "p", NO_COST, 10.0)
    compact = dataclasses.replace(merge, job="compact", estimated_s=6.0)

    assert factor("merge", factors) == pytest.approx(0.05)
    assert factor("compact", factors) == pytest.approx(0.1)
    assert predict(compact, None, None, factors).cost_s == pytest.approx(0.6)
    assert factor("compact", {}) == 1.0


def test_value_divides_by_compute_seconds_below_one() -> None:
    """Warm runs on small tables cost tenths of a compute-second: the cheaper of two jobs
    saving alike is worth more per compute-second, down to `MIN_COST_S`."""
    assert Prediction(0.1, 10.0, 1.0, REPORTED, 1.0).value == pytest.approx(100.0)
    assert Prediction(0.5, 10.0, 1.0, REPORTED, 1.0).value == pytest.approx(20.0)
    assert Prediction(0.0, 10.0, 1.0, REPORTED, 1.0).value == pytest.approx(10.0 / MIN_COST_S)


def test_calibration_remembers_the_newest_runs() -> None:
    """What a job costs drifts (the JIT, a table's backlog): older runs, however cheap, are forgotten."""
    runs = [run("merge", 100, 10)] * CALIBRATION_RUNS + [run("merge", 1, 10)] * CALIBRATION_RUNS

    assert calibration(runs) == {"merge": 10.0}


def test_benefit_from_readers_reports_else_one_assumed_full_scan_a_day() -> None:
    health = TableHealth()
    count_files(health, snapshot(*(data(1, size=2**20) for _ in range(4)), eq(5), eq(6)), small_file_bytes=1)
    merge = Decision(TableRef("c", ("ns",), "t"), "merge", True, "triggered", "p", NO_COST, 10.0)
    summary = ReadSummary("c.ns.t", scans_per_day=480.0, planning_ms=2.0, data_files=1.0, delete_files=2.0, equality_delete_files=2.0,
                          position_delete_files=0.0, data_bytes=2.0**20, delete_bytes=100.0, manifests_read=2.0, scans=480, last_report_at_ms=0)

    reported = predict(merge, health, summary, {"merge": 2.0})
    assumed = predict(merge, health, None, {})

    one_scan = relieved_bytes(REWRITTEN, ScanShape(1, 2**20, 2, 0), DeleteWeights.of(health))
    assert (reported.basis, reported.cost_s, reported.scans_per_day) == (REPORTED, 20.0, 480.0)
    assert reported.benefit_s_per_day == pytest.approx(480 * one_scan / READER_BYTES_PER_S)
    assert (assumed.basis, assumed.cost_s, assumed.scans_per_day) == (ASSUMED, 10.0, ASSUMED_SCANS_PER_DAY)
    assert assumed.benefit_s_per_day == pytest.approx(relieved_bytes(REWRITTEN, ScanShape.full_scan(health), DeleteWeights.of(health)) / READER_BYTES_PER_S)
    expire = predict(Decision(merge.ref, "expire", True, "", "p", NO_COST, 3.0), health, summary, {})
    assert (expire.basis, expire.benefit_s_per_day) == (UPKEEP, 0.0)


@pytest.mark.process
def test_a_budget_runs_the_table_readers_read_and_a_run_records_its_prediction(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Two tables alike, due for MERGE: readers report 200 scans of one. `plan --budget` with
    room for one MERGE chooses the read one and says why the other waits. A run records
    its prediction, and the next prediction of that job is calibrated by the measured run."""
    namespace = f"budget_{uuid.uuid4().hex[:6]}"
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "merge.yaml").write_text(f'name: merge-only\nselect:\n  namespaces: "{namespace}"\njobs:\n  merge:\n    when:\n      equality_delete_files: 1\n')
    config_file = tmp_path / "icemaint.yaml"
    config_file.write_text(f"home: {config.home}\npolicies: {policies}\nstate:\n  url: sqlite:///{tmp_path / 'state.db'}\n")
    read, unread = (cdc_table(ref=TableRef(config.default_catalog, (namespace,), name), rows=3000, commits=4)[0] for name in ("read", "unread"))
    state = open_state(dataclasses.replace(config, state_url=f"sqlite:///{tmp_path / 'state.db'}"))
    state.scans.add([ScanFacts(str(read), 2.0, 4, 12, 8, 4, 40_000, 9_000, 2)] * 200)

    def plan(budget: str) -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
        done = run_cli("--config", str(config_file), "plan", str(read), str(unread), "--budget", budget, "--json", home=config.home)
        assert done.returncode == 0, done.stderr
        return {(c["table"], c["job"]): c for c in json.loads(done.stdout)["choices"]}

    merge_s = plan("1h")[(str(read), "merge")]["cost_s"]  # the tables are alike: so are their MERGEs' estimates
    one_merge = plan(f"{int(merge_s * 1.5)}s")  # room for one MERGE, not two; upkeep takes none of it here
    assert one_merge[(str(read), "merge")]["run"] == "run" and one_merge[(str(read), "merge")]["benefit_basis"] == REPORTED
    assert one_merge[(str(unread), "merge")]["run"] == "wait" and one_merge[(str(unread), "merge")]["why"].startswith("does not fit")
    assert one_merge[(str(read), "merge")]["benefit_s_per_day"] > one_merge[(str(unread), "merge")]["benefit_s_per_day"]
    assert one_merge[(str(unread), "merge")]["benefit_basis"] == ASSUMED

    done = run_cli("--config", str(config_file), "run", str(read), "--json", home=config.home)
    assert done.returncode == 0, done.stderr
    [recorded] = state.runs.list(table=str(read), job="merge")
    assert recorded.status == COMMITTED
    assert recorded.counters[PREDICTED]["estimate_s"] == pytest.approx(one_merge[(str(read), "merge")]["cost_s"], abs=0.05)  # shown to 0.1 s
    assert recorded.counters[PREDICTED]["benefit_basis"] == REPORTED
    assert recorded.counters[SPARK_START] > 1  # the command's process started Spark, and the run waited for it
    wall_s = (recorded.ended_at_ms - recorded.started_at_ms) / 1000 - recorded.counters[SPARK_START]
    assert 0 < recorded.counters[COMPUTE] and recorded.counters[COMPUTE] != pytest.approx(wall_s, rel=0.01)  # CPU seconds, not the run's clock
    calibrated = plan("1h")[(str(unread), "merge")]  # the only run started Spark: a warm run is predicted at a share of it
    assert calibrated["calibration"] == pytest.approx(recorded.counters[COMPUTE] / recorded.counters[PREDICTED]["estimate_s"] * WARM_SHARE_OF_COLD, rel=0.01)


def test_a_run_records_its_predicted_cost_to_the_millisecond() -> None:
    """A warm COMPACT on the budget fleet costs 0.15 compute-seconds: a prediction kept to a
    tenth of a second (0.2) was 33% off before the run began. What a run recorded is read
    back as its estimate times its calibration, older records too."""
    prediction = Prediction(4.321 * 0.0372, 1.0, 1.0, REPORTED, 0.0372)
    kept = recorded(prediction, 4.321)

    assert predicted_cost_s(kept) == pytest.approx(0.1607, rel=1e-3)
    assert kept["cost_s"] == pytest.approx(0.161)
    assert predicted_cost_s({"cost_s": 0.2, "estimate_s": 5.0, "calibration": 0.031}) == pytest.approx(0.155)
    assert predicted_cost_s({"cost_s": 3.0}) == 3.0
    assert predicted_cost_s({}) is None


def test_what_a_run_removed_is_measured_as_its_prediction_was_made() -> None:
    """`measured_relief`: the model's extra cost of the scan the prediction rested on, less
    that of the scans reported after the run, both with the prediction's weights; nothing
    for a prediction that rested on no scan."""
    health = TableHealth()
    count_files(health, snapshot(*(data(1, size=2**20) for _ in range(4)), eq(5), eq(6)), small_file_bytes=1)
    merge = Decision(TableRef("c", ("ns",), "t"), "merge", True, "triggered", "p", NO_COST, 10.0)
    prediction = predict(merge, health, None, {})
    predicted = recorded(prediction, 10.0)
    weights = DeleteWeights.of(health)

    cleaned = ScanShape(data_files=1, data_bytes=4 * 2**20, equality_delete_files=0, position_delete_files=0)  # one clean file
    assert measured_relief(predicted, cleaned) == pytest.approx(prediction.relieved_per_scan)
    half = ScanShape(data_files=1, data_bytes=4 * 2**20, equality_delete_files=4, position_delete_files=0)  # a writer added deletes again
    assert measured_relief(predicted, half) == pytest.approx(prediction.relieved_per_scan - relieved_bytes(REWRITTEN, half, weights))
    assert measured_relief(recorded(predict(Decision(merge.ref, "expire", True, "", "p", NO_COST, 1.0), health, None, {}), 1.0), cleaned) is None


@pytest.mark.process
@pytest.mark.slow  # two Spark readers and a MERGE as processes: make test-integration runs it
def test_readers_reports_before_and_after_a_merge_measure_what_it_removed(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """The whole loop on a generated CDC table: a real Spark reader with the reporter scans it
    (Iceberg's own `ScanReport`s, through the daemon's door, into the state database); the
    prediction rests on those scans; MERGE runs as a process and records it; the reader
    scans again, and those scans are credited to the run. What they measure removed from
    each scan is within 25% of what was predicted (issue 59's bound)."""
    from maintenance.daemon.http import serve
    from maintenance.readers.endpoint import PATH, ScanReportEndpoint
    from tests.support.scan_reports import arrived, read_with_reporter

    namespace = f"loop_{uuid.uuid4().hex[:6]}"
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "merge.yaml").write_text(f'name: merge-only\nselect:\n  namespaces: "{namespace}"\njobs:\n  merge:\n    when:\n      equality_delete_files: 1\n')
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    config_file = tmp_path / "icemaint.yaml"
    config_file.write_text(f"home: {config.home}\npolicies: {policies}\nstate:\n  url: {state_url}\n")
    ref = cdc_table(ref=TableRef(config.default_catalog, (namespace,), "read"), rows=4000, commits=6)[0]
    state = open_state(dataclasses.replace(config, state_url=state_url))
    token = f"loop-{uuid.uuid4().hex}"
    server = serve("127.0.0.1", 0, posts={PATH: ScanReportEndpoint(token, config.default_catalog, config.catalogs, lambda: state).receive})
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        before = read_with_reporter(tmp_path, token, url, [{"table": str(ref)}] * 4)
        arrived(lambda: sum(s.scans for s in state.scans.summaries([str(ref)]).values()), 4)
        summary = state.scans.summaries([str(ref)])[str(ref)]
        assert summary.scans == 4 and summary.delete_files > 0
        done = run_cli("--config", str(config_file), "run", str(ref), "--json", home=config.home)
        assert done.returncode == 0, done.stderr
        [merged] = state.runs.list(table=str(ref), job="merge")
        predicted = merged.counters[PREDICTED]
        assert predicted["benefit_basis"] == REPORTED and predicted["scan_before"]["equality_delete_files"] == summary.equality_delete_files
        after = read_with_reporter(tmp_path, token, url, [{"table": str(ref)}] * 3)
        arrived(lambda: sum(s.scans for s in state.run_scans.after([merged.run_id]).values()), 3)
    finally:
        server.shutdown()

    assert [s["rows"] for s in after["scans"]] == [s["rows"] for s in before["scans"][:3]]  # MERGE changed no row
    credited = state.run_scans.after([merged.run_id])[merged.run_id]
    assert credited.scans == 3 and credited.mean.equality_delete_files == 0 and credited.mean.position_delete_files == 0
    measured = measured_relief(predicted, credited.mean)
    assert measured is not None and measured == pytest.approx(predicted["relieved_per_scan"], rel=0.25)
