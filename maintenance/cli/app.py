"""What every command shares: the application context (the config, loaded once, on first
use) and the decorator that passes it. Commands import this, never `cli/main.py`, which
imports them to register them."""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from maintenance.catalogs import TableRef, parse_table_ref
from maintenance.config import Config, load_config


@dataclass
class AppContext:
    """What every command shares: the config (loaded once, on first use)."""

    config_path: str | None
    _config: Config | None = field(default=None, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config

    def table(self, name: str) -> TableRef:
        return parse_table_ref(name, self.config)


pass_app = click.make_pass_decorator(AppContext)
