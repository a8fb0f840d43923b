"""Reading and checking policy files: every error names the file, the line and the reason.

The same checks apply to a table's `icemaint.` properties, which override the chosen
policy key by key (`icemaint.merge.every=30m`, `icemaint.merge.when.delete_ratio=0.05`,
`icemaint.expire.retention.max_snapshot_age=2d`, `icemaint.enabled=false`). A property is
a string and reaches its check as that string, never re-read as YAML: a job option's text
meets the option kind's `parse_text`, exactly as the same text given as a flag does.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from maintenance.durations import parse_duration
from maintenance.errors import ConfigError, UsageError
from maintenance.jobs import registry
from maintenance.jobs.options import (
    FLAG,
    NON_NEGATIVE,
    SIZE,
    OptionCheckError,
    OptionError,
    nested_policy_keys,
    policy_values,
)
from maintenance.policy.model import JobPolicy, Policy, QuietHours, Schedule, Selector
from maintenance.policy.triggers import MEASURES
from maintenance.table.marks import EPOCH_PROPERTY

PROPERTY_PREFIX = "icemaint."
WORKLOAD_PREFIX = "icemaint.workload."
_TOP_KEYS = {"name", "priority", "select", "jobs", "timezone", "description"}
_SELECT_KEYS = {"catalogs", "namespaces", "tables"}
_JOB_KEYS = {"enabled", "when", "every", "cron", "quiet_hours", "spark", "verify"}
_HOURS = re.compile(r"^(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})$")


class PolicyError(ConfigError):
    """A policy file or a table's policy property is invalid (exit 2)."""


class _Where:
    """Where a value came from, for one-line errors: `file:line: path: reason`."""

    def __init__(self, source: str, lines: dict[tuple[str, ...], int], path: tuple[str, ...] = (), key_prefix: str = "") -> None:
        self.source, self.lines, self.path, self.key_prefix = source, lines, path, key_prefix

    def __truediv__(self, key: str) -> _Where:
        return _Where(self.source, self.lines, (*self.path, str(key)), self.key_prefix)

    def error(self, reason: str) -> PolicyError:
        line = self.lines.get(self.path)
        for depth in range(len(self.path), -1, -1):  # nearest located ancestor
            if line is not None:
                break
            line = self.lines.get(self.path[:depth])
        where = f"{self.source}:{line}" if line is not None else self.source
        name = self.key_prefix + ".".join(self.path)
        return PolicyError(f"{where}: {name}: {reason}" if name else f"{where}: {reason}")


def load_policies(folder: Path) -> list[Policy]:
    """Every `*.yaml`/`*.yml` in the folder, highest priority first (then by file name)."""
    if not folder.is_dir():
        raise PolicyError(f"policies folder {folder} does not exist")
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    policies = [load_policy_file(path) for path in files]
    names: dict[str, str] = {}
    for policy in policies:
        if policy.name in names:
            raise PolicyError(f"{policy.source}: policy name '{policy.name}' is also used by {names[policy.name]}")
        names[policy.name] = policy.source
    return sorted(policies, key=lambda p: (-p.priority, p.source))


