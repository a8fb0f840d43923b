"""Policies: which jobs each table gets, when, and with which settings (see policies/README.md)."""
