"""The Flink program of `workload/flink_reader.py`: batch scans of Iceberg tables through
Flink's own `iceberg` catalog, as a Flink reader of the tables runs them.

This file is a program, not a module of icemaint: it runs under the interpreter of Flink's
own environment (`make flink`), so it imports only the standard library and `pyflink`, and
reads everything it needs from the settings file named by its one argument (the catalog's
properties may hold secrets: they are never on a command line). It writes its outcome to
the settings' `outcome_file` (`{"scans": [{"table", "rows", "ms"}, ...]}`, or a one-line
`error`; Flink's own log lines go to stdout), and exits 1 when a scan failed.

Each scan counts the rows of a whole table (`SELECT count(*)`): Iceberg's Flink source plans
every data file and the delete files that apply to it, and reads them all (Flink pushes no
aggregate into the Iceberg source), so the catalog's `MetricsReporter` gets one ScanReport
per scan, as from any Flink query of the table.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from flink_program import program_main, quoted, sql_text  # this folder's: the program runs as a script of it


def catalog_ddl(name: str, properties: dict[str, str]) -> str:
    options = {"type": "iceberg", **properties}
    return f"CREATE CATALOG {quoted(name)} WITH ({', '.join(f'{sql_text(k)}={sql_text(v)}' for k, v in options.items())})"


def run(settings: dict[str, Any]) -> dict[str, Any]:
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    for key, value in settings["flink_configuration"].items():
        conf.set_string(key, value)
    t_env = TableEnvironment.create(EnvironmentSettings.new_instance().in_batch_mode().with_configuration(conf).build())
    t_env.get_config().set("pipeline.jars", settings["flink_configuration"]["pipeline.jars"])  # here it also reaches the client's class loader: CREATE CATALOG needs Iceberg's
    catalog = settings["catalog_name"]
    t_env.execute_sql(catalog_ddl(catalog, settings["catalog_properties"]))
    done = []
    for table in settings["scans"]:
        namespace, name = table
        started = time.perf_counter()
        with t_env.execute_sql(f"SELECT count(*) FROM {quoted(catalog)}.{quoted(namespace)}.{quoted(name)}").collect() as rows:
            count = int(next(iter(rows))[0])
        done.append({"table": f"{catalog}.{namespace}.{name}", "rows": count, "ms": round((time.perf_counter() - started) * 1000, 3)})
    return {"scans": done}


if __name__ == "__main__":
    sys.exit(program_main(sys.argv, run))
