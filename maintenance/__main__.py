"""`python -m maintenance` is the same entry point as the `icemaint` script."""

from maintenance.cli.entry import main_as_module

if __name__ == "__main__":
    main_as_module()
