"""CONVERT: equality deletes into position deletes (see plan, scan and commit)."""
