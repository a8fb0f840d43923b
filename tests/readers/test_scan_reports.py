"""Reading a batch of scan reports (`readers/scan_reports.py`): names mapped to icemaint's
catalog, every metric taken, and each kind of bad batch refused in one line."""

from __future__ import annotations

import json

import pytest

from maintenance.readers.scan_reports import BadReports, icemaint_name, parse_batch
from tests.support.scan_reports import REPORT, batch


def test_a_report_in_icemaint_terms() -> None:
    [facts] = parse_batch(batch([REPORT]), "local", {"local", "lake"})

    assert facts.table == "lake.sales.orders"
    assert facts.planning_ms == 2.5
    assert (facts.data_files, facts.delete_files, facts.equality_delete_files, facts.position_delete_files) == (4, 3, 1, 2)
    assert (facts.data_bytes, facts.delete_bytes, facts.manifests_read, facts.snapshot_id) == (4096, 512, 3, 7)


def test_a_reader_names_its_catalog_its_own_way() -> None:
    assert icemaint_name("spark_catalog.db.t", "lake") == "lake.db.t"
    assert icemaint_name("readers.a.b.t", "lake") == "lake.a.b.t"  # a nested namespace
    assert icemaint_name("/warehouse/path/db.t", "lake") == "lake.db.t"  # a catalog named by a path
    [facts] = parse_batch(batch([REPORT], catalog=None), "local", {"local"})
    assert facts.table == "local.sales.orders"  # no catalog said: the daemon's default


def test_metrics_an_older_reader_does_not_count_read_zero() -> None:
    [facts] = parse_batch(batch([{**REPORT, "metrics": {"result-data-files": {"unit": "count", "value": 1}}}]), "lake", {"lake"})

    assert (facts.data_files, facts.delete_files, facts.planning_ms, facts.position_delete_files) == (1, 0, 0.0, 0)
    [unsaid] = parse_batch(batch([{k: v for k, v in REPORT.items() if k != "snapshot-id"}]), "lake", {"lake"})
    assert unsaid.snapshot_id is None  # credited to no run


@pytest.mark.parametrize(("body", "said"), [
    (b"{not json", "not JSON"),
    (json.dumps({"reports": {}}).encode(), "a list 'reports'"),
    (batch([REPORT], catalog="elsewhere"), "catalog 'elsewhere' is not one of icemaint's (lake)"),
    (batch([{"metrics": {}}]), "report 0 is not a scan report"),
    (batch([REPORT, {**REPORT, "table-name": "orders"}]), "'orders' is not <catalog>.<namespace>.<table>"),
    (batch([{**REPORT, "metrics": {"result-data-files": {"unit": "count", "value": -1}}}]), "metric 'result-data-files' has no count"),
    (batch([{**REPORT, "metrics": {"total-planning-duration": {"count": 1, "time-unit": "fortnights", "total-duration": 1}}}]),
     "timer 'total-planning-duration' has no duration in a known unit"),
    (batch([{**REPORT, "snapshot-id": "7"}]), "report 0: 'snapshot-id' is not a number"),
    (batch([REPORT] * 2001), "2001 reports in one batch"),
])
def test_a_bad_batch_is_refused_in_one_line(body: bytes, said: str) -> None:
    with pytest.raises(BadReports) as refused:
        parse_batch(body, "lake", {"lake"})

    assert said in str(refused.value) and "\n" not in str(refused.value)