def load_policy_file(path: Path) -> Policy:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise PolicyError(f"{source}:{line}: not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    raw, lines = _compose(text, source)
    return parse_policy(raw, _Where(source, lines), default_name=path.stem)


def _compose(text: str, source: str) -> tuple[Any, dict[tuple[str, ...], int]]:
    """The YAML document as plain values, and the line of every key path."""
    loader = yaml.SafeLoader(text)
    loader.name = source
    try:
        node = loader.get_single_node()
        lines: dict[tuple[str, ...], int] = {}
        value = _plain(loader, node, (), lines) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise PolicyError(f"{where}: {getattr(exc, 'problem', None) or 'invalid YAML'}") from None
    finally:
        loader.dispose()
    return value, lines


def _plain(loader: yaml.SafeLoader, node: yaml.Node, path: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(loader.construct_object(key_node))
            if key in out:
                raise PolicyError(f"{loader.name}:{key_node.start_mark.line + 1}: duplicate key '{key}'")
            out[key] = _plain(loader, value_node, (*path, key), lines)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(loader, item, (*path, str(i)), lines) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def parse_policy(raw: Any, where: _Where, *, default_name: str) -> Policy:
    if not isinstance(raw, dict):
        raise where.error("a policy must be a mapping with 'select' and 'jobs'")
    _known(raw, _TOP_KEYS, where)
    name = str(raw.get("name") or default_name)
    priority = raw.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise (where / "priority").error("must be an integer")
    timezone = str(raw.get("timezone") or "UTC")
    _check_timezone(timezone, where / "timezone")
    selector = _selector(raw.get("select") or {}, where / "select")
    raw_jobs = raw.get("jobs") or {}
    if not isinstance(raw_jobs, dict):
        raise (where / "jobs").error(f"must be a mapping of job to settings ({', '.join(registry.JOB_NAMES)})")
    jobs = {job: parse_job(job, settings, where / "jobs" / job, timezone) for job, settings in raw_jobs.items()}
    return Policy(name=name, source=where.source, priority=priority, selector=selector, jobs=jobs, raw_jobs=copy.deepcopy(raw_jobs), timezone=timezone,
                  lines=dict(where.lines))


def _selector(raw: Any, where: _Where) -> Selector:
    if not isinstance(raw, dict):
        raise where.error("must be a mapping with catalogs, namespaces, tables (glob lists)")
    _known(raw, _SELECT_KEYS, where)
    globs = {}
    for key in _SELECT_KEYS:
        value = raw.get(key, ["*"])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise (where / key).error("must be a glob or a non-empty list of globs")
        globs[key] = tuple(value)
    return Selector(**globs)


def parse_job(job: str, raw: Any, where: _Where, timezone: str = "UTC") -> JobPolicy:
    if job not in registry.JOB_NAMES:
        raise where.error(f"unknown job (known: {', '.join(registry.JOB_NAMES)})")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise where.error("must be a mapping of settings")
    _known(raw, job_keys(job), where)
    enabled = _bool(raw.get("enabled", True), where / "enabled")
    triggers = _triggers(raw.get("when") or {}, where / "when")
    every = raw.get("every")
    cron = raw.get("cron")
    if every is not None and cron is not None:
        raise where.error("give 'every' or 'cron', not both")
    schedule = Schedule(
        every_s=_duration(every, where / "every") if every is not None else None,
        cron=_cron(cron, where / "cron", timezone) if cron is not None else None,
        quiet_hours=_quiet_hours(raw.get("quiet_hours") or [], where / "quiet_hours"),
        timezone=timezone,
    )
    if not triggers and every is None and cron is None and enabled:
        raise where.error("needs 'when' (health triggers), 'every' or 'cron': otherwise it would run on every cycle")
    spark = raw.get("spark") or {}
    if not isinstance(spark, dict) or not all(str(k).startswith("spark.") for k in spark):
        raise (where / "spark").error("must be a mapping of Spark settings (spark.*)")
    return JobPolicy(job=job, enabled=enabled, triggers=triggers, schedule=schedule, verify=_bool(raw.get("verify", True), where / "verify"),
                     spark={str(k): _text(v) for k, v in spark.items()}, options=_job_options(job, raw, where))


def _triggers(raw: Any, where: _Where) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise where.error("must be a mapping of health measure to threshold")
    triggers = {}
    for name, threshold in raw.items():
        measure = MEASURES.get(name)
        if measure is None:
            raise (where / name).error(f"unknown health measure (known: {', '.join(MEASURES)})")
        if measure.duration:
            triggers[name] = _duration(threshold, where / name)
        elif measure.size:
            triggers[name] = _size(threshold, where / name)
        else:
            triggers[name] = _number(threshold, where / name)
    return triggers


def _job_options(job: str, raw: dict[str, Any], where: _Where) -> Any:
    """The job's typed options from its policy keys, read by the job's own option kinds."""
    spec = registry.job(job)
    for head, allowed in nested_policy_keys(spec.options).items():
        node = raw.get(head)
        if node is None:
            continue
        if not isinstance(node, dict):
            raise (where / head).error("must be a mapping")
        _known(node, allowed, where / head)
    try:
        values, _ = policy_values(spec.options, raw)
    except UsageError as exc:
        raise where.error(str(exc)) from None
    parsed = {}
    for option in spec.option_specs():
        if option.name not in values:
            continue
        try:
            parsed[option.name] = option.kind.parse(values[option.name])
        except OptionError as exc:
            located = where
            for part in (option.policy_key or option.name).split("."):
                located = located / part
            raise located.error(str(exc)) from None
    options = spec.options(**parsed)
    if spec.check_options is not None:
        try:
            spec.check_options(options, False)
        except OptionCheckError as exc:
            located = where
            for part in (next(o.policy_key for o in spec.option_specs() if o.name == exc.option) or exc.option).split("."):
                located = located / part
            raise located.error(f"{exc.reason}; a policy cannot force it") from None
    return options


def job_keys(job: str) -> set[str]:
    """The keys a job's policy mapping may have: the schedule's and the job's own options'."""
    spec = registry.job(job)
    return _JOB_KEYS | {o.policy_key.split(".")[0] for o in spec.option_specs() if o.policy_key} | {o.iceberg for o in spec.option_specs() if o.iceberg and o.policy_key}


def policy_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The table's properties its policy depends on (`policy_for` reads no other): its
    `icemaint.` ones that are not bookkeeping."""
    return {k: v for k, v in properties.items() if k.startswith(PROPERTY_PREFIX) and not _is_bookkeeping(k)}


def overrides_from_properties(properties: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """The table's `icemaint.` properties, and the job settings they spell as nested values."""
    own = policy_properties(properties)
    nested: dict[str, Any] = {}
    for key, value in own.items():
        parts = key[len(PROPERTY_PREFIX) :].split(".")
        if parts[0] in ("enabled", "policy"):
            continue
        if len(parts) >= 2 and parts[1] == "spark":  # spark keys contain dots themselves
            parts = [parts[0], "spark", ".".join(parts[2:])]
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise PolicyError(f"table property {key}: conflicts with another icemaint property")
        node[parts[-1]] = value
    return own, nested


def _is_bookkeeping(key: str) -> bool:
    """Properties under the prefix that icemaint writes itself (the lease epoch, the workload's shape)."""
    return key == EPOCH_PROPERTY or key.startswith(WORKLOAD_PREFIX)


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def property_where(table: str) -> _Where:
    return _Where(f"table {table}", {}, key_prefix=PROPERTY_PREFIX)


def _known(raw: dict[str, Any], allowed: set[str], where: _Where) -> None:
    for key in raw:
        if key not in allowed:
            raise (where / key).error(f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _bool(value: Any, where: _Where) -> bool:
    """A YAML boolean, or a property's `true`/`false` (the option kind's reading)."""
    try:
        return FLAG.parse(value)
    except OptionError as exc:
        raise where.error(str(exc)) from None


def _number(value: Any, where: _Where) -> float:
    """A YAML number, or a property's decimal text (the option kinds' reading)."""
    try:
        return NON_NEGATIVE.parse(value)
    except OptionError:
        raise where.error(f"must be a non-negative number (got {value!r})") from None


def _duration(value: Any, where: _Where) -> float:
    try:
        return parse_duration(value)
    except UsageError as exc:
        raise where.error(str(exc)) from None


def _size(value: Any, where: _Where) -> float:
    try:
        return float(SIZE.parse(value))
    except OptionError as exc:
        raise where.error(str(exc)) from None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cron(value: Any, where: _Where, timezone: str) -> str:
    from apscheduler.triggers.cron import CronTrigger

    if not isinstance(value, str):
        raise where.error("must be a crontab expression such as '0 3 * * *'")
    try:
        CronTrigger.from_crontab(value, timezone=timezone)
    except ValueError as exc:
        raise where.error(f"invalid cron expression {value!r}: {exc}") from None
    return value


def _quiet_hours(value: Any, where: _Where) -> tuple[QuietHours, ...]:
    if isinstance(value, str):  # a table property: comma-separated ranges
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list):
        raise where.error("must be a list of 'HH:MM-HH:MM' ranges")
    ranges = []
    for index, text in enumerate(value):
        match = _HOURS.match(str(text).strip())
        if match is None or int(match[1]) > 23 or int(match[3]) > 24 or int(match[2]) > 59 or int(match[4]) > 59:
            raise (where / str(index)).error(f"not a time range 'HH:MM-HH:MM': {text!r}")
        ranges.append(QuietHours(int(match[1]) * 60 + int(match[2]), int(match[3]) * 60 + int(match[4])))
    return tuple(ranges)


def _check_timezone(name: str, where: _Where) -> None:
    if name.upper() == "UTC":
        return
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise where.error(f"unknown time zone {name!r}") from None
