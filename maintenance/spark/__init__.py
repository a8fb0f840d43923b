"""Spark and the Iceberg Java API, reached from Python through PySpark's JVM gateway."""
