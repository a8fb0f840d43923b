"""Kept evaluations stored in the state database, for every daemon on it (and cron runs).

A daemon keeps what each cycle saw of a table while its metadata location stays put
(`schedule/kept.py`). Kept only in its process, that is lost when the daemon restarts and
useless to the daemon that takes over its share when it dies: 10,000 tables took 133 s to
evaluate cold, and the survivor of a killed daemon read its half cold (73 s) before the
whole fleet was evaluated again (docs/benchmarks.md, "daemons"). So each cycle writes the
kept evaluations the database lacks (`icemaint_evaluations`, one row per table), and reads,
for the tables of its share it has not kept at their listed location, the rows written by
whichever daemon evaluated them last.

Why another daemon's row decides what this one's own would: a row is used only at the very
metadata location the catalog names now, and a metadata file never changes once written and
names everything an evaluation reads (the argument of `schedule/kept.py`), and only on the
same `basis`: the icemaint build (its version and the digest of its source: what a health
and a plan hold and how they are made) and the configuration an evaluation reads besides
the table (`health.small_file_bytes`). What a row holds is what a
kept evaluation holds and no more: the properties the policy is chosen by, the health, the
oldest snapshot's time, and which plans found nothing to do (per job and options). Never in
it: the time, the run history, the policies (each daemon reads or applies those itself, every
cycle). A row is a cache entry: lost, stale or written twice, it costs a read of the table.

Rows of tables a catalog no longer lists (dropped) are deleted by the daemon whose share
holds them, at the end of a cycle that listed that catalog.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

from maintenance import __version__
from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.schedule.kept import Kept, KeptEvaluations
from maintenance.schedule.membership import ALONE, Share
from maintenance.state.evaluations import StoredEvaluation
from maintenance.state.store import StateStore
from maintenance.table.health import TableHealth

ROW_FORMAT = 1  # what `_encode` writes; a change makes every older row unused


def basis(config: Config) -> str:
    """What an evaluation depends on besides the table's metadata, as a digest."""
    depends = {"row_format": ROW_FORMAT, "icemaint": __version__, "code": code_digest(), "small_file_bytes": config.health.small_file_bytes}
    return hashlib.sha256(json.dumps(depends, sort_keys=True).encode()).hexdigest()


@functools.cache
def code_digest() -> str:
    """The digest of this installation's own source: a daemon of another build (a health
    counter added, a plan's rule changed) never takes a row this one wrote, even where the
    version number did not move. Read once per process (a few hundred small files)."""
    package = Path(__file__).resolve().parent.parent
    sha = hashlib.sha256()
    for source in sorted(package.rglob("*.py")):
        sha.update(str(source.relative_to(package)).encode())
        sha.update(source.read_bytes())
    return sha.hexdigest()


def adopt(kept: KeptEvaluations, state: StateStore, refs: list[TableRef], locations: dict[str, str], on: str) -> int:
    """Before a cycle: take the database's rows for the tables not kept here at the location
    the catalog listed (any location, where the catalog lists none: the row is checked
    against the loaded table's). Returns how many rows were taken."""
    wanted = [ref for ref in refs if (kept.get(ref, locations[str(ref)]) is None if str(ref) in locations else ref not in kept)]
    if not wanted:
        return 0
    rows = state.evaluations.read([str(ref) for ref in wanted], on)
    taken = 0
    for ref in wanted:
        row = rows.get(str(ref))
        listed = locations.get(str(ref))
        if row is None or (listed is not None and row.metadata_location != listed):
            continue
        kept.adopt(ref, _decode(row))
        taken += 1
    return taken


def write(kept: KeptEvaluations, state: StateStore, refs: list[TableRef], on: str) -> int:
    """After a cycle: write the kept evaluations of these tables that the database lacks."""
    rows = kept.unstored(refs)
    state.evaluations.write([StoredEvaluation(str(ref), ref.catalog, found.metadata_location, on, _encode(found)) for ref, found in rows])
    for ref, found in rows:
        kept.stored_as(ref, found)
    return len(rows)


def forget_dropped(state: StateStore, catalog: str, listed: set[str], share: Share = ALONE) -> int:
    """Delete the rows of the catalog's tables its listing no longer has, of this share."""
    gone = {name for name in state.evaluations.names(catalog) if name not in listed and share.holds(name)}
    if gone:
        state.evaluations.forget(gone)
    return len(gone)


def _encode(kept: Kept) -> bytes:
    fields: dict[str, Any] = {
        "properties": kept.properties,
        "health": kept.health.to_json() if kept.health is not None else None,
        "oldest_snapshot_ms": kept.oldest_snapshot_ms,
        "nothing_to_do": [[job, options, reason] for (job, options), reason in sorted(kept.nothing_to_do.items())],
    }
    return zlib.compress(json.dumps(fields, separators=(",", ":")).encode())


def _decode(row: StoredEvaluation) -> Kept:
    fields = json.loads(zlib.decompress(row.kept))
    health = TableHealth.from_json(fields["health"]) if fields["health"] is not None else None
    nothing = {(job, options): reason for job, options, reason in fields["nothing_to_do"]}
    return Kept(row.metadata_location, dict(fields["properties"]), health, fields["oldest_snapshot_ms"], nothing)
