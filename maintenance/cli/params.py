"""Click parameter types and options the commands share, light like every command module
(`cli/app.py`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from maintenance.durations import format_duration, parse_budget, parse_duration
from maintenance.errors import UsageError


class Duration(click.ParamType):
    """A duration with its unit (`90s`, `30m`, `12h`, `3d`): seconds, or click's one-line
    error naming the option."""

    name = "duration"

    def __init__(self, *, positive: bool = False) -> None:
        self.positive = positive

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = parse_duration(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)
        if self.positive and seconds <= 0:
            self.fail(f"{value!r} must be longer than 0s", param, ctx)
        return seconds


DURATION = Duration()
POSITIVE_DURATION = Duration(positive=True)


class Budget(click.ParamType):
    """Compute-seconds of job runs per hour: `600` or `10m` (`durations.parse_budget`)."""

    name = "budget"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_budget(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


BUDGET = Budget()


class DaemonSetting(click.Option):
    """A flag of `icemaint daemon` that overrides one key of the config's `daemon:` section;
    its help names the key and the built-in default (read from `DaemonConfig` only when the
    help is shown)."""

    def __init__(self, *args: Any, key: str, **kwargs: Any) -> None:
        super().__init__(*args, default=None, **kwargs)
        self.key = key  # the config's key, `daemon.<key>`

    def get_help_extra(self, ctx: click.Context) -> Any:
        from maintenance.config import DaemonConfig

        extra = super().get_help_extra(ctx)
        default = getattr(DaemonConfig(), self.attribute)
        shown = "none" if default is None else format_duration(default) if self.attribute.endswith("_s") else default
        extra["default"] = f"daemon.{self.key} of the config, else {shown}"
        return extra

    @property
    def attribute(self) -> str:
        """The `DaemonConfig` field it sets (durations are in seconds: `interval_s`)."""
        from maintenance.config import DaemonConfig

        names = {f.name for f in dataclasses.fields(DaemonConfig)}
        return self.key if self.key in names else f"{self.key}_s"
