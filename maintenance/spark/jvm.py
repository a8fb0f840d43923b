"""Small typed doors into Iceberg's Java API over the Py4J gateway.

Python ints cross the gateway as Integer when small, so records with long fields are
built from files on disk (their size and metrics read by Java), never field by field.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from maintenance.catalogs import TableRef
from maintenance.spark.errors import java_errors

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

JavaObject = Any  # a py4j JavaObject; the gateway is untyped
T = TypeVar("T")


def jvm(spark: SparkSession) -> Any:
    return spark._jvm  # type: ignore[attr-defined]


def load_java_table(spark: SparkSession, ref: TableRef) -> JavaObject:
    """The Iceberg `Table` behind a Spark catalog name, fresh from the catalog."""
    with java_errors(f"load {ref}"):
        return jvm(spark).org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, ref.spark_name)  # type: ignore[attr-defined]


def int_array(spark: SparkSession, values: list[int]) -> JavaObject:
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    array = gateway.new_array(jvm(spark).int, len(values))
    for index, value in enumerate(values):
        array[index] = value
    return array


def java_items(collection: JavaObject) -> list[JavaObject]:
    """A Java collection's elements, read by index from its array. Py4J iterates a collection
    by calling `next()` until Java throws, and PySpark converts that exception before Py4J
    ends the loop: a dozen isInstanceOf round trips, and class lookups, at the end of every
    loop (20-30 ms on 2 busy cores)."""
    items = collection.toArray()
    return [items[i] for i in range(len(items))]


def string_array(spark: SparkSession, values: Sequence[str]) -> JavaObject:
    """A Java `String[]` of `values`."""
    array = spark.sparkContext._gateway.new_array(jvm(spark).java.lang.String, len(values))  # type: ignore[attr-defined]
    for index, value in enumerate(values):
        array[index] = value
    return array


def java_map(spark: SparkSession, values: Mapping[Any, Any]) -> JavaObject:
    """A `java.util.HashMap` of `values` (keys and values as Py4J converts them)."""
    found = jvm(spark).java.util.HashMap()
    for key, value in values.items():
        found.put(key, value)
    return found


def format_version(spark: SparkSession, table: JavaObject) -> int:
    """The Java table's format version."""
    return int(jvm(spark).org.apache.iceberg.TableUtil.formatVersion(table))


def java_long(spark: SparkSession, value: int) -> JavaObject:
    """A java.lang.Long, for API calls whose long parameter would get an Integer."""
    return jvm(spark).java.lang.Long.valueOf(str(value))


def singleton(spark: SparkSession, class_name: str) -> JavaObject:
    """The instance a class's static no-argument `get()` returns (Iceberg's JVM-wide registries:
    `ScanTaskSetManager`, `SparkTableCache`, `FileRewriteCoordinator`), found by reflection
    once per gateway: Py4J cannot reach a static method whose name an instance method shares
    (`get()` beside `get(String)`), and the lookup takes about ten round trips, three of them
    for every file group a rewrite writes."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    found = _SINGLETONS.setdefault(gateway, {})
    if class_name not in found:
        java_class = getattr(jvm(spark), class_name)._java_lang_class
        lang = jvm(spark).java.lang
        found[class_name] = java_class.getMethod("get", gateway.new_array(lang.Class, 0)).invoke(None, gateway.new_array(lang.Object, 0))
    return found[class_name]


_SINGLETONS: weakref.WeakKeyDictionary[Any, dict[str, JavaObject]] = weakref.WeakKeyDictionary()  # gone with their gateway (a stopped Spark)


class KeptPerJvm(Generic[T]):
    """Values that belong to one JVM (Java objects, or Python objects wrapping them), made
    once per key and kept beside the gateway they were made through: a value is handed out
    only through that very gateway (compared by identity, as `java_helpers` keeps its
    compiled helpers), so a new JVM never gets an old one's objects. At most `kept` are
    kept; when full, all are forgotten. Made outside the lock: two threads may both make a
    value, and the last one kept wins (values must be interchangeable)."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._values: dict[Hashable, tuple[object, T]] = {}
        self._lock = threading.Lock()

    def get(self, spark: SparkSession, key: Hashable, make: Callable[[], T]) -> T:
        gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
        with self._lock:
            found = self._values.get(key)
        if found is not None and found[0] is gateway:
            return found[1]
        value = make()
        with self._lock:
            if len(self._values) >= self._kept:
                self._values.clear()
            self._values[key] = (gateway, value)
        return value
