"""A fleet of small tables for fleet-scale planning tests and benchmarks, written with
pyiceberg alone: no Spark job per table, no JVM.

Each table is a real small table: created with a key, a partition column and a payload,
partitioned by identity on the partition column, then given `commits` appends (real
Parquet files through pyiceberg's writer, real manifests and snapshots), so health, plans
and triggers see what they would see on a streaming writer's young table (several small
files per partition, one snapshot per commit). Tables that already exist are left as they
are, so a fleet can be grown by calling again with more tables.

Cost, measured here (local disk, SQL catalog on SQLite, one process): about 20 ms per
commit, so 50 tables of 3 commits took 2.9 s and 10,000 would take about 10 minutes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", IntegerType(), required=False),
    NestedField(3, "payload", StringType(), required=False),
    identifier_field_ids=[1],
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.int32()), pa.field("payload", pa.string())])


@dataclass(frozen=True)
class FleetOptions:
    tables: int
    namespace: str = "fleet"
    prefix: str = "t"
    commits: int = 3
    rows: int = 100  # per commit
    partitions: int = 2
    seed: int = 7


@dataclass
class FleetResult:
    catalog: str
    namespace: str
    tables_created: int
    tables_existing: int
    commits: int
    seconds: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def table_names(options: FleetOptions) -> list[str]:
    """The fleet's table names, in order: `prefix` and a zero-padded number."""
    width = max(5, len(str(options.tables - 1)))
    return [f"{options.prefix}{i:0{width}d}" for i in range(options.tables)]


def make_fleet(catalog: Catalog, catalog_name: str, options: FleetOptions, progress: Callable[[int, int], None] = lambda done, total: None,
               only: Callable[[int], bool] = lambda index: True) -> FleetResult:
    """Create the fleet's tables that do not exist yet, each with its commits (`only`: the
    tables, by index, this call makes; several calls on threads can make a fleet at once)."""
    started = time.monotonic()
    try:
        catalog.create_namespace(options.namespace)
    except NamespaceAlreadyExistsError:
        pass
    # Not every catalog refuses to create a table that exists: SeaweedFS's REST catalog
    # answers with the existing table, and the appends below went to it (a fleet made twice
    # had twice the commits). So what the catalog lists is left alone without asking.
    listed = {identifier[-1] for identifier in catalog.list_tables(options.namespace)}
    created = existing = commits = 0
    for index, name in enumerate(table_names(options)):
        if not only(index):
            continue
        if name in listed:
            existing += 1
            continue
        try:
            table = catalog.create_table(f"{options.namespace}.{name}", SCHEMA, partition_spec=SPEC, properties={"format-version": "2"})
        except TableAlreadyExistsError:
            existing += 1
            continue
        rng = random.Random(f"{options.seed}:{name}")
        for commit in range(options.commits):
            table.append(_rows(rng, commit * options.rows, options))
            commits += 1
        created += 1
        progress(index + 1, options.tables)
    return FleetResult(catalog_name, options.namespace, created, existing, commits, round(time.monotonic() - started, 3))


def change_tables(catalog: Catalog, options: FleetOptions, every: int) -> list[str]:
    """One more append to every `every`-th table of the fleet (a writer's commit: a new
    metadata location); the names of the tables changed."""
    changed = []
    for index, name in enumerate(table_names(options)):
        if index % every:
            continue
        table = catalog.load_table(f"{options.namespace}.{name}")
        table.append(_rows(random.Random(f"{options.seed}:{name}:changed"), options.commits * options.rows, options))
        changed.append(name)
    return changed


def _rows(rng: random.Random, start: int, options: FleetOptions) -> pa.Table:
    ids = list(range(start, start + options.rows))
    return pa.Table.from_pydict({
        "id": ids,
        "region": [i % options.partitions for i in ids],
        "payload": [f"{rng.getrandbits(64):016x}" for _ in ids],
    }, schema=ARROW_SCHEMA)
