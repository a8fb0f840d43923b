"""Errors the CLI turns into one line on stderr and an exit code (CONTRACT.md).

Everything a user can get wrong (usage, config, policy, unknown table or catalog)
exits 2; a job that failed or was fenced, or a service that is down, exits 1.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class IcemaintError(Exception):
    """Base of the errors icemaint reports to its user in one line."""

    exit_code = EXIT_FAILED


class UsageError(IcemaintError):
    exit_code = EXIT_USAGE


class ConfigError(IcemaintError):
    exit_code = EXIT_USAGE


class UnknownCatalogError(IcemaintError):
    exit_code = EXIT_USAGE


class UnknownTableError(IcemaintError):
    exit_code = EXIT_USAGE


class UnknownSnapshotError(IcemaintError):
    exit_code = EXIT_USAGE


class CatalogUnavailableError(IcemaintError):
    """The catalog could not be reached; a retry later may succeed."""


class SparkJobError(IcemaintError):
    """A Spark or Iceberg Java call failed; the message is the root cause, one line."""


class ConflictError(IcemaintError):
    """A concurrent commit changed what a job planned on; nothing landed and it can be replanned."""
