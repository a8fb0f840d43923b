"""What daemons' evaluations saw of each table, in the state database, for every daemon on it.

Rows are written and read by `schedule/stored.py`, which says what a row means and why
using one is safe; this module only stores them. Each row is a cache entry: a lost write, or
two daemons writing one table at once, costs a read of the table later, never a wrong
decision, so writes are upserts that the last writer wins.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import Engine, and_, delete, select

from maintenance.state.database import NAMES_AT_ONCE, db_now_ms, in_groups, unavailable_as_error
from maintenance.state.schema import EvaluationRow
from maintenance.state.upserts import upsert

evaluations = EvaluationRow.__table__


@dataclass(frozen=True)
class StoredEvaluation:
    table: str
    catalog: str
    metadata_location: str
    basis: str
    kept: bytes  # what `schedule/stored.py` wrote: compressed JSON


class EvaluationStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._now = db_now_ms(engine)

    def read(self, tables: Collection[str], basis: str) -> dict[str, StoredEvaluation]:
        """The rows of the named tables written on `basis` (others are of no use here)."""
        found: dict[str, StoredEvaluation] = {}
        with unavailable_as_error(), self.engine.connect() as conn:
            for names in in_groups(tables):
                query = select(evaluations).where(and_(evaluations.c.table_name.in_(names), evaluations.c.basis == basis))
                for row in conn.execute(query):
                    found[row.table_name] = StoredEvaluation(row.table_name, row.catalog, row.metadata_location, row.basis, bytes(row.kept))
        return found

    def write(self, rows: Collection[StoredEvaluation]) -> None:
        """Insert or replace each row (one transaction per `NAMES_AT_ONCE` rows)."""
        batch = list(rows)
        with unavailable_as_error():
            for start in range(0, len(batch), NAMES_AT_ONCE):
                with self.engine.begin() as conn:
                    for row in batch[start:start + NAMES_AT_ONCE]:
                        conn.execute(self._upsert(row))

    def names(self, catalog: str) -> set[str]:
        """Every table of the catalog with a row."""
        with unavailable_as_error(), self.engine.connect() as conn:
            return {r[0] for r in conn.execute(select(evaluations.c.table_name).where(evaluations.c.catalog == catalog))}

    def forget(self, tables: Collection[str]) -> None:
        with unavailable_as_error(), self.engine.begin() as conn:
            for names in in_groups(tables):
                conn.execute(delete(evaluations).where(evaluations.c.table_name.in_(names)))

    def _upsert(self, row: StoredEvaluation):  # type: ignore[no-untyped-def]
        values = {"table_name": row.table, "catalog": row.catalog, "metadata_location": row.metadata_location, "basis": row.basis,
                  "kept": row.kept, "written_at_ms": self._now}
        return upsert(self.engine, evaluations, ("table_name",), values)
