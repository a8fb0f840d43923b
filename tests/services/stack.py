"""All the catalog matrix's services, started once in order and stopped together.

The S3 server comes first (the metastore and the REST server write to it), then the REST
server (about a second), then the metastore's two phases. Every process is started from
the calling thread and belongs to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.services.config import BUCKET, REST_WAREHOUSE
from tests.services.hive import HiveMetastore, start_hive
from tests.services.jars import s3_jars
from tests.services.rest import RestCatalog, start_rest
from tests.services.s3 import S3Server, hadoop_s3a_settings, start_s3


@dataclass
class Services:
    folder: Path
    s3: S3Server
    hive: HiveMetastore
    rest: RestCatalog
    s3_jars: list[str]
    timings: dict[str, float] = field(default_factory=dict)

    def logs(self) -> list[Path]:
        return [self.s3.process.log, self.hive.process.log, self.rest.process.log]

    def stop(self) -> None:
        for service in (self.hive, self.rest, self.s3):
            service.stop()


def start_services(folder: Path) -> Services:
    started = time.monotonic()
    jars = s3_jars()
    timings = {"s3_jars_s": time.monotonic() - started}
    s3 = start_s3(folder)
    stop_on_error: list = [s3]
    try:
        timings["s3_startup_s"] = s3.startup_s
        s3.create_bucket(BUCKET)
        hadoop = hadoop_s3a_settings(s3)
        rest = start_rest(folder / "rest", warehouse=REST_WAREHOUSE, hadoop=hadoop)
        stop_on_error.append(rest)
        timings["rest_compile_s"] = rest.compile_s
        timings["rest_startup_s"] = rest.startup_s
        hive = start_hive(folder / "hive", hadoop=hadoop)
        timings["hive_startup_s"] = hive.startup_s
        timings["hive_phase1_s"], timings["hive_phase2_s"] = hive.phase_s
    except BaseException:
        for service in reversed(stop_on_error):
            service.stop()
        raise
    timings["all_s"] = time.monotonic() - started
    return Services(folder=folder, s3=s3, hive=hive, rest=rest, s3_jars=jars, timings=timings)
