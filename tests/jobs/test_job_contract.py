"""The job contract (`jobs/spec.py`, `jobs/registry.py`): every job is in the registry once with
its options declared; a job is its folder and one registry line, which nothing else knows;
and a job with nothing to do says why. (Its options' one parser: `test_options.py`; its
counters: `test_counters.py`; its documentation: `test_docs.py`.)"""

from __future__ import annotations

import json

import pytest

from maintenance.jobs import registry
from maintenance.run.outcome import NOOP
from tests.conftest import fresh_ref
from tests.support.cli import in_process
from tests.support.paths import REPO


def test_every_job_is_in_the_registry_once_with_its_options_declared() -> None:
    names = [spec.name for spec in registry.JOBS]
    assert len(names) == len(set(names))
    for spec in registry.JOBS:
        spec.parse_options(None)  # the defaults are valid
        for option in spec.option_specs():
            assert option.help and option.kind.name
            assert option.policy_key or option.flag, option.name


def test_nothing_outside_a_jobs_folder_and_the_registry_knows_the_job() -> None:
    """A job is its folder and one registry line: no other module imports a job's package or
    spells a job's name (the health measures `manifests`/`small_manifests` count manifests,
    not the MANIFESTS job, and are the one allowed spelling)."""
    import re

    package = REPO / "maintenance"
    allowed_literals = {('"manifests"', "maintenance/policy/triggers.py"), ('"manifests"', "maintenance/ui/pages.py"),
                        *((f'"{name}"', "maintenance/workload/evaluation.py") for name in ("merge", "expire", "orphans"))}  # made-up decisions
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative == "maintenance/jobs/registry.py":
            continue
        text = "\n".join(re.sub(r"#.*", "", line) for line in path.read_text().splitlines())  # code, not comments
        for name in registry.JOB_NAMES:
            if relative.startswith(f"maintenance/jobs/{name}/"):
                continue
            imports = re.findall(rf"(?:from maintenance\.jobs\.{name}\b|from maintenance\.jobs import [^\n]*\b{name}\b|import maintenance\.jobs\.{name}\b)", text)
            literals = [f'"{name}"'] * text.count(f'"{name}"') + [f"'{name}'"] * text.count(f"'{name}'")
            found += [(relative, hit) for hit in imports]
            found += [(relative, hit) for hit in literals if (hit, relative) not in allowed_literals]
    assert found == []


def test_a_job_with_nothing_to_do_says_why_in_one_line(spark, config, capsys: pytest.CaptureFixture[str]) -> None:
    """On a table of one small commit every job has nothing to do (once STATS has run: a
    snapshot without statistics is work for it): its dry run and its run say so and why
    (the rule and its thresholds), in the text title and as `reason`."""
    ref = fresh_ref(config, "idle")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (1, 'a'), (2, 'b')")
    assert in_process(capsys, "stats", str(ref), "--json")[0] == 0
    for spec in registry.JOBS:
        code, out, _ = in_process(capsys, spec.name, str(ref), "--dry-run")
        title = out.splitlines()[0]
        assert code == 0 and title.startswith(f"{spec.name} {ref}: noop, ") and len(title) > len(f"{spec.name} {ref}: noop, ") + 20, out
        code, out, _ = in_process(capsys, spec.name, str(ref), "--json")
        result = json.loads(out)
        assert code == 0 and result["status"] == NOOP and result["reason"] == title.split(": noop, ", 1)[1], (spec.name, result)
