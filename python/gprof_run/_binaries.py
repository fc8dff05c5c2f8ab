"""Where the package's programs are, and running them in place of this process."""

import os
import sys

# The package directory is an install tree of its own: bin/gprof-run, bin/gprof-report and
# lib/gprof-run/libgprof-collector.so, which gprof-run finds relative to itself (docs/install.md). abspath, not
# realpath: in the build tree the .py files are symbolic links into the sources, and bin/ is beside the links.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def binary_path(name: str) -> str:
    """The path of the package's `gprof-run` or `gprof-report` executable."""
    path = os.path.join(PACKAGE_DIR, "bin", name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is missing: this gprof_run package is incomplete (reinstall gprof-run)")
    return path


def exec_binary(name: str, args) -> int:
    """Replaces this Python process by the package's `name` with `args`; returns only when that fails.

    The program gets the environment, the standard streams and the signal dispositions this process was started
    with: Python ignores SIGPIPE and SIGXFSZ for itself, and an ignored signal stays ignored across exec, so they are
    set back to the default first (as subprocess does for its children) -- the profiled program must not notice
    that gprof-run was started through Python.
    """
    try:
        path = binary_path(name)
    except FileNotFoundError as e:
        sys.stderr.write(f"{name}: {e}\n")
        return 127
    import signal

    for sig in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, sig):
            signal.signal(getattr(signal, sig), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(path, [name, *args])
    except OSError as e:
        sys.stderr.write(f"{name}: cannot run {path}: {e.strerror}\n")
    return 127
