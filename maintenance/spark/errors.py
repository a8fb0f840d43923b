"""The boundary where Java exceptions become one-line icemaint errors.

A Py4J error carries a whole Java stack trace; users get its root cause in one line
and the log keeps everything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from maintenance.errors import IcemaintError, SparkJobError
from maintenance.redact import redact_text

log = structlog.get_logger(__name__)


def java_error_message(exc: BaseException) -> str:
    """The innermost Java cause of a Py4J or PySpark error, as one line."""
    java_exc = getattr(exc, "java_exception", None)
    if java_exc is not None:
        try:
            cause = java_exc
            while cause.getCause() is not None and cause.getCause() != cause:
                cause = cause.getCause()
            text = str(cause.toString())
        except Exception:  # the gateway itself may be gone
            text = str(exc)
    else:
        text = getattr(exc, "desc", None) or str(exc)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if any("Return Message: Traceback" in line for line in lines):
        # An error raised in one of our Python callbacks: its last line says what it was.
        return redact_text(lines[-1])
    return redact_text(lines[0] if lines else type(exc).__name__)


def is_java_exception(exc: BaseException, java_class_suffix: str) -> bool:
    """Whether a Py4J error's Java exception (or a cause) is of the named class."""
    java_exc = getattr(exc, "java_exception", None)
    seen = 0
    while java_exc is not None and seen < 20:
        try:
            if str(java_exc.getClass().getName()).endswith(java_class_suffix):
                return True
            nxt = java_exc.getCause()
        except Exception:
            return False
        if nxt is None or nxt == java_exc:
            return False
        java_exc, seen = nxt, seen + 1
    return False


# Java exceptions that mean a connection failed or broke, not that a request was refused.
_CONNECTION_FAILURES = (
    "java.net.ConnectException", "java.net.SocketException", "java.net.SocketTimeoutException", "java.net.UnknownHostException",
    "java.net.NoRouteToHostException", "java.io.EOFException", "java.sql.SQLTransientConnectionException",
    "java.sql.SQLNonTransientConnectionException", "org.apache.thrift.transport.TTransportException",
    "org.apache.hc.client5.http.HttpHostConnectException", "org.apache.hc.client5.http.ConnectTimeoutException",
    "org.apache.iceberg.jdbc.UncheckedInterruptedException",
)


def connection_failure(exc: BaseException) -> str | None:
    """The Java exception in the cause chain of a Py4J error that says a connection failed
    (refused, reset, timed out, closed mid-answer), as one line; None if there is none."""
    java_exc = getattr(exc, "java_exception", None)
    for _ in range(20):
        if java_exc is None:
            return None
        try:
            name = str(java_exc.getClass().getName())
            if name in _CONNECTION_FAILURES or (name.startswith("java.sql.") and "connection" in str(java_exc.getMessage() or "").lower()):
                return redact_text(str(java_exc.toString()).splitlines()[0])
            cause = java_exc.getCause()
        except Exception:  # the gateway itself may be gone
            return None
        if cause is None or cause == java_exc:
            return None
        java_exc = cause
    return None


@contextmanager
def java_errors(action: str) -> Iterator[None]:
    """Run Spark/Iceberg calls; a Java failure becomes SparkJobError('<action>: <cause>')."""
    try:
        yield
    except IcemaintError:
        raise
    except Exception as exc:
        if type(exc).__module__.startswith(("py4j", "pyspark")):
            log.error("java call failed", action=action, exc_info=True)
            failure = connection_failure(exc)
            where = _object_store_endpoints() if failure is not None else ""
            raise SparkJobError(f"{action}: {failure + where if failure is not None else java_error_message(exc)}") from exc
        raise


def _object_store_endpoints() -> str:
    """The s3a endpoints Spark is configured with (per bucket, `session.s3a_settings`), to
    name where a connection failed: Java's own message does not (` (s3a endpoints: bucket
    lake http://minio:9000)`); empty when none is set or Spark is gone."""
    try:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            return ""
        found = spark._jsc.hadoopConfiguration().getValByRegex(r"^fs\.s3a\.(bucket\.[^.]+\.)?endpoint$")
        endpoints = sorted((str(k), str(v)) for k, v in dict(found).items())
    except Exception:  # noqa: BLE001 (the gateway may be gone: the message stays as Java gave it)
        return ""
    if not endpoints:
        return ""
    named = [f"bucket {key.split('.')[3]} {value}" if key.startswith("fs.s3a.bucket.") else f"default {value}" for key, value in endpoints]
    return redact_text(f" (s3a endpoints: {', '.join(named)})")
