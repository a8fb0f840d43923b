"""The table page's readers section (`ui/readers.py`): each run's prediction beside what
was measured, the numbers as the run recorded them."""

from __future__ import annotations

import dataclasses
import re

from maintenance.run.outcome import COMMITTED
from maintenance.schedule.value import COMPUTE, PREDICTED
from maintenance.state.run_scans import ScansAfter
from maintenance.state.runs import RunRecord
from maintenance.table.reader_cost import READER_BYTES_PER_S, DeleteWeights, ScanShape, scan_extra_bytes
from maintenance.ui.readers import readers_section


def test_a_run_shows_its_predicted_cost_unrounded_beside_its_compute_seconds_and_the_scans_after_it() -> None:
    """A warm COMPACT predicted at 4 estimated seconds times 0.04 (0.16 s; its record's
    cost_s kept to a tenth said 0.2) cost 0.15 compute-seconds; the scans of its snapshot
    read one data file where the scan before it read 24 (half what it predicted to remove)."""
    weights = DeleteWeights(equality_records=0.0, position_records=0.0)
    before, after = ScanShape(24, 100_000, 0, 0), ScanShape(1, 100_000, 0, 0)
    removed = scan_extra_bytes(before, weights) - scan_extra_bytes(after, weights)
    predicted = {"cost_s": 0.2, "estimate_s": 4.0, "calibration": 0.04, "benefit_basis": "reported", "relieved_per_scan": 2 * removed,
                 "scan_before": dataclasses.asdict(before), "delete_weights": dataclasses.asdict(weights)}
    run = RunRecord("r1", "c.ns.t", "compact", COMMITTED, "h", 1, 1_000, 3_000, 7, {PREDICTED: predicted, COMPUTE: 0.15}, None)
    unpredicted = RunRecord("r2", "c.ns.t", "expire", COMMITTED, "h", 1, 4_000, 5_000, 8, {}, None)

    html = readers_section(None, [run, unpredicted], {"r1": ScansAfter(6, after)})

    row = re.findall(r"<tr>(.*?)</tr>", html, re.S)[1]
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    removed_ms = removed / READER_BYTES_PER_S * 1000
    assert removed > 0
    assert cells[1:] == ["compact", COMMITTED, "0.16s / 0.15s", f"{2 * removed_ms:,.1f} ms / {removed_ms:,.1f} ms", "6", "reported"]
    assert "expire" not in html
    assert "No reader reports its scans" in html
