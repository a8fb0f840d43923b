"""Policies and decisions as the decisions tests and the health tests build them."""

from __future__ import annotations

from pathlib import Path

from maintenance.policy.loader import load_policies

POLICY = """\
name: test
select:
  namespaces: "*"
jobs:
  merge:
    when:
      equality_delete_files: 1
      delete_ratio: 0.05
    every: 1h
  expire:
    when:
      snapshots: 4
    every: 1h
    retention:
      max_snapshot_age: 0s
      min_snapshots_to_keep: 2
  orphans:
    every: 1d
"""


def policies_from(tmp_path: Path, text: str = POLICY):  # type: ignore[no-untyped-def]
    (tmp_path / "test.yaml").write_text(text)
    return load_policies(tmp_path)


def by_job(evaluation, table):  # type: ignore[no-untyped-def]
    return {d.job: d for d in evaluation.decisions if d.table == str(table)}
