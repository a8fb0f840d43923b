"""`python -m tests.support.interrupted_in_c`: the CLI's entry under `-m`, interrupted while
C code runs Python (`PyRun_String`, as compiled modules do while they import), the way a
Ctrl-C at start-up can land (`tests/cli/test_entry.py`)."""

from __future__ import annotations

import ctypes

from maintenance.cli import entry


def _import_interrupted_in_c() -> None:
    run_string = ctypes.pythonapi.PyRun_String
    run_string.restype = ctypes.py_object
    run_string.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
    try:
        run_string(b"raise KeyboardInterrupt('SIGINT')", 257, {}, {})  # 257: Py_file_input
    except KeyboardInterrupt:
        entry.interrupted()


if __name__ == "__main__":
    entry.main = _import_interrupted_in_c
    entry.main_as_module()
