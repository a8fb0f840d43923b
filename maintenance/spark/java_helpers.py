"""Java helpers of our own, compiled in the Spark JVM at run time, for work that would
otherwise cross Py4J once per file.

The sources live beside this module (`java/*.java`) and are compiled by Janino, the
compiler Spark itself ships for its generated code, so nothing is built ahead of time and
no JDK is needed where icemaint runs (a JRE is). Janino takes a subset of Java: raw types,
no lambdas. Each JVM compiles them once, on first use, against Iceberg's class loader.

Compiling costs (Janino, in a JVM that has just started: 0.05-0.6 s a helper, about 2 s
for all of them), so the classes a compilation made are kept as a jar in a cache folder
(`helper_cache_dir`), named by the digest of what made them: the helper's source, the
pinned Iceberg runtime (its SHA-256) and the Spark version. A later process of the same
install loads the jar instead of compiling; a changed source or a new Iceberg runtime has
another digest, so it is compiled again. When the folder cannot be written, every process
compiles, as before.

Most helpers live in the driver only. One that travels inside Spark's tasks (a table's
FileIO, in the table Iceberg broadcasts) must be loadable where tasks are deserialized: its
compiled classes are also added to the Spark context as a jar (`on_executors`), which every
executor, local or remote, loads before it runs a task.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from maintenance.spark.jars import ARTIFACTS, SPARK_RUNTIME
from maintenance.spark.jvm import JavaObject, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SOURCES = Path(__file__).with_name("java")
PACKAGE = "icemaint"
CACHE_ENV = "ICEMAINT_HELPER_CACHE"
log = structlog.get_logger(__name__)
_lock = threading.Lock()
_compiled: dict[str, tuple[object, JavaObject, Path | None, dict[str, bytes]]] = {}  # name -> (the JVM's gateway, its class loader, its cached jar, its classes when compiled here)


def new_helper(spark: SparkSession, name: str, *, on_executors: bool = False) -> JavaObject:
    """A new instance of helper class `name` (`java/<name>.java`, no-argument constructor);
    `on_executors`: its classes are shipped to Spark's executors too (see the module docstring)."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    loader, jar, classes = _loader(spark, name)
    if on_executors:
        _ship(spark, name, jar, classes)
    lang = jvm(spark).java.lang
    constructor = loader.loadClass(f"{PACKAGE}.{name}").getDeclaredConstructor(gateway.new_array(lang.Class, 0))
    return constructor.newInstance(gateway.new_array(lang.Object, 0))


def helper_cache_dir() -> Path:
    """Where compiled helpers are kept: `$ICEMAINT_HELPER_CACHE`, else icemaint's folder in
    the user's cache (`$XDG_CACHE_HOME`, else `~/.cache`)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "icemaint" / "java-helpers"


def helper_digest(spark: SparkSession, name: str) -> str:
    """What a helper's classes depend on: its source, the Iceberg runtime, Spark's version."""
    runtime = next(a.sha256 for a in ARTIFACTS if a.name == SPARK_RUNTIME)
    digest = hashlib.sha256()
    for part in ((SOURCES / f"{name}.java").read_text(), runtime, spark.version):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _loader(spark: SparkSession, name: str) -> tuple[JavaObject, Path | None, dict[str, bytes]]:
    """A class loader holding helper `name` in this JVM (once per gateway, which is one per
    JVM: a Spark context stopped and started again keeps both), the cached jar it was loaded
    from or written to (None when the cache cannot be written), and the classes when this
    process compiled them."""
    gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
    with _lock:
        cached = _compiled.get(name)
        if cached is None or cached[0] is not gateway:
            parent = jvm(spark).org.apache.iceberg.Table._java_lang_class.getClassLoader()
            jar = helper_cache_dir() / f"{name}-{helper_digest(spark, name)}.jar"
            if jar.is_file():
                urls = gateway.new_array(jvm(spark).java.net.URL, 1)
                urls[0] = jvm(spark).java.io.File(str(jar)).toURI().toURL()
                loader = jvm(spark).java.net.URLClassLoader(urls, parent)
                classes: dict[str, bytes] = {}
            else:
                compiler = jvm(spark).org.codehaus.janino.SimpleCompiler()
                compiler.setParentClassLoader(parent)
                compiler.cook((SOURCES / f"{name}.java").read_text())
                loader = compiler.getClassLoader()
                classes = {str(k): bytes(v) for k, v in dict(compiler.getBytecodes()).items()}
                written = _keep(jar, classes)
                jar = jar if written else None  # type: ignore[assignment]
            cached = _compiled[name] = (gateway, loader, jar, classes)
        return cached[1], cached[2], cached[3]


def _keep(jar: Path, classes: dict[str, bytes]) -> bool:
    """Write the compiled classes as `jar`, atomically (another process may write the same);
    False when the folder cannot be written (every process then compiles)."""
    try:
        jar.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{jar.stem}-", suffix=".jar", dir=jar.parent)
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w") as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
            for class_name, bytecode in classes.items():
                archive.writestr(class_name.replace(".", "/") + ".class", bytecode)
        os.replace(temporary, jar)
        return True
    except OSError as exc:
        log.debug("compiled helper not kept", jar=str(jar), error=str(exc))
        return False


def _ship(spark: SparkSession, name: str, jar: Path | None, classes: dict[str, bytes]) -> None:
    """Add helper `name`'s classes to the Spark context as a jar, unless the context has it
    already (a context stopped and started again keeps the JVM, not its jars): the cached
    jar, or one written to the context's own file root (which Spark deletes when it stops)
    from the compiler's classes."""
    context = spark.sparkContext._jsc.sc()  # type: ignore[attr-defined]
    jar_name = f"icemaint-{name}.jar"
    with _lock:
        if any(url.endswith(f"/{jar_name}") for url in str(context.listJars().mkString("\n")).splitlines()):
            return
        shipped = Path(jvm(spark).org.apache.spark.SparkFiles.getRootDirectory()) / jar_name
        if jar is not None:
            shipped.write_bytes(jar.read_bytes())
        else:
            with zipfile.ZipFile(shipped, "w") as archive:
                archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
                for class_name, bytecode in classes.items():
                    archive.writestr(class_name.replace(".", "/") + ".class", bytecode)
        context.addJar(str(shipped))
