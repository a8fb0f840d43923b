"""When the driver JVM's optimising compiler (C2) takes a method: later than HotSpot's defaults.

A job started as its own process (the CLI, a cron run) runs its first minute in a cold JVM,
and on a small machine the JIT competes with the job for the cores. Measured on a 2-core
machine (a verified MERGE of the 3M-event CDC table, SeaweedFS REST + S3, one CLI
process): the JVM spent 58 CPU-s, of which 24 went to the C2 compiler threads and 20 to
Spark's task threads; the C2 time was spread over some 2,600 compilations (Java
serialisation, Spark's closure cleaner, Avro manifest readers, Parquet, the AWS SDK...),
with no one method above 1.7 s, so no single method can be left out. Asking for four times
the calls and loop iterations before C2 takes a method (C1's profiled code runs meanwhile)
compiles only what is really hot early: the same MERGE took 34.0 s instead of 37.0 s
(medians of three, interleaved); stopping at C1 entirely was about as fast there but leaves
a long job's hot loops unoptimised for good, which this does not: a method hot enough
reaches these counts within seconds and gets the same C2 code as before.

Only when C2 compiles changes, never what a job computes. A user's own `-XX:Tier4...`
options come after these in the JVM's command line, and HotSpot takes the last.
"""

from __future__ import annotations

# HotSpot 17's defaults are 5000, 600, 15000 and 40000.
JIT_OPTIONS = (
    "-XX:Tier4InvocationThreshold=20000",
    "-XX:Tier4MinInvocationThreshold=2400",
    "-XX:Tier4CompileThreshold=60000",
    "-XX:Tier4BackEdgeThreshold=160000",
)


def java_option() -> str:
    """The driver's JIT options, as one string for `spark.driver.extraJavaOptions`."""
    return " ".join(JIT_OPTIONS)
