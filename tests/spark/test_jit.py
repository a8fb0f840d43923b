"""The driver JVM's C2 thresholds (maintenance/spark/jit.py): the JVM icemaint starts runs
with them, and a user's own value for one of them wins."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from maintenance.config import parse_config
from maintenance.spark.jit import JIT_OPTIONS
from maintenance.spark.jvm import jvm
from maintenance.spark.session import spark_conf


def _vm_option(spark: Any, name: str) -> str:
    """The running JVM's value of a HotSpot option, as the JVM itself reports it."""
    java = jvm(spark)
    bean = java.java.lang.management.ManagementFactory.getPlatformMXBean(java.com.sun.management.HotSpotDiagnosticMXBean._java_lang_class)
    return str(bean.getVMOption(name).getValue())


def test_the_driver_jvm_runs_with_the_raised_c2_thresholds(spark: Any) -> None:
    wanted = dict(option.removeprefix("-XX:").split("=") for option in JIT_OPTIONS)
    assert {name: _vm_option(spark, name) for name in wanted} == wanted
    assert _vm_option(spark, "Tier4InvocationThreshold") != "5000"  # HotSpot 17's default


@pytest.mark.process
def test_a_users_own_threshold_comes_last_so_the_jvm_takes_it(tmp_path: Path) -> None:
    config = parse_config({"home": str(tmp_path), "spark": {"conf": {"spark.driver.extraJavaOptions": "-XX:Tier4InvocationThreshold=7000"}}},
                          source="t", base_dir=tmp_path)
    options = spark_conf(config)["spark.driver.extraJavaOptions"].split()
    named = [o for o in options if o.startswith("-XX:Tier4InvocationThreshold=")]
    assert named == ["-XX:Tier4InvocationThreshold=20000", "-XX:Tier4InvocationThreshold=7000"]
    assert all(o in options for o in JIT_OPTIONS)
    # and HotSpot takes the last of the two (the same java that Spark starts)
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    assert java is not None
    tier4 = [o for o in options if o.startswith("-XX:Tier4")]
    flags = subprocess.run([java, *tier4, "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert re.search(r"\bTier4InvocationThreshold\s+=\s+7000\b", flags)
    assert re.search(r"\bTier4CompileThreshold\s+=\s+60000\b", flags)
