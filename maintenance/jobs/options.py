"""Typed job options: declared once per job, read by one parser wherever they come from.

A job's options are a frozen dataclass whose fields are declared with `option(...)`: a
kind (how a value is read and checked), a help text, the policy key it has under
`jobs.<job>` (so also the table property `icemaint.<job>.<key>`), its command-line flag,
and, where Iceberg's own procedure has the same option, Iceberg's name for it (`iceberg`:
`target-file-size-bytes`), accepted as a flag, a policy key and a table property too. The CLI's flags, the policy loader's checks and `icemaint jobs` are all generated
from those declarations, and every value, whether YAML, a table property's string, a
command-line string or a Python value, goes through the same `Kind.parse`; every string
(a property's, a flag's, a quoted YAML value) through the same `Kind.parse_text`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, final

from maintenance.durations import format_duration, parse_duration
from maintenance.errors import UsageError

T = TypeVar("T")
_INTEGER_TEXT = re.compile(r"^\s*[+-]?[0-9]+\s*$")
_NUMBER_TEXT = re.compile(r"^\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*$")
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
    """How values of one kind are read, checked, and shown.

    Every source meets `parse`, which sends a string, whatever carried it, to `parse_text`:
    a table property (always a string), a command-line flag's value, a quoted YAML value.
    So a property and a flag given the same text give the same value or the same error.
    Anything else (YAML's typed scalars and lists, Python values) goes to `parse_value`.
    Each kind's docstring says which strings it takes; a flag given several times (a
    repeatable flag) is a list of strings, read as `Strings` reads a YAML list.
    """

    name: str  # as `icemaint jobs` shows the type

    @final
    def parse(self, value: Any) -> Any:
        return self.parse_text(value) if isinstance(value, str) else self.parse_value(value)

    def parse_text(self, text: str) -> Any:
        raise NotImplementedError

    def parse_value(self, value: Any) -> Any:
        raise NotImplementedError

    def show(self, value: Any) -> Any:
        """A default as people write it (`3d`, `512MiB`)."""
        return value


@dataclass(frozen=True)
class Integer(Kind):
    """An integer of at least `minimum`. Text: decimal digits with an optional sign, spaces
    around allowed (`12`, `017` is 17); not `12.0`, `0x0c` or `1_000`, which a YAML 1.1
    reading of a property would have taken. YAML: an integer, or a whole number (`12.0`)."""

    minimum: int = 0

    def parse_text(self, text: str) -> int:
        if _INTEGER_TEXT.match(text) is None:
            raise self._refuse(text)
        return self.parse_value(int(text))

    def parse_value(self, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            raise self._refuse(value)
        return value

    def _refuse(self, value: Any) -> OptionError:
        return OptionError(f"must be an integer of at least {self.minimum} (got {value!r})")


def _number_text(text: str) -> float | None:
    """A decimal number (`0.5`, `.5`, `2`, `1e-3`); None for anything else, `inf`, `nan`,
    `0x1` and `1_0` included (Python's `float` would take them, a flag would not)."""
    return float(text) if _NUMBER_TEXT.match(text) else None


def _number_value(value: Any) -> float | None:
    """A YAML or Python number; booleans and NaN are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


@dataclass(frozen=True)
class Number(Kind):
    """A real number of at least `minimum` (a health threshold). Text: a decimal number
    (`0.05`, `.5`, `3`, `1e-3`). YAML: a number."""

    minimum: float = 0.0

    def parse_text(self, text: str) -> float:
        return self._check(_number_text(text), text)

    def parse_value(self, value: Any) -> float:
        return self._check(_number_value(value), value)

    def _check(self, number: float | None, value: Any) -> float:
        if number is None or not self.minimum <= number < float("inf"):
            raise OptionError(f"must be a number of at least {self.minimum:g} (got {value!r})")
        return number


@dataclass(frozen=True)
class Fraction(Kind):
    """A share in (0, 1]. Text: a decimal number (`0.5`, `.25`, `1`, `1e-1`). YAML: a number."""

    def parse_text(self, text: str) -> float:
        return self._check(_number_text(text), text)

    def parse_value(self, value: Any) -> float:
        return self._check(_number_value(value), value)

    def _check(self, number: float | None, value: Any) -> float:
        if number is None or not 0 < number <= 1:
            raise OptionError(f"must be a number above 0 and at most 1 (got {value!r})")
        return number


@dataclass(frozen=True)
class Ratio(Kind):
    """A finite number above a bound (e.g. a multiple of a target size, above 1). Text: a
    decimal number. YAML: a number."""

    above: float = 0.0

    def parse_text(self, text: str) -> float:
        return self._check(_number_text(text), text)

    def parse_value(self, value: Any) -> float:
        return self._check(_number_value(value), value)

    def _check(self, number: float | None, value: Any) -> float:
        if number is None or not self.above < number < float("inf"):
            raise OptionError(f"must be a number above {self.above:g} (got {value!r})")
        return number


@dataclass(frozen=True)
class Duration(Kind):
    """Seconds. Text: `90s`, `30m`, `12h`, `3d`, `2w`, `500ms` (a unit is required; only `0`
    may go without). YAML: the same text, or a number of seconds."""

    def parse_text(self, text: str) -> float:
        return self._read(text)

    def parse_value(self, value: Any) -> float:
        number = _number_value(value)
        if number is None:
            raise OptionError(f"not a duration: {value!r} (use e.g. 90s, 30m, 12h, 3d, 2w)")
        return self._read(number)

    def _read(self, value: str | float) -> float:
        try:
            return parse_duration(value)
        except UsageError as exc:
            raise OptionError(str(exc)) from None

    def show(self, value: Any) -> Any:
        return None if value is None else format_duration(value)


@dataclass(frozen=True)
class Size(Kind):
    """Bytes, at least one. Text: a number with an optional unit, `512MiB`, `100GiB`, `64m`
    (single letters are binary units; `kb`, `mb`... decimal) or plain bytes (`1048576`).
    YAML: the same text, or a whole number of bytes."""

    def parse_text(self, text: str) -> int:
        match = _SIZE.match(text)
        size = int(float(match["n"]) * _SIZE_UNITS[(match["unit"] or "b").lower()]) if match else 0
        if size < 1:
            raise self._refuse(text)
        return size

    def parse_value(self, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self._refuse(value)
        return value

    def _refuse(self, value: Any) -> OptionError:
        return OptionError(f"not a size: {value!r} (use e.g. 512MiB, 100GiB, or bytes)")

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
    """True or false. Text: `true` or `false`, in any case (not YAML 1.1's `yes`, `on`...).
    YAML: a boolean. On the command line a boolean flag says true by being there."""

    def parse_text(self, text: str) -> bool:
        word = text.strip().lower()
        if word not in ("true", "false"):
            raise self._refuse(text)
        return word == "true"

    def parse_value(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self._refuse(value)
        return value

    def _refuse(self, value: Any) -> OptionError:
        return OptionError(f"must be true or false (got {value!r})")


@dataclass(frozen=True)
class Strings(Kind):
    """A list of non-empty strings. Text: the items comma-separated, spaces around each
    trimmed (`a, b`); a blank text is the empty list (so a table property can clear a
    policy's list), an empty item between commas (`a,,b`) is an error. YAML: that text, or
    a list whose items are each read as such a text and joined; a flag given several times
    is that list (`--zorder-column a --zorder-column b,c` is `a, b, c`)."""

    def parse_text(self, text: str) -> tuple[str, ...]:
        if not text.strip():
            return ()
        items = tuple(part.strip() for part in text.split(","))
        if not all(items):
            raise OptionError(f"an empty item in {text!r} (items are comma-separated)")
        return items

    def parse_value(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise OptionError(f"must be a list of strings (got {value!r})")
        return tuple(item for text in value for item in self.parse_text(text))


@dataclass(frozen=True)
class Choice(Kind):
    """One of `choices`. Text: the choice as written (spaces around trimmed). YAML: that text."""

    choices: tuple[str, ...] = ()

    def parse_text(self, text: str) -> str:
        if text.strip() not in self.choices:
            raise self._refuse(text)
        return text.strip()

    def parse_value(self, value: Any) -> str:
        raise self._refuse(value)

    def _refuse(self, value: Any) -> OptionError:
        return OptionError(f"must be one of {', '.join(self.choices)} (got {value!r})")


@dataclass(frozen=True)
class Location(Kind):
    """A storage location, as a URI with a scheme (`s3://bucket/prefix/`). Text: that URI,
    spaces around trimmed. YAML: that text."""

    def parse_text(self, text: str) -> str:
        location = text.strip()
        scheme, sep, rest = location.partition("://")
        if not (scheme and sep and rest):
            raise self._refuse(text)
        return location

    def parse_value(self, value: Any) -> str:
        raise self._refuse(value)

    def _refuse(self, value: Any) -> OptionError:
        return OptionError(f"must be a location such as s3://bucket/prefix/ (got {value!r})")


@dataclass(frozen=True)
class Predicate(Kind):
    """A predicate on a table's rows (`region = 3 AND day >= '2026-11-01'`), as pyiceberg's
    expression parser reads it; checked against the table's columns when a plan is made
    (`table/row_filter.py`). Text: the predicate; a blank text is none (every row). YAML:
    that text."""

    def parse_text(self, text: str) -> str | None:
        if not text.strip():
            return None
        from pyiceberg.expressions.parser import parse

        from maintenance.table.row_filter import syntax_error

        try:
            parse(text.strip())
        except Exception as exc:  # noqa: BLE001 (pyparsing's errors: where it stopped is all that matters)
            raise OptionError(syntax_error(text.strip(), exc)) from None
        return text.strip()

    def parse_value(self, value: Any) -> str:
        raise OptionError(f"must be a predicate such as \"region = 3\" (got {value!r})")


INTEGER_AT_LEAST_1 = Integer("integer >= 1", minimum=1)
INTEGER_AT_LEAST_0 = Integer("integer >= 0", minimum=0)
DURATION = Duration("duration")
SIZE = Size("size")
FLAG = Flag("boolean")
STRINGS = Strings("list of strings")
FRACTION = Fraction("fraction (0, 1]")
NON_NEGATIVE = Number("number >= 0")
LOCATION = Location("location")
PREDICATE = Predicate("predicate")


def option(default: Any, kind: Kind, help: str, *, policy_key: str | None | bool = True, flag: str | None | bool = True, repeatable: bool = False,
           metavar: str | None = None, iceberg: str | None = None) -> Any:
    """Declare a job option field. `policy_key` and `flag` default to the field's name
    (`max_delete_files`, `--max-delete-files`); False keeps the option out of policies or
    off the command line. `iceberg`: the same option's name in Iceberg's procedure
    (`rewrite_data_files`), an alias wherever the option is read."""
    declaration = {"kind": kind, "help": help, "policy_key": policy_key, "flag": flag, "repeatable": repeatable, "metavar": metavar, "iceberg": iceberg}
    return dataclasses.field(default=default, metadata={"icemaint.option": declaration})


MEMORY_BUDGET = 256 * 1024**2


def memory_budget_option(holds: str) -> Any:
    """The `memory_budget` option of the jobs that hold a table's file paths (ORPHANS, EXPIRE):
    one default and one meaning. `holds` says what the job keeps within it."""
    return option(MEMORY_BUDGET, SIZE, f"Memory {holds} may take before they move to temporary files on disk (table/key_set.py); "
                  f"the metadata and listings are read streaming whatever the budget.")


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
    iceberg: str | None = None  # Iceberg's name for it: an alias of the policy key, table property and flag

    @property
    def iceberg_flag(self) -> str | None:
        """Iceberg's name as a flag, where it differs from ours."""
        flag = f"--{self.iceberg}" if self.iceberg and self.flag else None
        return flag if flag != self.flag else None

    def to_json(self, job: str) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.kind.name,
            "default": self.kind.show(self.default) if not isinstance(self.default, tuple) else list(self.default),
            "policy_key": f"jobs.{job}.{self.policy_key}" if self.policy_key else None,
            "table_property": f"icemaint.{job}.{self.policy_key}" if self.policy_key else None,
            "flag": self.flag,
            "iceberg_name": self.iceberg,
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
        specs.append(OptionSpec(f.name, raw["kind"], raw["help"], f.default, policy_key, flag, raw["repeatable"], raw["metavar"], raw.get("iceberg")))
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
        alias = raw.get(spec.iceberg) if spec.iceberg else None
        if node is not None and alias is not None:
            raise UsageError(f"'{spec.policy_key}' and '{spec.iceberg}' (Iceberg's name for it) are one option: give one")
        if node is not None or alias is not None:
            values[spec.name] = node if node is not None else alias
        used.add(spec.policy_key.split(".")[0])
        if spec.iceberg:
            used.add(spec.iceberg)
    return values, used


def nested_policy_keys(options_type: type) -> dict[str, set[str]]:
    """Top-level policy key -> the keys allowed below it (for mappings like `retention`)."""
    found: dict[str, set[str]] = {}
    for spec in declared(options_type):
        if spec.policy_key and "." in spec.policy_key:
            head, rest = spec.policy_key.split(".", 1)
            found.setdefault(head, set()).add(rest)
    return found


def where_option() -> Any:
    """`where`: the jobs that can work on the partitions a predicate may touch (`table/row_filter.py`)."""
    return option(None, PREDICATE, "Only the partitions that may hold rows matching this predicate (e.g. \"region = 3\"; "
                  "a predicate on columns no partition comes from selects every partition). Whole files are rewritten.", metavar="PREDICATE")


def partitions_option() -> Any:
    """`--partition PATH` (repeatable): the jobs that can work on part of a table."""
    return option((), STRINGS, "Only this partition, as its path (e.g. region=3); repeatable.", policy_key=False, flag="--partition", repeatable=True,
                  metavar="PATH")
