"""Typed job options: declared once per job, read by one parser wherever they come from.

A job's options are a frozen dataclass whose fields are declared with `option(...)`: a
kind (how a value is read and checked), a help text, the policy key it has under
`jobs.<job>` (so also the table property `icemaint.<job>.<key>`) and its command-line
flag. The CLI's flags, the policy loader's checks and `icemaint jobs` are all generated
from those declarations, and every value, whether YAML, a table property's string, a
command-line string or a Python value, goes through the same `Kind.parse`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from maintenance.durations import format_duration, parse_duration
from maintenance.errors import UsageError

T = TypeVar("T")
_SIZE = re.compile(r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>b|kib|mib|gib|tib|kb|mb|gb|tb|k|m|g|t)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "k": 1024, "kib": 1024, "kb": 1000, "m": 1024**2, "mib": 1024**2, "mb": 1000**2, "g": 1024**3, "gib": 1024**3,
               "gb": 1000**3, "t": 1024**4, "tib": 1024**4, "tb": 1000**4}


class OptionError(ValueError):
    """A value an option cannot take; the caller says where it came from."""


class OptionCheckError(UsageError):
    """Options that are each valid but unfit together or for this run (a job's
    `check_options`); `option` names the field to point at, `hint` what a user may do."""

    def __init__(self, option: str, reason: str, hint: str = "") -> None:
        super().__init__(f"{reason}; {hint}" if hint else reason)
        self.option, self.reason = option, reason


@dataclass(frozen=True)
class Kind:
    """How values of one kind are read, checked, and shown."""

    name: str  # as `icemaint jobs` shows the type

    def parse(self, value: Any) -> Any:
        raise NotImplementedError

    def show(self, value: Any) -> Any:
        """A default as people write it (`3d`, `512MiB`)."""
        return value


@dataclass(frozen=True)
class Integer(Kind):
    minimum: int = 0

    def parse(self, value: Any) -> int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            raise OptionError(f"must be an integer of at least {self.minimum} (got {value!r})")
        return value


def _as_number(value: Any) -> float | None:
    """A real number from a YAML, property or flag value (booleans and NaN are not numbers)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number


@dataclass(frozen=True)
class Fraction(Kind):
    """A share in (0, 1]."""

    def parse(self, value: Any) -> float:
        number = _as_number(value)
        if number is None or not 0 < number <= 1:
            raise OptionError(f"must be a number above 0 and at most 1 (got {value!r})")
        return number


@dataclass(frozen=True)
class Ratio(Kind):
    """A number above a bound (e.g. a multiple of a target size, above 1)."""

    above: float = 0.0

    def parse(self, value: Any) -> float:
        number = _as_number(value)
        if number is None or not self.above < number < float("inf"):
            raise OptionError(f"must be a number above {self.above:g} (got {value!r})")
        return number


@dataclass(frozen=True)
class Duration(Kind):
    """Seconds, written `90s`, `30m`, `12h`, `3d`, `2w` (a bare number is seconds)."""

    def parse(self, value: Any) -> float:
        try:
            return parse_duration(value)
        except UsageError as exc:
            raise OptionError(str(exc)) from None

    def show(self, value: Any) -> Any:
        return None if value is None else format_duration(value)


