"""Insert a row, or change the one with its key: each backend's upsert, in one place.

A column may be replaced by the new value (the last writer wins) or added to (counters
that several writers add to at once: each addition is one statement that reads nothing
first, so none is lost to another writer's).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from sqlalchemy import Engine, Table


def upsert(engine: Engine, table: Table, keys: Collection[str], values: Mapping[str, Any], *, added: Collection[str] = ()):  # type: ignore[no-untyped-def]
    """The statement that inserts `values`, or, where a row with the same `keys` is there,
    adds the `added` columns to it and replaces the others."""
    backend = engine.dialect.name  # each backend's upsert, its dialect imported for it alone
    if backend in ("mysql", "mariadb"):
        from sqlalchemy.dialects import mysql

        statement = mysql.insert(table).values(**values)
        new = statement.inserted
        changes = {name: table.c[name] + new[name] if name in added else new[name] for name in values if name not in keys}
        return statement.on_duplicate_key_update(**changes)
    if backend == "postgresql":
        from sqlalchemy.dialects import postgresql as dialect
    else:
        from sqlalchemy.dialects import sqlite as dialect  # type: ignore[no-redef]
    statement = dialect.insert(table).values(**values)
    new = statement.excluded
    changes = {name: table.c[name] + new[name] if name in added else new[name] for name in values if name not in keys}
    return statement.on_conflict_do_update(index_elements=list(keys), set_=changes)
