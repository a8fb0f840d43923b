"""Policies: the shipped files load; every error names the file, the line and the reason;
table properties override key by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import REPO_POLICIES
from maintenance.policy.loader import PolicyError, load_policies, load_policy_file
from maintenance.policy.resolve import policy_for
from maintenance.policy.triggers import fired, not_reached
from maintenance.table.health import TableHealth

REF = TableRef("local", ("cdc_orders",), "orders")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_shipped_policies_load_and_the_default_selects_everything() -> None:
    policies = load_policies(REPO_POLICIES)
    assert {p.name for p in policies} == {"default", "streaming-cdc", "batch-gdpr"}
    assert policy_for(TableRef("any", ("x",), "y"), {}, policies).policy == "default"
    assert policy_for(REF, {}, policies).policy == "streaming-cdc"  # higher priority, matching namespace
    assert policy_for(TableRef("local", ("gdpr_eu",), "users"), {}, policies).policy == "batch-gdpr"
    cdc = policy_for(REF, {}, policies)
    assert [j.job for j in cdc.enabled_jobs()] == ["convert", "rewrite", "merge", "compact", "manifests", "expire", "orphans"]
    assert "mz-frontier" in cdc.jobs["expire"].options.checkpoint_keys


GOOD = """\
name: p
select:
  namespaces: ["a*"]
jobs:
  merge:
    when:
      equality_delete_files: 1
    every: 10m
"""


@pytest.mark.parametrize(
    "text, line, needle",
    [
        (GOOD.replace("    every: 10m", "    evry: 10m"), 8, "jobs.merge.evry: unknown key"),
        (GOOD.replace("every: 10m", "every: soon"), 8, "jobs.merge.every: not a duration"),
        (GOOD.replace("equality_delete_files: 1", "equality_deletes: 1"), 7, "jobs.merge.when.equality_deletes: unknown health measure"),
        (GOOD.replace("equality_delete_files: 1", "equality_delete_files: many"), 7, "must be a non-negative number"),
        (GOOD.replace("  merge:", "  merg:"), 5, "jobs.merg: unknown job"),
        (GOOD.replace("every: 10m", "cron: '61 * * * *'"), 8, "invalid cron expression"),
        (GOOD.replace("every: 10m", "every: 10m\n    quiet_hours: ['25:00-06:00']"), 9, "not a time range"),
        (GOOD.replace('namespaces: ["a*"]', "namespaces: []"), 3, "select.namespaces: must be a glob"),
        (GOOD + "  orphans:\n    every: 1d\n    older_than: 10m\n", 11, "below 1 hour"),
        (GOOD + "  expire:\n    enabled: false\n    retention:\n      min_snapshots_to_keep: 0\n", 12, "at least 1"),
        (GOOD + "  rewrite:\n    enabled: true\n", 9, "needs 'when'"),
        (GOOD.replace("name: p", "name: p\npriority: high"), 2, "priority: must be an integer"),
        (GOOD + "jobs: {}\n", 9, "duplicate key 'jobs'"),
        ("name: p\njobs: [\n", 3, "expected"),
    ],
)
def test_policy_errors_name_file_line_and_reason(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = write(tmp_path, "broken.yaml", text)
    with pytest.raises(PolicyError) as error:
        load_policy_file(path)
    message = str(error.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert needle in message and "\n" not in message


def test_two_policies_with_one_name_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(PolicyError, match="also used by"):
        load_policies(tmp_path)


def test_table_properties_override_key_by_key(tmp_path: Path) -> None:
    write(tmp_path, "p.yaml", GOOD.replace('["a*"]', '"*"'))
    policies = load_policies(tmp_path)
    props = {
        "icemaint.merge.every": "30m",
        "icemaint.merge.when.delete_ratio": "0.05",
        "icemaint.merge.spark.spark.sql.shuffle.partitions": "4",
        "icemaint.orphans.every": "2d",
        "icemaint.lease-epoch": "7",  # icemaint's own bookkeeping, not policy
    }
    table = policy_for(REF, props, policies)
    merge = table.jobs["merge"]
    assert merge.schedule.every_s == 1800 and merge.triggers == {"equality_delete_files": 1.0, "delete_ratio": 0.05}
    assert merge.spark == {"spark.sql.shuffle.partitions": "4"}
    assert table.jobs["orphans"].schedule.every_s == 2 * 86400
    assert policy_for(REF, {"icemaint.enabled": "false"}, policies).enabled is False


@pytest.mark.parametrize(
    "props, needle",
    [
        ({"icemaint.merge.every": "often"}, "table local.cdc_orders.orders: icemaint.merge.every: not a duration"),
        ({"icemaint.merge.when.deletes": "3"}, "icemaint.merge.when.deletes: unknown health measure"),
        ({"icemaint.mrege.every": "1h"}, "icemaint.mrege: unknown job"),
        ({"icemaint.enabled": "maybe"}, "icemaint.enabled must be true or false"),
        ({"icemaint.policy": "nope"}, "unknown policy 'nope'"),
    ],
)
def test_bad_table_properties_are_reported_with_the_property(tmp_path: Path, props: dict[str, str], needle: str) -> None:
    write(tmp_path, "p.yaml", GOOD.replace('["a*"]', '"*"'))
    with pytest.raises(PolicyError) as error:
        policy_for(REF, props, load_policies(tmp_path))
    assert needle in str(error.value)


def test_selection_by_priority_globs_and_explicit_name(tmp_path: Path) -> None:
    write(tmp_path, "low.yaml", GOOD.replace("name: p", "name: low").replace('["a*"]', '"*"'))
    write(tmp_path, "high.yaml", GOOD.replace("name: p", "name: high\npriority: 5").replace('namespaces: ["a*"]', 'namespaces: ["cdc_*"]\n  tables: ["ord*"]'))
    policies = load_policies(tmp_path)
    assert policy_for(REF, {}, policies).policy == "high"
    assert policy_for(TableRef("local", ("cdc_x",), "customers"), {}, policies).policy == "low"
    assert policy_for(REF, {"icemaint.policy": "low"}, policies).policy == "low"


def test_a_table_property_is_read_as_its_text_not_as_yaml(tmp_path: Path) -> None:
    """A property reaches its check as the string it is, as a flag's value would: `123` is a
    column name, `017` is 17; YAML 1.1's readings (`0x10` is 16, `no` is false) do not apply."""
    write(tmp_path, "p.yaml", GOOD.replace('["a*"]', '"*"') + "  compact:\n    every: 1h\n  expire:\n    every: 1d\n")
    policies = load_policies(tmp_path)
    props = {"icemaint.compact.zorder_columns": "123", "icemaint.compact.min_input_files": "017", "icemaint.expire.retention.checkpoint_keys": "1.5",
             "icemaint.merge.enabled": "FALSE", "icemaint.merge.when.delete_ratio": "5e-2"}
    table = policy_for(REF, props, policies)
    assert table.jobs["compact"].options.zorder_columns == ("123",) and table.jobs["compact"].options.min_input_files == 17
    assert table.jobs["expire"].options.checkpoint_keys == ("1.5",)
    assert table.jobs["merge"].enabled is False and table.jobs["merge"].triggers["delete_ratio"] == 0.05
    for key, text, needle in [("compact.min_input_files", "0x10", "must be an integer"), ("merge.enabled", "no", "must be true or false"),
                              ("merge.when.delete_ratio", "0x1", "must be a non-negative number"), ("compact.zorder_columns", "a,,b", "an empty item")]:
        with pytest.raises(PolicyError) as error:
            policy_for(REF, {f"icemaint.{key}": text}, policies)
        assert str(error.value).startswith(f"table {REF}: icemaint.{key}: ") and needle in str(error.value), str(error.value)