@dataclass(frozen=True)
class Size(Kind):
    """Bytes, written `512MiB`, `100GiB`, `64m` (binary units) or as a plain number."""

    def parse(self, value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        match = _SIZE.match(str(value)) if isinstance(value, (str, float)) else None
        if match is None or float(match["n"]) <= 0:
            raise OptionError(f"not a size: {value!r} (use e.g. 512MiB, 100GiB, or bytes)")
        return int(float(match["n"]) * _SIZE_UNITS[(match["unit"] or "b").lower()])

    def show(self, value: Any) -> Any:
        if value is None:
            return None
        for unit in ("TiB", "GiB", "MiB", "KiB"):
            scale = _SIZE_UNITS[unit.lower()]
            if value % scale == 0:
                return f"{value // scale}{unit}"
        return value


@dataclass(frozen=True)
class Flag(Kind):
    def parse(self, value: Any) -> bool:
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if not isinstance(value, bool):
            raise OptionError(f"must be true or false (got {value!r})")
        return value


@dataclass(frozen=True)
class Strings(Kind):
    """A list of non-empty strings; one string may hold several, comma-separated (table
    properties are strings)."""

    def parse(self, value: Any) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
            raise OptionError(f"must be a list of strings (got {value!r})")
        found = tuple(part.strip() for item in items for part in item.split(",") if part.strip())
        return found


@dataclass(frozen=True)
class Choice(Kind):
    choices: tuple[str, ...] = ()

    def parse(self, value: Any) -> str:
        if value not in self.choices:
            raise OptionError(f"must be one of {', '.join(self.choices)} (got {value!r})")
        return str(value)


INTEGER_AT_LEAST_1 = Integer("integer >= 1", minimum=1)
DURATION = Duration("duration")
SIZE = Size("size")
FLAG = Flag("boolean")
STRINGS = Strings("list of strings")
FRACTION = Fraction("fraction (0, 1]")


@dataclass(frozen=True)
class Declaration:
    """What `option()` records on a field."""

    kind: Kind
    help: str
    policy_key: str | None  # under jobs.<job>; None: command line only
    flag: str | None  # None: not on the command line
    repeatable: bool = False
    metavar: str | None = None


def option(default: Any, kind: Kind, help: str, *, policy_key: str | None | bool = True, flag: str | None | bool = True, repeatable: bool = False,
           metavar: str | None = None) -> Any:
    """Declare a job option field. `policy_key` and `flag` default to the field's name
    (`max_delete_files`, `--max-delete-files`); False keeps the option out of policies or
    off the command line."""
    declaration = {"kind": kind, "help": help, "policy_key": policy_key, "flag": flag, "repeatable": repeatable, "metavar": metavar}
    return dataclasses.field(default=default, metadata={"icemaint.option": declaration})


@dataclass(frozen=True)
class OptionSpec:
    """One option of one job, as everything that reads options sees it."""

    name: str  # the field
    kind: Kind
    help: str
    default: Any
    policy_key: str | None
    flag: str | None
    repeatable: bool
    metavar: str | None = None

    def to_json(self, job: str) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.kind.name,
            "default": self.kind.show(self.default) if not isinstance(self.default, tuple) else list(self.default),
            "policy_key": f"jobs.{job}.{self.policy_key}" if self.policy_key else None,
            "table_property": f"icemaint.{job}.{self.policy_key}" if self.policy_key else None,
            "flag": self.flag,
            "help": self.help,
        }


def declared(options_type: type) -> list[OptionSpec]:
    """The options a job's dataclass declares, in field order."""
    specs = []
    for f in dataclasses.fields(options_type):
        raw = f.metadata.get("icemaint.option")
        if raw is None:
            continue
        policy_key = f.name if raw["policy_key"] is True else (raw["policy_key"] or None)
        flag = "--" + f.name.replace("_", "-") if raw["flag"] is True else (raw["flag"] or None)
        specs.append(OptionSpec(f.name, raw["kind"], raw["help"], f.default, policy_key, flag, raw["repeatable"], raw["metavar"]))
    return specs


def parse_options(options_type: type[T], values: Mapping[str, Any], *, source: str = "option") -> T:
    """Build a job's options from values keyed by field name (None means the default)."""
    specs = {s.name: s for s in declared(options_type)}
    unknown = sorted(set(values) - set(specs))
    if unknown:
        raise UsageError(f"{source} '{unknown[0]}' is not an option of this job (known: {', '.join(specs) or 'none'})")
    parsed = {}
    for name, value in values.items():
        if value is None:
            continue
        try:
            parsed[name] = specs[name].kind.parse(value)
        except OptionError as exc:
            raise UsageError(f"{source} {specs[name].flag or name}: {exc}") from None
    return options_type(**parsed)


def policy_values(options_type: type, raw: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """From a job's policy mapping, the option values (by field name) and the top-level
    keys they used; nested policy keys (`retention.max_snapshot_age`) are walked."""
    values: dict[str, Any] = {}
    used: set[str] = set()
    for spec in declared(options_type):
        if spec.policy_key is None:
            continue
        node: Any = raw
        for part in spec.policy_key.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is not None:
            values[spec.name] = node
        used.add(spec.policy_key.split(".")[0])
    return values, used


def nested_policy_keys(options_type: type) -> dict[str, set[str]]:
    """Top-level policy key -> the keys allowed below it (for mappings like `retention`)."""
    found: dict[str, set[str]] = {}
    for spec in declared(options_type):
        if spec.policy_key and "." in spec.policy_key:
            head, rest = spec.policy_key.split(".", 1)
            found.setdefault(head, set()).add(rest)
    return found


def partitions_option() -> Any:
    """`--partition PATH` (repeatable): the jobs that can work on part of a table."""
    return option((), STRINGS, "Only this partition, as its path (e.g. region=3); repeatable.", policy_key=False, flag="--partition", repeatable=True,
                  metavar="PATH")
