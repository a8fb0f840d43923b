"""The `icemaint` command line (CONTRACT.md)."""
