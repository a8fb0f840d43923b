"""Maintenance jobs and the runner that gives each one a lease, a fence and a run record."""
