"""The Flink writer (`workload cdc --writer flink`): Apache Flink's own Iceberg sink in upsert
mode writes the table, and what Spark reads back is exactly the model the writer wrote
(EXCEPT ALL both ways); the table's metadata shows what a streaming upsert sink leaves:
one commit per checkpoint stamped with Flink's resume point, equality deletes, and position
deletes for keys rewritten within a checkpoint.

Not skipped when PyFlink is missing: `make setup` installs it (`make flink`), and a machine
where it cannot be installed or run must fail here."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import Config
from tests.conftest import fresh_ref
from tests.services.s3 import SECRET_KEY
from tests.services.stack import Services
from tests.support.cli import assert_one_line_error, run_cli
from tests.support.matrix import assert_same_rows, make_matrix

pytestmark = [pytest.mark.slow, pytest.mark.process]

COLUMNS = "id, region, customer, amount, status, updated_at, version"


# Format 3 with two writers: the sink's position deletes become deletion vectors, and each
# key's events must still reach its one writer in order (an operator of two subtasks between
# the event map and the writers reordered them: 53 rows wrong of 2,072).
CASES = {"v2": (), "v3-composite-two-writers": ("--format-version", "3", "--key", "composite", "--parallelism", "2")}


@pytest.mark.parametrize("extra", CASES.values(), ids=CASES.keys())
def test_flink_upserts_leave_exactly_the_model_and_a_streaming_sinks_metadata(spark, config: Config, home: Path, tmp_path: Path, extra: tuple[str, ...]) -> None:
    ref = fresh_ref(config, "flink")
    model_file = tmp_path / "model.parquet"

    proc = run_cli("workload", "cdc", str(ref), "--writer", "flink", "--rows", "3000", "--commits", "4", "--checkpoint-interval", "2",
                   "--update-ratio", "0.2", "--delete-ratio", "0.05", *extra, "--model-out", str(model_file), "--json", home=home)

    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    table = spark.sql(f"SELECT {COLUMNS} FROM {ref.spark_name}")
    model = spark.read.parquet(str(model_file)).select(*COLUMNS.split(", "))
    assert model.count() == result["expected_rows"] == table.count() > 0
    assert table.exceptAll(model).count() == 0
    assert model.exceptAll(table).count() == 0

    snapshots = spark.sql(f"SELECT summary FROM {ref.spark_name}.snapshots WHERE summary['flink.job-id'] IS NOT NULL").collect()
    assert len(snapshots) == result["commits"] >= 2  # one commit per checkpoint: the events span several
    assert len({row.summary["flink.job-id"] for row in snapshots}) == 1
    assert all(int(row.summary["flink.max-committed-checkpoint-id"]) >= 1 for row in snapshots)
    deletes = {row.content: row.files for row in spark.sql(f"SELECT content, count(*) files FROM {ref.spark_name}.delete_files GROUP BY content").collect()}
    assert deletes.get(2, 0) >= 1 and deletes.get(2) == result["equality_delete_files"]  # equality deletes on the key
    assert deletes.get(1, 0) >= 1 and deletes.get(1) == result["position_delete_files"]  # keys rewritten within a checkpoint (DVs on v3)
    assert result["updates"] > 0 and result["deletes"] > 0


def test_a_missing_flink_environment_is_one_line_naming_its_make_target(config: Config, home: Path, tmp_path: Path) -> None:
    proc = run_cli("workload", "cdc", str(fresh_ref(config, "flink")), "--writer", "flink", home=home,
                   env={"ICEMAINT_FLINK_PYTHON": str(tmp_path / "no-such-python")})

    assert_one_line_error(proc, 2, "make flink", "no-such-python")


@pytest.mark.rest
@pytest.mark.s3
def test_flink_upserts_through_a_rest_catalog_onto_an_object_store(catalog_services: Services, tmp_path: Path) -> None:
    """The users' stack: the sink loads SeaweedFS's Iceberg REST catalog (OAuth2 client
    credentials) and writes with Iceberg's S3FileIO; the secret stays out of the job's log."""
    with make_matrix(tmp_path, catalog_services) as matrix:
        table = f"rest_s3.flink_{uuid.uuid4().hex[:6]}.orders"
        model_file = tmp_path / "model.parquet"

        result = matrix.cli_json("workload", "cdc", table, "--writer", "flink", "--rows", "2000", "--commits", "3", "--checkpoint-interval", "2",
                                 "--model-out", str(model_file))

        diff = assert_same_rows(matrix, table, model_file)
        assert diff["rows"] == result["expected_rows"] > 0
        assert result["commits"] >= 2 and result["equality_delete_files"] >= 1
        config = matrix.config
        written = load_table(config, parse_table_ref(table, config)).inspect.files().column("file_path").to_pylist()
        assert written and all(path.startswith("s3://") for path in written), written[:3]
        job_logs = list((Path(matrix.raw["home"]) / "flink").rglob("job.log"))
        assert job_logs and all(SECRET_KEY not in log.read_text(errors="replace") for log in job_logs)
