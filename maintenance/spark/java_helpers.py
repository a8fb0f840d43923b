"""Java helpers of our own, compiled in the Spark JVM at run time, for work that would
otherwise cross Py4J once per file.

The sources live beside this module (`java/*.java`) and are compiled by Janino, the
compiler Spark itself ships for its generated code, so nothing is built ahead of time and
no JDK is needed where icemaint runs (a JRE is). Janino takes a subset of Java: raw types,
no lambdas. Each JVM compiles them once, on first use, against Iceberg's class loader.

Most helpers live in the driver only. One that travels inside Spark's tasks (a table's
FileIO, in the table Iceberg broadcasts) must be loadable where tasks are deserialized: its
compiled classes are also added to the Spark context as a jar (`on_executors`), which every
executor, local or remote, loads before it runs a task.
"""

from __future__ import annotations

import threading
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SOURCES = Path(__file__).with_name("java")
PACKAGE = "icemaint"
_lock = threading.Lock()
_compiled: dict[str, tuple[object, JavaObject]] = {}  # helper name -> (the JVM's gateway, Janino's compiler that holds it)


def new_helper(spark: SparkSession, name: str, *, on_executors: bool = False) -> JavaObject:
    """A new instance of helper class `name` (`java/<name>.java`, no-argument constructor);
    `on_executors`: its classes are shipped to Spark's executors too (see the module docstring)."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    compiler = _compiler(spark, name)
    if on_executors:
        _ship(spark, name, compiler)
    loader = compiler.getClassLoader()
    lang = jvm(spark).java.lang
    constructor = loader.loadClass(f"{PACKAGE}.{name}").getDeclaredConstructor(gateway.new_array(lang.Class, 0))
    return constructor.newInstance(gateway.new_array(lang.Object, 0))


def _compiler(spark: SparkSession, name: str) -> JavaObject:
    """Janino's compiler holding helper `name`, compiled in this JVM (once per gateway, which
    is one per JVM: a Spark context stopped and started again keeps both)."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    with _lock:
        cached = _compiled.get(name)
        if cached is None or cached[0] is not gateway:
            compiler = jvm(spark).org.codehaus.janino.SimpleCompiler()
            compiler.setParentClassLoader(jvm(spark).org.apache.iceberg.Table._java_lang_class.getClassLoader())
            compiler.cook((SOURCES / f"{name}.java").read_text())
            cached = _compiled[name] = (gateway, compiler)
        return cached[1]


def _ship(spark: SparkSession, name: str, compiler: JavaObject) -> None:
    """Add helper `name`'s compiled classes to the Spark context as a jar, unless the context
    has it already (a context stopped and started again keeps the JVM, not its jars). The jar
    is written to the context's own file root, which Spark deletes when it stops."""
    context = spark.sparkContext._jsc.sc()  # type: ignore[attr-defined]
    jar_name = f"icemaint-{name}.jar"
    with _lock:
        if any(url.endswith(f"/{jar_name}") for url in str(context.listJars().mkString("\n")).splitlines()):
            return
        jar = Path(jvm(spark).org.apache.spark.SparkFiles.getRootDirectory()) / jar_name
        with zipfile.ZipFile(jar, "w") as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
            for class_name, bytecode in dict(compiler.getBytecodes()).items():
                archive.writestr(class_name.replace(".", "/") + ".class", bytes(bytecode))
        context.addJar(str(jar))
