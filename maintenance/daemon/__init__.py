"""The scheduler daemon: evaluation on an interval, jobs under leases, metrics, shutdown."""