def test_a_policy_runs_stats_once_enough_rows_changed_since_the_last_statistics(tmp_path: Path) -> None:
    (tmp_path / "stats.yaml").write_text("name: stats\npriority: 5\nselect:\n  tables: '*'\njobs:\n  stats:\n    when:\n      statistics_stale_ratio: 0.1\n")
    policy = load_policy_file(tmp_path / "stats.yaml")
    triggers = policy.jobs["stats"].triggers
    never = TableHealth(table="t", current_snapshot_id=1, data_records=1000, rows_changed_since_statistics=1200)  # every row since the start
    assert fired(triggers, never) == ["statistics_stale_ratio 1.2 >= 0.1"]
    assert fired(triggers, TableHealth(table="t", current_snapshot_id=1, data_records=1000, rows_changed_since_statistics=99)) == []
    assert fired(triggers, TableHealth(table="t", current_snapshot_id=1, data_records=1000, rows_changed_since_statistics=100)) == [
        "statistics_stale_ratio 0.1 >= 0.1"]
    assert fired(triggers, TableHealth(table="t")) == []  # an empty table has nothing to describe


def test_triggers_not_reached_say_their_values_against_the_thresholds(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("name: p\njobs:\n  merge:\n    when:\n      equality_delete_files: 10\n      delete_ratio: 0.05\n"
                                     "  compact:\n    when:\n      avg_data_file_bytes: 1MiB\n  expire:\n    when:\n      oldest_snapshot_age: 5d\n")
    jobs = load_policy_file(tmp_path / "p.yaml").jobs
    health = TableHealth(table="t", current_snapshot_id=1, data_files=4, data_bytes=64 * 2**20, data_records=1000, equality_delete_files=3,
                         equality_delete_records=20, oldest_snapshot_age_s=3 * 3600 + 30)
    assert not_reached(jobs["merge"].triggers, health) == ["equality_delete_files 3 < 10", "delete_ratio 0.02 < 0.05"]
    assert not_reached(jobs["compact"].triggers, health) == ["avg_data_file_bytes 16777216 > 1048576"]  # at most: reached at or below
    assert not_reached(jobs["expire"].triggers, health) == ["oldest_snapshot_age 3.0h < 5d"]
    assert not_reached(jobs["compact"].triggers, TableHealth(table="t", data_files=1, data_bytes=10)) == ["avg_data_file_bytes n/a > 1048576"]
    aged = TableHealth(table="t", current_snapshot_id=1, oldest_snapshot_age_s=6 * 86400)
    assert not_reached(jobs["expire"].triggers, aged) == [] and fired(jobs["expire"].triggers, aged) == ["oldest_snapshot_age 6.0d >= 5d"]
