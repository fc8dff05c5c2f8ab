"""gprof-run from Python: profile a program, and read what it recorded in a notebook.

    import gprof_run
    gprof_run.report("run", "cuda_gpu_kern_sum")      # the rows of `gprof-report cuda_gpu_kern_sum run --format json`
    gprof_run.events("run", "kernel")                 # every kernel: start, end, stream, correlation, name, ...

Both return pandas DataFrames when pandas is installed (lists / arrays otherwise). The commands `gprof-run` and
`gprof-report` (also `python -m gprof_run`) come with this package. docs/python.md has a worked example.
"""

from ._events import event_columns, event_kinds, events
from ._frames import GprofRunWarning
from ._report import ReportError, report, report_document

__all__ = ["report", "report_document", "events", "event_kinds", "event_columns", "GprofRunWarning",
           "ReportError", "binary_path"]

from ._binaries import binary_path


def __getattr__(name):
    # The version is read from the compiled module only when asked for: importing gprof_run loads no extension.
    if name == "__version__":
        from . import _reader

        return _reader.version
    raise AttributeError(f"module 'gprof_run' has no attribute {name!r}")
