"""The package's import graph, read from the source (no import is executed): no module of
`maintenance/` reaches itself through imports, counting those inside functions (a circle
"broken" by a function-level import still ties the modules together) and leaving out
`if TYPE_CHECKING:` blocks (annotations only); no command module imports another (what
several commands do lives in `cli/actions.py`); and only `maintenance/spark/` reaches the
JVM (Py4J's gateway, `jvm()`, the Java helpers)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "maintenance"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.module.startswith("maintenance"):
                    found |= {f"{inner.module}.{a.name}" if f"{inner.module}.{a.name}" in modules else inner.module for a in inner.names}
                elif isinstance(inner, ast.Import):
                    found |= {a.name for a in inner.names if a.name.startswith("maintenance")}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_in_the_package() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check above can fail: a planted circle, including one through a function-level import."""
    graph = import_graph()
    graph["maintenance.cli.app"].add("maintenance.cli.main")  # main imports app directly, the commands (which import app) in a function
    assert any({"maintenance.cli.app", "maintenance.cli.main", "maintenance.cli.schedule"} <= set(c) for c in circles(graph))


def test_commands_do_not_import_each_other() -> None:
    commands = {"demo", "inspect", "jobs", "schedule", "state", "ui", "workload"}
    graph = import_graph()
    crossing = {(name, dep) for name in graph if name.split(".")[-1] in commands and name.startswith("maintenance.cli.")
                for dep in graph[name] if dep.startswith("maintenance.cli.") and dep.split(".")[-1] in commands}
    assert crossing == set()


def test_no_test_module_imports_a_test_module_and_no_benchmark_imports_tests() -> None:
    """Shared helpers live in `tests/support/` (and `tests/services/`), so a test module is
    read on its own; what a test module imports from another would run its module's
    fixtures and markers too. Benchmarks import nothing from `tests/`: what both need is in
    the package (`maintenance/workload/`)."""
    tests = PACKAGE.parent / "tests"
    offending = []
    for path in sorted([*tests.rglob("*.py"), *(PACKAGE.parent / "benchmarks").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else [a.name for a in getattr(node, "names", [])] if isinstance(node, ast.Import) else []
            offending += [(path.name, name) for name in names if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]
            if path.is_relative_to(PACKAGE.parent / "benchmarks"):
                offending += [(path.name, name) for name in names if name == "tests" or name.startswith("tests.")]
    assert offending == []


# -- Java only through maintenance/spark/ ----------------------------------------------------
JVM_NAMES = {"jvm", "new_helper"}  # spark/jvm.py's gateway and java_helpers.py's helpers: called only in spark/
JVM_ATTRIBUTES = {"_jvm", "_gateway", "_jsparkSession", "_jsc", "_jdf", "_jc", "_java_lang_class"}  # PySpark's and Py4J's ways into the JVM
JVM_MODULES = ("py4j", "maintenance.spark.java_helpers")


def jvm_reaches(source: str) -> list[str]:
    """Where a module's source reaches the JVM by itself: a call of `jvm()` or `new_helper()`,
    an import of them, of Py4J or of the helpers' module, or one of PySpark's private ways in
    (`spark._jvm`, `sparkContext._gateway`, `spark._jsparkSession`, ...). Calling methods of a
    Java object that a `spark/` function returned is not reaching it: the object is the door's."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in JVM_NAMES:
            found.append(f"line {node.lineno}: {node.func.id}()")
        elif isinstance(node, ast.Attribute) and node.attr in JVM_ATTRIBUTES:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(JVM_MODULES) or any(a.name in JVM_NAMES for a in node.names):
                found.append(f"line {node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith(JVM_MODULES)]
    return found


def test_only_the_spark_folder_reaches_the_jvm() -> None:
    """No module outside `maintenance/spark/` calls `jvm()` or `new_helper()`, imports Py4J, or
    uses PySpark's private handles on the JVM: every Java object is built, and every Java
    helper made, by a function of `spark/` (one Python door per helper: `spark/java/README.md`)."""
    spark = PACKAGE / "spark"
    reaching = {path.relative_to(PACKAGE.parent).as_posix(): found for path in sorted(PACKAGE.rglob("*.py"))
                if not path.is_relative_to(spark) and (found := jvm_reaches(path.read_text()))}
    assert reaching == {}


def test_the_jvm_rule_finds_a_reach() -> None:
    """The check above can fail: each way in, planted."""
    planted = """
from maintenance.spark.jvm import jvm
from maintenance.spark.java_helpers import new_helper
import py4j.java_gateway


def f(spark):
    jvm(spark).java.util.HashMap()
    new_helper(spark, "LiveEntries")
    spark._jvm.java.lang.Long.valueOf("1")
    spark.sparkContext._gateway.new_array(None, 0)
    return spark._jsparkSession
"""
    assert len(jvm_reaches(planted)) == 8
    assert jvm_reaches("def f(table):\n    return table.currentSnapshot().snapshotId()\n") == []
