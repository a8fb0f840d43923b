"""Java helpers of our own, compiled in the Spark JVM at run time, for work that would
otherwise cross Py4J once per file.

The sources live beside this module (`java/*.java`) and are compiled by Janino, the
compiler Spark itself ships for its generated code, so nothing is built ahead of time and
no JDK is needed where icemaint runs (a JRE is). Janino takes a subset of Java: raw types,
no lambdas. Each JVM compiles them once, on first use, against Iceberg's class loader.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SOURCES = Path(__file__).with_name("java")
PACKAGE = "icemaint"
_lock = threading.Lock()
_loaders: dict[str, tuple[object, JavaObject]] = {}  # helper name -> (the JVM's gateway, the class loader that holds it)


def new_helper(spark: SparkSession, name: str) -> JavaObject:
    """A new instance of helper class `name` (`java/<name>.java`, no-argument constructor)."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    loader = _loader(spark, name)
    lang = jvm(spark).java.lang
    constructor = loader.loadClass(f"{PACKAGE}.{name}").getDeclaredConstructor(gateway.new_array(lang.Class, 0))
    return constructor.newInstance(gateway.new_array(lang.Object, 0))


def _loader(spark: SparkSession, name: str) -> JavaObject:
    """The class loader holding helper `name`, compiled in this JVM (once per gateway: a new
    Spark session after a stopped one is a new JVM)."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    with _lock:
        cached = _loaders.get(name)
        if cached is None or cached[0] is not gateway:
            compiler = jvm(spark).org.codehaus.janino.SimpleCompiler()
            compiler.setParentClassLoader(jvm(spark).org.apache.iceberg.Table._java_lang_class.getClassLoader())
            compiler.cook((SOURCES / f"{name}.java").read_text())
            cached = _loaders[name] = (gateway, compiler.getClassLoader())
        return cached[1]
