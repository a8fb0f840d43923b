"""The jobs' documentation as users see it (`jobs/docs.py`): `icemaint jobs --json` and
docs/cli.md, generated from the registry."""

from __future__ import annotations

import json

import pytest

from maintenance.jobs import registry
from maintenance.jobs.docs import jobs_markdown
from tests.support.cli import in_process
from tests.support.paths import REPO


def test_jobs_json_lists_every_job_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "jobs", "--json")
    listed = json.loads(out)["jobs"]
    assert code == 0 and [j["name"] for j in listed] == list(registry.JOB_NAMES)
    expire = next(j for j in listed if j["name"] == "expire")
    age = next(o for o in expire["options"] if o["name"] == "max_snapshot_age")
    assert age == {**age, "type": "duration", "policy_key": "jobs.expire.retention.max_snapshot_age",
                   "table_property": "icemaint.expire.retention.max_snapshot_age", "flag": "--older-than"}
    force = next(o for j in listed if j["name"] == "orphans" for o in j["options"] if o["name"] == "force")
    assert force["policy_key"] is None and force["flag"] == "--force"


def test_docs_cli_md_is_generated_from_the_registry() -> None:
    assert (REPO / "docs" / "cli.md").read_text().strip() == jobs_markdown().strip(), "run: icemaint jobs --markdown > docs/cli.md"
