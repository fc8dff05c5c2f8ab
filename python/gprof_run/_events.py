"""gprof_run.events(): the raw records of a run, one kind at a time, column by column.

The extension module (_reader, C++) reads the traces with gprof-run's own reader and selects records as
gprof-report does, so sums over these columns equal the reports' figures.
"""

import warnings

from ._frames import GprofRunWarning, to_columns
from ._report import run_inputs


def _reader():
    from . import _reader as module  # the compiled module; imported on first use only

    return module


def _as_list(value, kind):
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return [kind(v) for v in value]
    return [kind(value)]


def event_kinds() -> list:
    """The kinds events() reads: kernel, memcpy, memset, api_call, nvtx, sync, memory, ... (every record kind of the
    trace format, by the name its documentation gives it)."""
    return list(_reader().event_kinds())


def event_columns(kind: str) -> list:
    """The columns events(run, kind) has, in order."""
    return list(_reader().event_columns(kind))


def events(run, kind: str, *, columns=None, process=None, device=None, time_range=None, clock_offset=None,
           cuda_nested_driver_calls=False, output="auto"):
    """Every record of one kind in a run, column-wise.

    run: a run directory, a trace file, or a list of them.
    kind: one of event_kinds(): "kernel", "memcpy", "memset", "api_call", "nvtx", "sync", "memory", ...
    columns: the columns to build (default all, see event_columns(kind)); fewer columns, less memory.
    process, device: a pid / device number or a list of them (gprof-report's --process / --device).
    time_range: "A:B" on the run axis, units ns/us/ms/s (gprof-report's --time-range).
    clock_offset: "HOST=NS" or a list of them (gprof-report's --clock-offset).
    cuda_nested_driver_calls: keep the driver calls the CUDA runtime makes itself (left out by default, as in the
    reports).
    output: "auto" (pandas if installed, else numpy, else python), "pandas", "numpy" or "python".

    Every kind has pid and host, then the record's fields in the trace format's order (docs/trace-format.md).
    Times (start, end, timestamp) are int64 ns on the run axis the reports use (0 = the earliest session start of
    the run); end is -1 for an NVTX range that never ended. Texts (names, domains) and enumerations (copy_kind, ...)
    are categorical. Rows come in trace file order, each trace in recording order: sort by start for a timeline.
    Damaged traces, unreadable files and dropped records are GprofRunWarning warnings, as gprof-report prints them.
    """
    result = _reader().read_events(
        run_inputs(run), kind, None if columns is None else list(columns), _as_list(process, int), _as_list(device, int),
        time_range or "", _as_list(clock_offset, str), bool(cuda_nested_driver_calls))
    for w in result["warnings"]:
        warnings.warn(w, GprofRunWarning, stacklevel=2)
    return to_columns(result["columns"], output)
