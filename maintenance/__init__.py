"""icemaint: maintenance and compaction for Apache Iceberg merge-on-read tables."""

__version__ = "0.1.0"
