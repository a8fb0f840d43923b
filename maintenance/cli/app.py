"""What every command shares: the application context (the config, loaded once, on first
use; the logs, set up as a command starts) and the decorator that passes it. Commands
import this, never `cli/main.py`, which imports them to register them.

Light on purpose, as every command module is: `icemaint --help`, `<command> --help` and
`--version` import neither pyiceberg, pyarrow, SQLAlchemy, Spark nor structlog (each
command imports what it needs when it runs)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from maintenance.catalogs import TableRef
    from maintenance.config import Config

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class AppContext:
    """What every command shares: the config (loaded once, on first use) and how to log."""

    config_path: str | None
    log_format: str | None = None
    log_level: str | None = None  # None: off for commands, info for the daemon
    daemon: bool = False
    _config: Config | None = field(default=None, repr=False)
    _logging: bool = field(default=False, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            from maintenance.config import load_config

            self._config = load_config(self.config_path)
        return self._config

    @property
    def state_database(self) -> str:
        """The state database this command reads and writes, its password redacted: said in
        every `--json` answer that read state, so two processes that should share leases can
        be seen to share them."""
        from maintenance.redact import redact_text

        return redact_text(self.config.state_url)

    def table(self, name: str) -> TableRef:
        from maintenance.catalogs import parse_table_ref

        return parse_table_ref(name, self.config)

    def start_logging(self) -> None:
        """The log file under the config's home (the default home when the config cannot
        be read: the command reports that itself) and stderr at the level asked; once."""
        if self._logging:
            return
        from maintenance.config import home_from_env
        from maintenance.logs import configure_logging

        try:
            home = self.config.home
        except Exception:  # noqa: BLE001 - reported when the command needs the config; the log goes to the default home meanwhile
            home = home_from_env()
        configure_logging(log_format=self.log_format, stderr_level=self.log_level or ("info" if self.daemon else "off"),
                          log_file=home / "logs" / "icemaint.log")
        self._logging = True


def pass_app(f: F) -> F:
    """Pass the AppContext as the first argument, its logs set up first (only a command that
    runs needs them: `--help` never gets here)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        app = click.get_current_context().find_object(AppContext)
        assert app is not None, "the icemaint group makes the AppContext"
        app.start_logging()
        return f(app, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
