"""The job contract as users see it: `icemaint jobs`, the generated reference, every counter
described, and the same parser behind a flag, a policy key and a table property."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef
from maintenance.cli.jobs import job_command, options_from_flags
from maintenance.jobs import registry
from maintenance.jobs.counters import undocumented
from maintenance.jobs.options import Choice, Duration, Flag, Fraction, Integer, Kind, Location, OptionSpec, Predicate, Ratio, Size, Strings
from maintenance.jobs.outcome import COMMITTED, NOOP, PLANNED
from maintenance.jobs.reference import jobs_markdown
from maintenance.jobs.runner import run_job
from maintenance.jobs.spec import JobSpec
from maintenance.policy.loader import PolicyError, load_policy_file
from maintenance.policy.resolve import policy_for
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.file_checks import local, plant
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


# -- one parser: every option of every job, as a flag, a policy key and a table property ----
REF = TableRef("local", ("tests",), "contract")
OPTIONS = [(spec, option) for spec in registry.JOBS for option in spec.option_specs()]


def samples(kind: Kind) -> tuple[list[str], list[str]]:
    """Valid and invalid texts of a kind, derived from its own bounds so a new option is
    covered as soon as it is declared; a new kind fails here until it gives its samples.
    The invalid ones are invalid whether YAML reads them as text or as a typed scalar."""
    if isinstance(kind, Integer):
        low = kind.minimum
        return [str(low), f" {low + 41} ", f"+{low + 1}", f"0{low + 16}"], [str(low - 1), f"{low + 1}.5", "many", ""]
    if isinstance(kind, Duration):
        return ["90m", "2h", "5400s", " 3d "], ["soon", "-5", "5 parsecs", ""]
    if isinstance(kind, Size):
        return ["512MiB", "1048576", "64m", "1.5KiB"], ["0", "-1", "0.5", "lots", ""]
    if isinstance(kind, Fraction):
        return ["0.5", ".25", "1", "1e-1"], ["0", "1.5", "inf", "half", ""]
    if isinstance(kind, Ratio):
        return [f"{kind.above + 0.5:g}", f" {kind.above + 2:g} "], [f"{kind.above:g}", "inf", "x", ""]
    if isinstance(kind, Flag):
        return ["true", "FALSE"], ["maybe", "2", ""]
    if isinstance(kind, Strings):
        return ["a", "a,b", " a , b ", "123", ""], ["a,,b", "a,"]
    if isinstance(kind, Choice):
        return [*kind.choices, f" {kind.choices[0]} "], ["bogus", kind.choices[0].upper() + "!", ""]
    if isinstance(kind, Location):
        return ["s3://bucket/inventory/", " s3://b/x/manifest.json ", "gs://b/p"], ["bucket/inventory", "s3://", "://x", "", "12"]
    if isinstance(kind, Predicate):
        return ["region = 3", " a > 1 AND b < 2 ", "x IN (1, 2)", ""], ["= = 3", "region >", "12"]
    pytest.fail(f"no sample values for the kind {type(kind).__name__}: add them to samples()")


def policy_text(job: str = "", key: str = "", literal: str = "") -> str:
    """A policy giving every job a schedule, and `job` the option `key` as the YAML `literal`."""
    lines = ["name: p", "jobs:"]
    for name in registry.JOB_NAMES:
        lines += [f"  {name}:", "    every: 1h"]
        if name == job:
            *heads, leaf = key.split(".")
            lines += ["    " + "  " * depth + f"{head}:" for depth, head in enumerate(heads)]
            lines.append("    " + "  " * len(heads) + f"{leaf}: {literal}")
    return "\n".join(lines) + "\n"


def from_policy(tmp_path: Path, spec: JobSpec, option: OptionSpec, literal: str) -> Any:
    path = tmp_path / "p.yaml"
    path.write_text(policy_text(spec.name, option.policy_key or "", literal))
    return getattr(load_policy_file(path).jobs[spec.name].options, option.name)


def from_property(tmp_path: Path, spec: JobSpec, option: OptionSpec, text: str) -> Any:
    path = tmp_path / "base.yaml"
    path.write_text(policy_text())
    table = policy_for(REF, {f"icemaint.{spec.name}.{option.policy_key}": text}, [load_policy_file(path)])
    return getattr(table.jobs[spec.name].options, option.name)


def from_flags(spec: JobSpec, option: OptionSpec, args: list[str]) -> Any:
    """The option's value as the job's command reads `args` (click's parsing, then the CLI's)."""
    context = job_command(spec).make_context(spec.name, [str(REF), *args])
    names = {o.name for o in spec.option_specs()}
    return getattr(options_from_flags(spec, {k: v for k, v in context.params.items() if k in names}), option.name)


def flag_args(option: OptionSpec, text: str) -> list[str] | None:
    """`text` as the flag's arguments; None where a flag cannot carry it (a boolean flag
    only says true by being there)."""
    assert option.flag is not None
    if isinstance(option.kind, Flag):
        return [option.flag] if text.strip().lower() == "true" else None
    return [option.flag, text]


@pytest.mark.parametrize(("spec", "option"), OPTIONS, ids=[f"{spec.name}.{option.name}" for spec, option in OPTIONS])
def test_a_flag_a_policy_key_and_a_table_property_share_one_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str], config,
                                                                   spec: JobSpec, option: OptionSpec) -> None:
    """Every option of every registered job: the same text as a flag, a table property and
    a (quoted) YAML value gives the same typed value, which YAML also takes as a typed
    scalar or list; a bad text is refused by all three in one line naming its source."""
    valid, invalid = samples(option.kind)
    compared = 0
    for text in valid:
        found = {}
        if option.flag is not None and (args := flag_args(option, text)) is not None:
            found["flag"] = from_flags(spec, option, args)
            if option.repeatable and "," in text:  # a flag given once per item
                found["flags"] = from_flags(spec, option, [arg for part in text.split(",") for arg in (option.flag, part)])
        if option.policy_key is not None:
            found["property"] = from_property(tmp_path, spec, option, text)
            found["yaml text"] = from_policy(tmp_path, spec, option, json.dumps(text))
            typed = found["property"]
            found["yaml typed"] = from_policy(tmp_path, spec, option, json.dumps(list(typed) if isinstance(typed, tuple) else typed))
        assert len(set(found.values())) <= 1, (text, found)
        compared += len(found)
    assert compared, "no source could give this option a value"
    for text in invalid:
        if option.flag is not None and (args := flag_args(option, text)) is not None:
            code, _, err = in_process(capsys, spec.name, str(REF), *args)
            assert code == 2 and err.startswith(f"icemaint: error: option {option.flag}: ") and err.count("\n") == 1, (text, err)
        if option.policy_key is not None:
            with pytest.raises(PolicyError) as refused:
                from_property(tmp_path, spec, option, text)
            assert f"table {REF}: icemaint.{spec.name}.{option.policy_key}: " in str(refused.value) and "\n" not in str(refused.value)
            for literal in (json.dumps(text), text) if text else (json.dumps(text),):  # a bare `key:` is YAML's null: the default
                with pytest.raises(PolicyError) as refused:
                    from_policy(tmp_path, spec, option, literal)
                assert str(refused.value).startswith(f"{tmp_path / 'p.yaml'}:") and f"jobs.{spec.name}.{option.policy_key}: " in str(refused.value), (literal, refused.value)


def test_every_counter_a_job_reports_is_described(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=800, commits=3, update_ratio=0.3, delete_ratio=0.05)
    plant(local(f"{config.catalogs['local'].warehouse}/tests") / ref.name / "data" / "left-behind.parquet", days_old=5)
    options = {"expire": {"max_snapshot_age": 0}, "orphans": {"older_than": 86400}}
    for spec in registry.JOBS:
        for dry_run in (True, False):
            result = run_job(config, ref, spec.name, options.get(spec.name), dry_run=dry_run)
            assert result.status in ((PLANNED, NOOP) if dry_run else (COMMITTED, NOOP)), (spec.name, result.error)
            assert undocumented(result.counters, spec.counters) == [], (spec.name, result.counters)


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


def test_each_counter_lives_where_the_rule_says() -> None:
    """`jobs/counters.py`'s rule, read from the source: a shared counter is spelled in two
    jobs' folders or in a module outside every job's folder (which several jobs run); a
    job's own counter is spelled in no other job's folder and in no shared module, and is
    not also shared."""
    from maintenance.jobs.counters import COUNTERS as SHARED

    jobs_dir = REPO / "maintenance" / "jobs"
    sources = {path: path.read_text() for path in jobs_dir.rglob("*.py") if path.name != "counters.py"}

    def homes(counter: str) -> set[str]:
        """Each job folder, or `shared`, whose code spells the counter."""
        found = set()
        for path, text in sources.items():
            if f'"{counter}"' in text or f"'{counter}'" in text or f"{counter}=" in text:
                parts = path.relative_to(jobs_dir).parts
                found.add(parts[0] if len(parts) > 1 and parts[0] in registry.JOB_NAMES else "shared")
        return found

    misplaced = [(name, sorted(homes(name))) for name in SHARED if len(homes(name)) == 1 and homes(name) != {"shared"}]
    assert misplaced == [], f"shared counters only one job reports: move them to its counters.py: {misplaced}"
    for spec in registry.JOBS:
        for name in spec.counters:
            assert name not in SHARED, (spec.name, name)
            assert homes(name) <= {spec.name}, (spec.name, name, homes(name))
