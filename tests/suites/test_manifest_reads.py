"""How often a daemon MERGE reads each manifest, counted by the kernel (inotify on the table's
metadata folder), so pyiceberg's reads and the Spark JVM's (Iceberg's planFiles, the
commit's manifest filtering, the verification's fingerprint scans) are all counted, whoever
makes them. docs/ARCHITECTURE.md ("Manifest reads, measured") states the numbers.

Phases, as the daemon runs them (`cycle.evaluate`, then `cycle.run_decision`):
- evaluation: health and plan, through pyiceberg;
- job: the re-check under the lease, the plan, Iceberg's scan tasks, the group writes (up
  to the progress report that the last group is written);
- commit: the claim and the `RewriteFiles` (with verification: staged; up to "staged");
- verification: the parent's and the staged snapshot's fingerprints ("staged" to "verified");
- publish: the fast-forward to the staged snapshot (with verification only);
- record: the new snapshot's health stored with the run, after the last metadata file the
  commit (or the fast-forward) wrote;
- next evaluation: the daemon's next look at the table, on the new snapshot.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from pyiceberg.manifest import ManifestContent, ManifestFile

from maintenance.catalogs import load_table
from maintenance.policy.loader import load_policies
from maintenance.run.outcome import COMMITTED
from maintenance.schedule.cycle import evaluate, run_decision
from maintenance.state.store import open_state
from maintenance.table.files import CACHE
from tests.conftest import CdcFactory
from tests.support.inotify_counts import MANIFEST_CRC, METADATA_JSON, FolderOpens

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="counts opens with Linux inotify")


def names(manifests: list[ManifestFile]) -> Counter[str]:
    """Each manifest once, by its file name (what inotify reports)."""
    return Counter(Path(m.manifest_path).name for m in manifests)


def live(manifests: list[ManifestFile]) -> list[ManifestFile]:
    """The manifests a scan opens: those with added or existing entries (Iceberg skips a
    manifest whose every entry is DELETED by its counts in the manifest list)."""
    return [m for m in manifests if m.has_added_files() or m.has_existing_files()]


@pytest.mark.parametrize("verify", [False, True], ids=["unverified", "verified"])
def test_a_daemon_merge_reads_each_manifest_once_to_evaluate_and_once_in_the_job(spark, config, cdc_table: CdcFactory, tmp_path: Path,
                                                                                     verify: bool) -> None:
    """The evaluation opens each manifest of the current snapshot exactly once (pyiceberg);
    the job and its commit together at most once more (the JVM, with Iceberg's manifest
    cache); the new snapshot's live manifests are read once more by the record, or, when the
    run verifies, by verification (the JVM every manifest the commit wrote, pyiceberg the
    one adding files) and not by the record."""
    (tmp_path / "merge.yaml").write_text("name: merge\njobs:\n  merge:\n    when: {equality_delete_files: 1}\n    every: 1h\n"
                                         f"    verify: {str(verify).lower()}\n")
    policies = load_policies(tmp_path)
    ref, _, _ = cdc_table(rows=1500, commits=6, update_ratio=0.3)  # v2, identity(region), 4 partitions
    state = open_state(config)
    table = load_table(config, ref)
    folder = Path(unquote(urlsplit(table.metadata_location).path)).parent
    manifests = table.current_snapshot().manifests(table.io)  # reads the manifest list only (snap-*.avro)
    current = names(manifests)
    assert len(live(manifests)) == len(manifests) > 1
    CACHE.clear()
    pyiceberg: dict[str, int] = {}  # pyiceberg's own count (icemaint's), per phase: who read

    def enter(opens: FolderOpens, phase: str) -> None:
        pyiceberg[opens.current] = CACHE.manifests_read - pyiceberg.pop("since")
        opens.phase(phase)
        pyiceberg["since"] = CACHE.manifests_read

    def progress(stage: str, **counts: int) -> None:
        if stage == "groups written" and counts["groups_written"] == counts["groups_planned"]:
            enter(opens, "commit")
        elif stage in ("staged", "verified"):
            enter(opens, {"staged": "verification", "verified": "publish"}[stage])

    with FolderOpens(folder, "evaluation") as opens:
        pyiceberg["since"] = CACHE.manifests_read
        evaluation = evaluate(config, state, [ref], policies)
        (decision,) = [d for d in evaluation.due if d.job == "merge"]
        assert decision.prepared is not None and decision.prepared.snapshot_id == table.metadata.current_snapshot_id
        enter(opens, "job")
        result = run_decision(config, state, decision, policies=policies, progress=progress)
        enter(opens, "next evaluation")
        evaluate(config, state, [ref], policies)
        enter(opens, "after")
        assert opens.still_open() == []
    pyiceberg["after"] = CACHE.manifests_read - pyiceberg.pop("since")
    last = "publish" if verify else "commit"
    opens.split(last, lambda o: o.wrote and bool(METADATA_JSON.match(o.name)), "record")
    data_manifests = sum(1 for m in manifests if m.content == ManifestContent.DATA)
    measured = (f"manifest opens by phase ({data_manifests} data and {len(manifests) - data_manifests} delete manifests):\n{opens.table()}\nof their .crc sidecars:\n{opens.table(MANIFEST_CRC)}\n"
                f"pyiceberg's own count: {pyiceberg}")
    print(measured)

    assert result.status == COMMITTED and result.content_verified is (True if verify else None), result.error
    assert opens.phases == ["evaluation", "job", "commit", *(["verification", "publish"] if verify else []), "record", "next evaluation",
                            "after"], measured
    new = load_table(config, ref)
    assert new.metadata.current_snapshot_id == result.snapshot_id
    new_manifests = new.current_snapshot().manifests(new.io)
    plan = decision.prepared.plan
    removed = {f.path for f in plan.targets} | {f.path for f in plan.deletes}
    assert result.counters["data_files_rewritten"] == len(plan.targets) and result.counters["delete_files_removed"] == len(plan.deletes)
    holding = Counter(Path(m.manifest_path).name for m in manifests
                      if any(e.data_file.file_path in removed for e in m.fetch_manifest_entry(table.io, discard_deleted=True)))

    # Evaluation: each manifest of the current snapshot exactly once, all through pyiceberg.
    assert opens.reads("evaluation") == current and pyiceberg["evaluation"] == len(current), measured
    # The job: pyiceberg reads none (the re-check and the plan reuse the evaluation's); the
    # scan tasks (Iceberg's planFiles, in the JVM) open each once. The commit, which rewrites
    # the manifests holding a file it removes, and the parent's fingerprint read them from
    # Iceberg's manifest cache (`io.manifest.cache-enabled`): over the whole job, each
    # manifest is opened at most once, and a manifest the commit wrote at most once (the
    # staged snapshot's fingerprint reads those holding live files; the fast-forward none).
    job = opens.reads("job") + opens.reads("commit") + (opens.reads("publish") if verify else Counter())
    assert pyiceberg["job"] == 0 and opens.reads("job") == current, measured
    assert max(job.values(), default=0) <= 1 and set(job) <= set(current) | set(names(new_manifests)), measured
    assert set(opens.writes("commit")) == set(names(new_manifests)) - set(current) and sum(opens.writes("commit").values()) <= len(holding) + 1, measured
    written_live = names(live(new_manifests)) - current
    if verify:
        # Verification reads only manifests the commit wrote: the JVM each once, for Iceberg's
        # diff of the staged snapshot (which files it removed; the scan tasks then come from
        # Iceberg's manifest cache, the parent's as the shared ones), and pyiceberg the one
        # adding files, for what it added (the parent's files come from the evaluation's
        # read). Nothing at publish. The two read in parallel, so the kernel may merge an open
        # of the adding manifest by one into the other's (`merged_reads`): pyiceberg's count of
        # its own reads is exact.
        assert opens.merged_reads("verification", (names(new_manifests) - current) + written_live, at_once=written_live), measured
        assert pyiceberg["verification"] == sum(written_live.values()), measured
        assert opens.reads("publish") == Counter(), measured
    # The run's record: the new snapshot's health, through pyiceberg, each of its manifests
    # holding a live file once (one left holding only deleted entries is not read), kept for
    # the next evaluation, which reads none; when verification read the snapshot already
    # (the published one is the staged one), the record reads nothing. (pyiceberg's count of
    # the phase the record was split from is the record's.)
    record = opens.reads("record")
    assert record == (Counter() if verify else names(live(new_manifests))) and pyiceberg[last] == sum(record.values()), measured
    assert opens.reads("next evaluation") == opens.reads("after") == Counter(), measured
