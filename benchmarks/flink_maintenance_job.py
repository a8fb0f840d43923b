"""The peer of `benchmarks/under_flink.py`: Apache Iceberg's own Flink `TableMaintenance`
(RewriteDataFiles, ExpireSnapshots, DeleteOrphanFiles) as a standalone Flink job on a local
mini-cluster, configured as the quick start of Iceberg's documentation shows (ExpireSnapshots
after 10 commits, 10 minutes, 5 kept; RewriteDataFiles after 10 data files, 128 MiB target,
partial progress; DeleteOrphanFiles older than 3 days), its rate limit cut from 10 minutes
to the benchmark's interval, as icemaint's schedule is.

A program, not a module of icemaint: it runs under the Flink writer's interpreter
(`.venv-flink`, `make flink`), imports only the standard library and `pyflink`, and builds
the job through Iceberg's Java API over PyFlink's gateway. Its one argument is a settings
file (the catalog's properties); it runs until it is killed.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def build(settings: dict[str, Any]) -> Any:
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.java_gateway import get_gateway

    conf = Configuration()
    for key, value in settings["flink_configuration"].items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.add_jars(*settings["jars"])  # on the job's class path and the gateway's, for the Java API below
    jvm = get_gateway().jvm
    iceberg = jvm.org.apache.iceberg
    api = iceberg.flink.maintenance.api
    duration = jvm.java.time.Duration

    properties = jvm.java.util.HashMap()
    for key, value in settings["catalog_properties"].items():
        properties.put(key, value)
    catalog = iceberg.flink.CatalogLoader.custom(settings["catalog_name"], properties, jvm.org.apache.hadoop.conf.Configuration(), settings["catalog_impl"])
    table = iceberg.flink.TableLoader.fromCatalog(catalog, iceberg.catalog.TableIdentifier.parse(f"{settings['database']}.{settings['table']}"))
    lock_properties = jvm.java.util.HashMap()
    lock_properties.put("flink-maintenance.lock.jdbc.init-lock-tables", "true")
    locks = api.JdbcLockFactory(settings["lock_uri"], f"{settings['database']}.{settings['table']}", lock_properties)

    every = duration.ofSeconds(int(settings["every_s"]))  # the quick start's 10 minutes, cut as icemaint's schedule is
    expire = (api.ExpireSnapshots.builder().scheduleOnCommitCount(10).maxSnapshotAge(duration.ofMinutes(10))
              .retainLast(5).deleteBatchSize(5))
    rewrite = (api.RewriteDataFiles.builder().scheduleOnDataFileCount(10).targetFileSizeBytes(128 * 1024 * 1024)
               .partialProgressEnabled(True).partialProgressMaxCommits(10))
    orphans = api.DeleteOrphanFiles.builder().scheduleOnInterval(every).minAge(duration.ofDays(3)).deleteBatchSize(1000)
    (api.TableMaintenance.forTable(env._j_stream_execution_environment, table, locks)
     .uidSuffix("icemaint-bench").rateLimit(every).lockCheckDelay(duration.ofSeconds(10))
     .add(expire).add(rewrite).add(orphans).append())
    return env


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: flink_maintenance_job.py SETTINGS_JSON", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        settings = json.load(handle)
    env = build(settings)
    client = env.execute_async("iceberg TableMaintenance (icemaint bench peer)")
    print(f"maintenance job {client.get_job_id()} submitted", flush=True)
    while True:  # an unbounded job: the benchmark kills it
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
