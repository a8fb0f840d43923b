"""Structured logging: a JSON log file with full detail, and stderr for what the user asked.

CLI commands keep stderr for their one-line errors, so their log lines go to stderr only
from `--log-level` up (default: off); the daemon logs INFO to stderr for the container.
Every line carries the bound context (table, job, run id) via structlog contextvars.

No secret reaches any output: exceptions are rendered as plain tracebacks (never with
local variables, which would show a config's substituted secrets), and every string of
every line, the traceback included, goes through `redact.redact_text` last. The CLI
configures logging before it reads anything (`configure_quiet`), so even an error in
reading the configuration is rendered this way.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from maintenance.redact import redact_value

if TYPE_CHECKING:
    import structlog

# The names the command line offers (`--log-format`, `--log-level`) are here without
# structlog, which is imported only when logging is configured: `icemaint --help` needs
# the names, not the library.
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}
LOG_FORMATS = ("json", "console")


def _shared_processors() -> list[structlog.typing.Processor]:
    import structlog

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def configure_quiet() -> None:
    """Before the configuration is read: nothing on stderr, no log file, but structlog set
    up (its defaults print tracebacks with local variables on stdout)."""
    configure_logging(log_format="json", stderr_level="off", log_file=None)


def default_log_format() -> str:
    return "console" if sys.stderr.isatty() else "json"


def configure_logging(*, log_format: str | None, stderr_level: str, log_file: Path | None) -> None:
    import structlog

    log_format = log_format or default_log_format()
    structlog.configure(
        processors=[*_shared_processors(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(logging.DEBUG)

    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(_LEVELS[stderr_level])
    renderer = (structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback)
                if log_format == "console" else structlog.processors.JSONRenderer())
    stderr.setFormatter(_formatter(renderer))
    root.addHandler(stderr)

    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=20 * 1024 * 1024, backupCount=5)
        except OSError:
            file_handler = None
        if file_handler is not None:
            file_handler.setLevel(logging.INFO)
            file_handler.setFormatter(_formatter(structlog.processors.JSONRenderer()))
            root.addHandler(file_handler)

    # Libraries that chat at INFO on every call.
    for noisy in ("py4j", "py4j.clientserver", "py4j.java_gateway", "apscheduler", "alembic", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    callbacks = logging.getLogger("py4j.clientserver")
    if not any(isinstance(f, _CallbackErrors) for f in callbacks.filters):
        callbacks.addFilter(_CallbackErrors())


class _CallbackErrors(logging.Filter):
    """Py4J logs every exception a Python callback raises at ERROR with its traceback. Our
    callbacks (the fence, `spark/fenced_table.py`) raise on purpose: a refusal, or a commit
    that lost a race, which Iceberg retries. They log what matters themselves."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("There was an exception while executing the Python Proxy")


def _redacted(logger: object, method: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
    return {key: redact_value(value) for key, value in event.items()}


def _formatter(renderer: structlog.typing.Processor) -> structlog.stdlib.ProcessorFormatter:
    import structlog

    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared_processors(),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _redacted,
            renderer,
        ],
    )


def level_names() -> tuple[str, ...]:
    return tuple(_LEVELS)
