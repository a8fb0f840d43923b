"""The `icemaint` command line (README, "Command line"; job options in docs/cli.md)."""
