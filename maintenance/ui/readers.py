"""The table page's "Readers" section: what readers' scans of the table cost (their own
reports, `state/scan_days.py`), and for the runs that predicted what they would save, the
prediction against what was measured (`schedule/value.py`): the run's predicted cost against
its compute-seconds, and what it removed from each scan against the scans readers reported
of the snapshot it committed (`state/run_scans.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from maintenance.schedule.value import PREDICTED, measured_relief, predicted_cost_s, run_cost_s
from maintenance.state.run_scans import ScansAfter
from maintenance.state.runs import RunRecord
from maintenance.state.scan_days import ReadSummary
from maintenance.table.reader_cost import READER_BYTES_PER_S
from maintenance.ui.html import MISSING, ago, data_table, esc, number, seconds, utc


def readers_section(summary: ReadSummary | None, runs: list[RunRecord], after: Mapping[str, ScansAfter]) -> str:
    if summary is None:
        reads = '<p class="muted">No reader reports its scans of this table (the planner assumes one full scan a day).</p>'
    else:
        reads = (f"<p>{esc(number(round(summary.scans_per_day, 1)))} scans a day (days weighed by age; {esc(number(summary.scans))} reported in "
                 f"the days kept, the last {esc(ago(summary.last_report_at_ms))}). One scan, on average: {esc(number(round(summary.data_files, 1)))} "
                 f"data files, {esc(number(round(summary.delete_files, 1)))} delete files applied, planning {esc(seconds(summary.planning_ms / 1000))}.</p>")
    rows = []
    for run in runs:
        predicted = run.counters.get(PREDICTED)
        if not isinstance(predicted, dict):
            continue
        measured_s = run_cost_s(run) if run.ended_at_ms is not None else None
        scans = after.get(run.run_id)
        relief = measured_relief(predicted, scans.mean) if scans is not None else None
        rows.append([
            esc(utc(run.started_at_ms)), esc(run.job), esc(run.status),
            f"{esc(seconds(predicted_cost_s(predicted)))} / {esc(seconds(measured_s))}",
            f"{esc(_scan_ms(predicted.get('relieved_per_scan')))} / {esc(_scan_ms(relief))}",
            esc(number(scans.scans)) if scans is not None else MISSING,
            esc(predicted.get("benefit_basis", MISSING)),
        ])
    table = data_table(["started", "job", "status", "compute: predicted / measured", "removed from each scan: predicted / measured", "scans of its snapshot",
                        "benefit from"], rows, cls="predictions", empty="no run recorded a prediction yet")
    return reads + table


def _scan_ms(relieved_bytes: object) -> str:
    """Bytes of the reader model as a reader's milliseconds."""
    return f"{float(relieved_bytes) / READER_BYTES_PER_S * 1000:,.1f} ms" if isinstance(relieved_bytes, (int, float)) else MISSING
