"""An evaluation of generated health counters, as the daemon publishes one after evaluating
real tables: what the status page shows for thousands of tables without making them (its
tests and its benchmark, benchmarks/ui.py; real tables would take hours to make)."""

from __future__ import annotations

import random

from maintenance.catalogs import TableRef
from maintenance.schedule.cycle import Evaluation
from maintenance.schedule.decisions import Decision
from maintenance.table.health import PartitionHealth, TableHealth
from maintenance.table.reader_cost import reader_cost


def generated_evaluation(names: list[str], seed: int = 19) -> Evaluation:
    """Three partitions per table with random counters; every fourth table has MERGE due,
    every seventh ORPHANS, so the page has due jobs to show."""
    rng = random.Random(seed)
    evaluation = Evaluation()
    for i, name in enumerate(names):
        parts = [PartitionHealth(partition=f"day={d}", data_files=rng.randint(1, 40), data_bytes=rng.randint(1, 10) * 2**27,
                                 equality_delete_files=rng.randint(0, 30), position_delete_files=rng.randint(0, 30), data_records=10_000)
                 for d in range(3)]
        health = TableHealth(table=name, format_version=2, current_snapshot_id=i, snapshots=rng.randint(1, 400), partitions=parts,
                             data_files=sum(p.data_files for p in parts), data_bytes=sum(p.data_bytes for p in parts),
                             equality_delete_files=sum(p.equality_delete_files for p in parts),
                             position_delete_files=sum(p.position_delete_files for p in parts), small_data_files=rng.randint(0, 50))
        evaluation.health[name] = health
        cost = reader_cost(health)
        policy = ("default", "streaming-cdc", "batch-gdpr")[i % 3]
        for job, due in (("merge", i % 4 == 0), ("expire", False), ("orphans", i % 7 == 0)):
            evaluation.decisions.append(Decision(_ref(name), job, due, "equality_delete_files 12 >= 1" if due else "ran 42s ago (every 600s)", policy, cost, 12.0))
    return evaluation


def _ref(name: str) -> TableRef:
    """`catalog.namespace.table` as a reference (the generated names have one namespace level)."""
    catalog, namespace, table = name.split(".")
    return TableRef(catalog, (namespace,), table)
