"""Structured logging: a JSON log file with full detail, and stderr for what the user asked.

CLI commands keep stderr for their one-line errors, so their log lines go to stderr only
from `--log-level` up (default: off); the daemon logs INFO to stderr for the container.
Every line carries the bound context (table, job, run id) via structlog contextvars.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}
LOG_FORMATS = ("json", "console")

_shared_processors: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def default_log_format() -> str:
    return "console" if sys.stderr.isatty() else "json"


def configure_logging(*, log_format: str | None, stderr_level: str, log_file: Path | None) -> None:
    log_format = log_format or default_log_format()
    structlog.configure(
        processors=[*_shared_processors, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
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
    renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()) if log_format == "console" else structlog.processors.JSONRenderer()
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


def _formatter(renderer: structlog.typing.Processor) -> structlog.stdlib.ProcessorFormatter:
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared_processors,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )


def level_names() -> tuple[str, ...]:
    return tuple(_LEVELS)
