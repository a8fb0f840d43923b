"""The option parser every source of options shares (`jobs/options.py`): flags, policy keys,
table properties and Iceberg's names of the same options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef
from maintenance.cli.jobs import job_command, options_from_flags
from maintenance.errors import UsageError
from maintenance.jobs import registry
from maintenance.jobs.expire.options import ExpireOptions
from maintenance.jobs.options import (
    DURATION,
    SIZE,
    STRINGS,
    Choice,
    Duration,
    Flag,
    Fraction,
    Integer,
    Kind,
    Location,
    OptionError,
    OptionSpec,
    Predicate,
    Ratio,
    Size,
    Strings,
)
from maintenance.jobs.spec import JobSpec
from maintenance.policy.loader import PolicyError, load_policy_file
from maintenance.policy.resolve import policy_for
from tests.support.cli import in_process


def test_option_kinds_read_yaml_values_property_strings_and_flags_alike() -> None:
    assert DURATION.parse("3d") == DURATION.parse(259200) == 259200.0
    assert SIZE.parse("512MiB") == SIZE.parse(536870912) == 536870912
    assert STRINGS.parse("a, b") == STRINGS.parse(["a", "b"]) == ("a", "b")
    with pytest.raises(OptionError, match="not a duration"):
        DURATION.parse("soon")
    with pytest.raises(OptionError, match="needs a unit: '5' could be 5s, 5m, 5h or 5d"):
        DURATION.parse("5")  # written text: `--older-than 5` is not silently five seconds
    assert DURATION.parse("0") == DURATION.parse(5) - 5 == 0.0


def test_job_options_from_raw_values_and_their_errors() -> None:
    expire = registry.job("expire")
    assert expire.parse_options({"max_snapshot_age": "2d", "checkpoint_keys": "a,b"}) == ExpireOptions(172800.0, None, ("a", "b"))
    with pytest.raises(UsageError, match="--retain-last: must be an integer of at least 1"):
        expire.parse_options({"min_snapshots_to_keep": "0"})
    with pytest.raises(UsageError, match="not an option of this job"):
        registry.job("merge").parse_options({"retention": "1d"})
    orphans = registry.job("orphans")
    with pytest.raises(UsageError, match="below 1 hour"):
        orphans.check_options(orphans.parse_options({"older_than": "10m"}), False)
    orphans.check_options(orphans.parse_options({"older_than": "10m"}), True)


def test_icebergs_option_names_are_aliases_everywhere_an_option_is_read() -> None:
    """`target-file-size-bytes` as a policy key, a table property (the same mapping) and a
    flag; giving both names of one option is refused; `icemaint jobs` shows the mapping."""
    from maintenance.jobs.docs import jobs_json
    from maintenance.jobs.options import policy_values
    from maintenance.policy.loader import _Where as Where
    from maintenance.policy.loader import parse_job

    compact = registry.job("compact")
    values, _ = policy_values(compact.options, {"target-file-size-bytes": "64MiB", "min-input-files": 3, "delete-ratio-threshold": 0.4})
    parsed = compact.parse_options(values)
    assert (parsed.target_file_size, parsed.min_input_files, parsed.delete_ratio_threshold) == (64 * 2**20, 3, 0.4)
    job = parse_job("compact", {"every": "1h", "max-concurrent-file-group-rewrites": 2, "max-file-group-size-bytes": "1GiB"}, Where("p.yaml", {}))
    assert (job.options.max_concurrent_groups, job.options.max_group_bytes) == (2, 2**30)
    with pytest.raises(UsageError, match="one option: give one"):
        policy_values(compact.options, {"target_file_size": "1MiB", "target-file-size-bytes": "2MiB"})
    shown = {o["name"]: o["iceberg_name"] for j in jobs_json()["jobs"] if j["name"] == "compact" for o in j["options"]}
    assert shown["target_file_size"] == "target-file-size-bytes" and shown["strategy"] is None


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
