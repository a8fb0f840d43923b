"""Errors the CLI turns into one line on stderr and an exit code (README, "Command line").

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


class TableOptionError(IcemaintError):
    """A job option that does not fit a table (a `where` naming a column it lacks, an output
    spec id it does not have): the user's error on the command line (exit 2), but in a cycle
    one table's problem, not the cycle's (a policy applies to tables that differ)."""

    exit_code = EXIT_USAGE


class PredicateError(TableOptionError):
    """A `where` predicate that does not parse or does not fit a table."""


class CatalogUnavailableError(IcemaintError):
    """The catalog could not be reached; a retry later may succeed."""


class UnreadableMetadataError(IcemaintError):
    """A metadata file the table's snapshot lists (manifest list, manifest) cannot be read:
    the table is damaged or its storage is unreachable. One table's problem, never the
    cycle's: the daemon reports it and goes on with the other tables."""


class SparkJobError(IcemaintError):
    """A Spark or Iceberg Java call failed; the message is the root cause, one line."""


class FlinkJobError(IcemaintError):
    """The Flink writer's job failed or did not finish in time (`workload cdc --writer
    flink`); the message is one line, the job's log folder has the rest."""


class SparkStartError(SparkJobError):
    """Spark could not start (its JVM, its context): the process's dependency, not the
    table's. The job that needed it did none of its work; the message is one line."""


_MISCONFIGURED = (
    "does not exist",  # PostgreSQL: role or database
    "password authentication failed",
    "access denied",  # MariaDB/MySQL
    "unknown database",
    "file is not a database",  # SQLite: the path names something else
    "not an error",  # SQLite on a file it cannot read as a database
)


def misconfigured(message: str) -> bool:
    """Whether a database error says the configuration is wrong (a role, a database, a
    password, a file that is not a database) rather than that the server is unreachable:
    the first is exit 2 and retrying cannot help; the second is exit 1 and may pass."""
    text = message.lower()
    return any(needle in text for needle in _MISCONFIGURED)


class ConflictError(IcemaintError):
    """A concurrent commit changed what a job planned on; nothing landed and it can be replanned."""
