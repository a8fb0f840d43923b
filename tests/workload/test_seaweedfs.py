"""`maintenance/workload/seaweedfs.py`: a real `weed mini` on free ports, and what it says it served."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.workload.seaweedfs import running

pytestmark = [pytest.mark.s3, pytest.mark.process]


def test_the_store_counts_the_requests_and_bytes_it_served(tmp_path: Path) -> None:
    """Two reads of a 300,000-byte object and one write, counted by the store itself: the
    difference of two readings is exactly what a client between them did."""
    with running(tmp_path / "seaweedfs", buckets=("traffic",)) as store:
        client = store.client()
        before = store.s3_traffic()
        client.put_object(Bucket="traffic", Key="a", Body=b"x" * 300_000)
        for _ in range(2):
            assert len(client.get_object(Bucket="traffic", Key="a")["Body"].read()) == 300_000
        after = store.s3_traffic_settled()
    served = {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after}
    assert served["PUT"] == 1 and served["GET"] == 2, served
    assert served["bytes_received"] == 300_000, served
    assert served["bytes_sent"] == 600_000, served
