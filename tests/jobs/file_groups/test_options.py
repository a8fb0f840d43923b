"""The output spec of MERGE and COMPACT (`output_spec_id`, maintenance/jobs/file_groups/options.py),
as Iceberg's `rewrite_data_files` offers it, on a Spark-written merge-on-read table with an
evolved partition spec. Checked by the files Spark's metadata tables list before and after,
and the content against a frozen copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from tests.conftest import fresh_ref
from tests.support.cli import in_process
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create, data_files


def test_new_files_are_written_in_the_output_spec(spark, config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = fresh_ref(config, "outspec")
    create(spark, ref, "id BIGINT, region INT, v STRING", properties="'write.distribution-mode'='hash'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")  # spec 1 (spec 0: unpartitioned)
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), concat('v', id) FROM range(0, 1500)")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD bucket(2, id)")  # spec 2, current
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), concat('v', id) FROM range(1500, 3000)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert set(data_files(spark, ref).values()) == {1, 2}

    code, out, err = in_process(capsys, "compact", str(ref), "--output-spec-id", "9")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "its specs: 0, 1, 2" in err and "Traceback" not in out + err, (code, out, err)

    merged = run_job(config, ref, "merge", {"output_spec_id": 1}, verify=True)  # every file with deletes, into spec 1
    assert merged.status == COMMITTED and merged.content_verified, merged.error
    assert set(data_files(spark, ref).values()) == {1}  # every data file had deletes: all rewritten into spec 1
    frozen.assert_same()

    compacted = run_job(config, ref, "compact", {"rewrite_all": True}, verify=True)  # the default: the current spec
    assert compacted.status == COMMITTED and compacted.content_verified, compacted.error
    assert set(data_files(spark, ref).values()) == {2}
    frozen.assert_same()
