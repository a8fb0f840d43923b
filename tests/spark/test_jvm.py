"""`KeptPerJvm`: one value per key and per JVM's gateway, a bounded number kept."""

from __future__ import annotations

from types import SimpleNamespace

from maintenance.spark.jvm import KeptPerJvm


def _session(gateway: object) -> SimpleNamespace:
    """Just what `KeptPerJvm` looks at: the session's gateway (an identity, no JVM behind it)."""
    return SimpleNamespace(sparkContext=SimpleNamespace(_gateway=gateway))


def test_a_value_is_made_once_per_key_and_gateway_and_forgotten_when_full() -> None:
    kept: KeptPerJvm[str] = KeptPerJvm(2)
    made: list[str] = []

    def make(value: str):  # type: ignore[no-untyped-def]
        return lambda: made.append(value) or value

    first, second = _session(object()), _session(object())
    assert kept.get(first, "a", make("a1")) == "a1"
    assert kept.get(first, "a", make("a2")) == "a1"  # kept
    assert kept.get(second, "a", make("a3")) == "a3"  # another JVM's gateway: made again
    assert kept.get(second, "b", make("b1")) == "b1"
    assert kept.get(second, "c", make("c1")) == "c1"  # full: everything forgotten, then kept
    assert kept.get(second, "a", make("a4")) == "a4"
    assert made == ["a1", "a3", "b1", "c1", "a4"]
