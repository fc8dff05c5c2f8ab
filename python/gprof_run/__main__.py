"""`python -m gprof_run ...` is `gprof-run ...`; the installed `gprof-run` and `gprof-report` commands start here.

Each replaces the Python process by the package's executable (no Python process stays between the shell and the
profiled program), so exit status, signals and standard streams are the executable's own.
"""

import sys

from ._binaries import exec_binary


def main() -> int:
    """gprof-run: profile a program (`gprof-run --help`)."""
    return exec_binary("gprof-run", sys.argv[1:])


def report_main() -> int:
    """gprof-report: reports on a run directory (`gprof-report --help`)."""
    return exec_binary("gprof-report", sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
