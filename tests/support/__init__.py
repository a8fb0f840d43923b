"""Helpers the tests share: no test module imports another (they import these)."""
