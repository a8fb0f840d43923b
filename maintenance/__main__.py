"""`python -m maintenance` is the same entry point as the `icemaint` script."""

from maintenance.cli.entry import main

if __name__ == "__main__":
    main()
