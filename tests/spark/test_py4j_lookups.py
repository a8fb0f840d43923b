"""Py4J's name lookups, answered once per JVM (`spark/py4j_lookups.py`), on the real gateway."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from py4j.protocol import Py4JError

from maintenance.spark import py4j_lookups


@contextmanager
def _commands(spark: Any) -> Iterator[list[str]]:
    """Every command this thread's calls send to the JVM meanwhile (its first four lines:
    command, sub-command or target, and names)."""
    client = spark.sparkContext._gateway._gateway_client
    sent: list[str] = []
    original = client.send_command

    def counting(command: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(" ".join(command.split("\n")[:4]))
        return original(command, *args, **kwargs)

    client.send_command = counting
    try:
        yield sent
    finally:
        del client.send_command


def test_a_class_and_its_static_method_are_looked_up_once(spark: Any) -> None:
    assert py4j_lookups.install()
    jvm = spark._jvm
    assert str(jvm.org.apache.iceberg.types.Types.LongType.get()) == "long"  # looked up (now or earlier in the run)
    with _commands(spark) as sent:
        assert str(jvm.org.apache.iceberg.types.Types.LongType.get()) == "long"
        assert int(jvm.java.lang.Math.max(3, 7)) == 7
        assert int(jvm.java.lang.Math.max(4, 2)) == 4
    lookups = [c for c in sent if c.startswith("r ")]
    static_calls = [c for c in sent if c.startswith("c z:")]
    assert lookups == [c for c in lookups if "Math" in c]  # only Math's first use looked anything up
    assert len(lookups) <= 4 and len(static_calls) == 3


def test_fields_and_failures_are_asked_for_every_time(spark: Any) -> None:
    """A static field's value may change, and a member that does not exist raises each time:
    neither answer is kept."""
    py4j_lookups.install()
    jvm = spark._jvm
    with _commands(spark) as sent:
        assert int(jvm.java.lang.Integer.MAX_VALUE) == 2**31 - 1
        assert int(jvm.java.lang.Integer.MAX_VALUE) == 2**31 - 1
    assert sum("MAX_VALUE" in c for c in sent) == 2
    for _ in range(2):
        with _commands(spark) as sent, pytest.raises(Py4JError):
            jvm.java.lang.Math.noSuchMemberHere(1)
        assert any("noSuchMemberHere" in c for c in sent)
