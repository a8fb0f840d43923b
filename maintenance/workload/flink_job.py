"""The Flink job of `icemaint workload cdc --writer flink`: a stream of change events upserted
into an Iceberg table by Iceberg's own Flink sink, on a local mini-cluster.

This file is a program, not a module of icemaint: it runs under the interpreter of the
Flink writer's own environment (`make flink`: PyFlink pins dependencies icemaint's
environment cannot take), so it imports only the standard library and `pyflink`, and reads
everything it needs from the settings file named by its one argument (the catalog's
properties may hold secrets: they are never on a command line). It writes its outcome to
the settings' `outcome_file` (`job_id` and `seconds`, or a one-line `error`; Flink's own
log lines go to stdout), and exits 1 when the job failed.

The stream: a rate-limited sequence (Flink's `datagen`) numbers the events, a Python map
turns number i into the i-th line of the events file (JSON arrays: kind, then the columns;
`I` insert, `U` update, `D` delete), and the rows enter the table as a changelog (INSERT,
UPDATE_AFTER, DELETE) through the `iceberg` connector with `upsert-enabled`: for each row
the sink deletes its key (a position delete when the key was written earlier in the same
checkpoint, else an equality delete) and writes the new row; the committer commits once
per checkpoint, with `flink.max-committed-checkpoint-id` and `flink.job-id` in the summary.
Every operator but the sink's writers runs with parallelism 1 (`parallelism.default`), so
every key's events reach the sink in the order planned; the writers (`write-parallelism`)
get each key from that one upstream, keyed by the equality fields.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from flink_program import program_main, quoted, sql_text  # this folder's: the program runs as a script of it

# The wire format of the events file: a column's Flink type -> how its JSON value becomes it.
_DECIMAL, _TIMESTAMP = "DECIMAL", "TIMESTAMP_LTZ"


def _wire_type(flink_type: str) -> str:
    """The type a column crosses from Python in: decimals as text (exact), timestamps as
    epoch milliseconds, the rest as themselves."""
    if flink_type.startswith(_DECIMAL):
        return "STRING"
    if flink_type.startswith(_TIMESTAMP):
        return "BIGINT"
    return flink_type


def _from_wire(name: str, flink_type: str) -> str:
    if flink_type.startswith(_DECIMAL):
        return f"CAST({quoted(name)} AS {flink_type})"
    if flink_type.startswith(_TIMESTAMP):
        return f"TO_TIMESTAMP_LTZ({quoted(name)}, 3)"
    return quoted(name)


def sink_ddl(settings: dict[str, Any]) -> str:
    columns = [f"{quoted(name)} {flink_type}{'' if nullable else ' NOT NULL'}" for name, flink_type, nullable in settings["columns"]]
    key = ", ".join(quoted(name) for name in settings["equality_columns"])
    options = {
        "connector": "iceberg",
        "catalog-name": settings["catalog_name"],
        "catalog-database": settings["database"],
        "catalog-table": settings["table"],
        **settings["catalog_properties"],
        "upsert-enabled": "true",
        "write-parallelism": str(settings["parallelism"]),
    }
    with_clause = ", ".join(f"{sql_text(k)}={sql_text(v)}" for k, v in options.items())
    return f"CREATE TEMPORARY TABLE icemaint_sink ({', '.join(columns)}, PRIMARY KEY ({key}) NOT ENFORCED) WITH ({with_clause})"


def ticks_ddl(events: int, rate: float) -> str:
    return ("CREATE TEMPORARY TABLE icemaint_ticks (seq BIGINT) WITH ('connector'='datagen', 'fields.seq.kind'='sequence', "
            f"'fields.seq.start'='0', 'fields.seq.end'='{events - 1}', 'rows-per-second'='{max(1, round(rate))}')")


def run(settings: dict[str, Any]) -> dict[str, Any]:
    from pyflink.common import Configuration, Row, RowKind, Types
    from pyflink.datastream import MapFunction, StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment

    class EventAt(MapFunction):  # type: ignore[misc]
        """Sequence number -> that event, as a changelog row (the file is read once per worker)."""

        def __init__(self, path: str) -> None:
            self.path = path
            self.lines: list[str] = []

        def open(self, runtime_context: Any) -> None:
            with open(self.path, encoding="utf-8") as handle:
                self.lines = handle.read().splitlines()

        def map(self, tick: Any) -> Any:
            kind, *values = json.loads(self.lines[tick[0]])
            row = Row(*values)
            row.set_row_kind({"I": RowKind.INSERT, "U": RowKind.UPDATE_AFTER, "D": RowKind.DELETE}[kind])
            return row

    conf = Configuration()
    for key, value in settings["flink_configuration"].items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    t_env = StreamTableEnvironment.create(env)
    for key, value in settings["table_configuration"].items():
        t_env.get_config().set(key, value)

    wire = [(name, _wire_type(flink_type)) for name, flink_type, _ in settings["columns"]]
    python_types = {"BIGINT": Types.LONG(), "INT": Types.INT(), "STRING": Types.STRING()}
    row_type = Types.ROW_NAMED([name for name, _ in wire], [python_types[t] for _, t in wire])

    t_env.execute_sql(ticks_ddl(settings["events"], settings["events_per_second"]))
    ticks = t_env.to_data_stream(t_env.from_path("icemaint_ticks"))
    changes = ticks.map(EventAt(settings["events_file"]), output_type=row_type).name("planned events")
    t_env.create_temporary_view("icemaint_changes", t_env.from_changelog_stream(changes))
    t_env.execute_sql(sink_ddl(settings))
    select = ", ".join(_from_wire(name, flink_type) for name, flink_type, _ in settings["columns"])
    started = time.monotonic()
    result = t_env.execute_sql(f"INSERT INTO icemaint_sink SELECT {select} FROM icemaint_changes")
    job_id = str(result.get_job_client().get_job_id())
    with open(settings["job_ids_file"], "a", encoding="utf-8") as handle:  # before it commits: a killed job's id is known too
        handle.write(job_id + "\n")
    result.wait(int(settings["timeout_s"] * 1000))
    return {"job_id": job_id, "seconds": round(time.monotonic() - started, 3)}


if __name__ == "__main__":
    sys.exit(program_main(sys.argv, run))
