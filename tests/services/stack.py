"""All the catalog matrix's services, started once in order and stopped together.

SeaweedFS comes first (S3 and the REST catalog; the metastore writes to its S3), then the
metastore's two phases. Every process is started from the calling thread and belongs to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.services.config import BUCKET
from tests.services.hive import HiveMetastore, start_hive
from tests.services.s3 import S3Server, hadoop_s3a_settings, start_s3


@dataclass
class Services:
    folder: Path
    s3: S3Server  # SeaweedFS: S3 and the REST catalog
    hive: HiveMetastore
    timings: dict[str, float] = field(default_factory=dict)

    def logs(self) -> list[Path]:
        return [self.s3.log, self.hive.process.log]

    def stop(self) -> None:
        for service in (self.hive, self.s3):
            service.stop()


def start_services(folder: Path) -> Services:
    started = time.monotonic()
    s3 = start_s3(folder / "seaweedfs", buckets=(BUCKET,))
    try:
        timings = {"seaweedfs_startup_s": s3.startup_s}
        hive = start_hive(folder / "hive", hadoop=hadoop_s3a_settings(s3))
        timings["hive_startup_s"] = hive.startup_s
        timings["hive_phase1_s"], timings["hive_phase2_s"] = hive.phase_s
    except BaseException:
        s3.stop()
        raise
    timings["all_s"] = time.monotonic() - started
    return Services(folder=folder, s3=s3, hive=hive, timings=timings)
