"""Training the class-data-sharing archive every job's JVM maps (`spark/class_archive.py`
says what it is and why it is safe): `python -m maintenance.cli.class_archive build
[--if-missing]`, which `make setup` runs. It lives with the commands because it runs jobs.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from maintenance.spark.class_archive import archive_path, install


def build() -> Path:
    """Train and write the archive (see the module docstring); its path. Replaces one that
    exists. Runs in this process: call it from a process that has started no Spark yet."""
    with tempfile.TemporaryDirectory(prefix="icemaint-class-archive-") as scratch, _training_store(Path(scratch)) as store_catalog:
        written = Path(scratch) / "classes.jsa"
        _train(Path(scratch), written, store_catalog)
        return install(written)


def _train(scratch: Path, written: Path, store_catalog: dict[str, Any] | None) -> None:
    """What users' jobs load: a CDC table on a local SQL catalog and, when the test store
    is installed, on a REST catalog over S3 (Iceberg's REST client, S3FileIO and the AWS
    SDK); every job, verified, on each, twice; then the JVM's exit, which writes the
    archive to `written`."""
    from maintenance.catalogs import parse_table_ref
    from maintenance.config import parse_config
    from maintenance.jobs.registry import JOB_NAMES
    from maintenance.run.runner import run_job
    from maintenance.spark.session import get_spark, stop_jvm
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    raw: dict[str, Any] = {"home": str(scratch), "spark": {"conf": {"spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={written}"}}}
    config = parse_config(raw, source="class archive training", base_dir=scratch)  # the embedded local catalog
    if store_catalog is not None:
        store = parse_config({**raw, "catalogs": {"store": store_catalog}}, source="class archive training", base_dir=scratch)
        config = dataclasses.replace(config, catalogs={**config.catalogs, **store.catalogs})
    spark = get_spark(config)
    for catalog in config.catalogs:
        ref = parse_table_ref(f"{catalog}.training.orders", config)
        for _ in range(2):  # twice: a job the first round left nothing to (COMPACT after MERGE) has work in the second
            run_cdc_workload(spark, config, ref, CdcOptions(rows=20_000, commits=6, seed=1))
            for job in JOB_NAMES:
                run_job(config, ref, job, {}, verify=True)
    stop_jvm()


@contextmanager
def _training_store(scratch: Path) -> Iterator[dict[str, Any] | None]:
    """SeaweedFS's REST catalog and S3 for the training, as a catalog's settings, when the
    test dependencies are installed (`make setup`); None where they are not (the image)."""
    try:
        from maintenance.workload import seaweedfs

        store = seaweedfs.start(scratch / "seaweedfs")
    except Exception as exc:  # noqa: BLE001 (no store: the archive holds the local catalog's classes only)
        print(f"class archive: trained without a REST catalog and S3 ({str(exc).splitlines()[0]})", file=sys.stderr)
        yield None
        return
    try:
        yield {"type": "rest", "uri": store.rest_uri, "warehouse": store.warehouse, "credential": store.credential, "properties": store.s3_properties()}
    finally:
        store.stop()


def main() -> int:
    """`build`: train and write the archive; `build --if-missing`: only when there is none
    for this Java and this Spark (what `make setup` runs)."""
    if sys.argv[1:] not in (["build"], ["build", "--if-missing"]):
        print("usage: python -m maintenance.cli.class_archive build [--if-missing]", file=sys.stderr)
        return 2
    existing = archive_path()
    if "--if-missing" in sys.argv and existing is not None and existing.is_file():
        print(f"class archive: {existing} (kept)")
        return 0
    print(f"class archive: {build()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
