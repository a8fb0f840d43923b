"""Py4J's name lookups, each answered once per JVM.

`spark._jvm.org.apache.iceberg.SchemaParser.toJson(...)` walks the name one part at a time,
a round trip each (`org`, `org.apache`, `org.apache.iceberg`, the class, then its member),
and in the JVM every part that is not a class is first tried as one: in every jar of the
class path (pyspark brings 252) and under every import of the view. An Iceberg class's
member is looked up through the parent class loader's jars before Spark's loader finds it.
PySpark's own calls go the same way (`functions.lit` resolves `functions` through the
imports). Measured on 2 busy cores: 1-3 ms a lookup, about 150 lookups in a MERGE of one
partition with its verification (0.3 s of round trips), where the answers never change.

What a name resolves to does not change while the JVM runs: a package stays a package, a
class a class, a static method a method. So the answers are kept, per gateway client (one
per JVM): the package or class a part resolved to, and a class's member when it is a
method or a nested class. A static field's value is never kept (it may change), nor is a
failure (an error is raised again each time). The one answer that could go stale: Py4J
calls any name it cannot find a package, so a class added to the JVM after its name was
asked for (a jar added at run time) would still be a package; icemaint reaches the classes
it adds at run time (its Java helpers) through their own class loader, never by name. The proxies kept hold only a name and the
client, and every call sends its command on the calling thread's own connection, as
Py4J's own proxies do, so one proxy serves every thread.

`install` replaces the three lookup methods of Py4J's `JVMView`, `JavaPackage` and
`JavaClass` once per process, and leaves them as they are (logged at debug) if this Py4J
has not the methods it expects.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)

_installed = False
_lock = threading.Lock()
_answers: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], Any]] = weakref.WeakKeyDictionary()  # gateway client -> kept answers


def install() -> bool:
    """Keep Py4J's lookup answers from now on (once per process); whether they are kept."""
    global _installed
    with _lock:
        if _installed:
            return True
        try:
            from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
        except ImportError:
            return False
        originals = {kind: kind.__dict__.get("__getattr__") for kind in (JVMView, JavaPackage, JavaClass)}
        if any(method is None for method in originals.values()):
            log.debug("py4j lookups not kept", reason="this Py4J has other lookup methods")
            return False
        kept_kinds = (JavaPackage, JavaClass, JavaMember)
        JVMView.__getattr__ = _keeping(originals[JVMView], lambda view, name: ("view", view._id, name), kept_kinds)  # type: ignore[method-assign]
        JavaPackage.__getattr__ = _keeping(originals[JavaPackage], lambda package, name: ("package", package._jvm_id, package._fqn, name),  # type: ignore[method-assign]
                                           kept_kinds)
        JavaClass.__getattr__ = _keeping(originals[JavaClass], lambda java_class, name: ("class", java_class._fqn, name), kept_kinds)  # type: ignore[method-assign]
        _installed = True
        return True


def _keeping(lookup: Callable[[Any, str], Any], key: Callable[[Any, str], tuple[str, ...]], kept_kinds: tuple[type, ...]) -> Callable[[Any, str], Any]:
    """`lookup` whose answers of `kept_kinds` (proxies of packages, classes and methods) are kept per gateway client."""

    def kept_lookup(self: Any, name: str) -> Any:
        if name.startswith("__"):
            return lookup(self, name)  # Python's own probes (magic members): Py4J answers them without the JVM
        answers = _answers_of(self._gateway_client)
        where = key(self, name)
        found = answers.get(where)
        if found is None:
            found = lookup(self, name)
            if isinstance(found, kept_kinds):
                answers[where] = found
        return found

    return kept_lookup


def _answers_of(client: Any) -> dict[tuple[str, ...], Any]:
    answers = _answers.get(client)
    if answers is None:
        with _lock:
            answers = _answers.setdefault(client, {})
    return answers
