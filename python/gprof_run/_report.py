"""gprof_run.report(): the rows of `gprof-report NAME --format json`, from the installed gprof-report itself, so
the numbers are the command's numbers (one implementation of every report, docs/report-schema.md)."""

import os
import warnings

from ._binaries import binary_path
from ._frames import GprofRunWarning, to_table_rows


class ReportError(RuntimeError):
    """gprof-report refused the request (unknown report, missing run directory, bad option)."""


def run_inputs(run) -> list:
    """A run directory, a trace file, or a list of them, as the paths gprof-report takes (str)."""
    if isinstance(run, (str, bytes, os.PathLike)):
        return [os.fsdecode(run)]
    return [os.fsdecode(r) for r in run]


def option_arguments(options) -> list:
    """gprof-report's command-line options from keyword arguments: `time_range="1ms:2ms"` -> `--time-range=1ms:2ms`,
    `cuda_nested_driver_calls=True` -> `--cuda-nested-driver-calls`... (the option's own name, underscores for dashes; a list
    repeats the option; False or None leaves it out). gprof-report's --help is the list of what exists."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args.extend(f"{flag}={v}" for v in value)
        else:
            args.append(f"{flag}={value}")
    return args


def report_document(run, name: str, **options) -> dict:
    """The whole JSON document of `gprof-report NAME RUN --format json` (schema: docs/report-schema.md)."""
    import json  # here, not at the top: `import gprof_run` and the console scripts stay quick
    import subprocess

    cmd = [binary_path("gprof-report"), "--report", name, "--format", "json", *option_arguments(options), "--",
           *run_inputs(run)]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or "reports" not in doc:
        message = proc.stderr.strip() or f"gprof-report exited with status {proc.returncode}"
        raise ReportError(message.removeprefix("gprof-report: error: "))
    # Exit status 2 with a document: a trace was damaged; the document says what in "warnings", as for every run.
    for w in doc.get("warnings", []):
        warnings.warn(w, GprofRunWarning, stacklevel=3)
    return doc


def report(run, name: str, **options):
    """The rows of one report, as `gprof-report NAME RUN --format json` gives them.

    run: a run directory, a trace file, or a list of them (several ranks' run directories merge, as in gprof-report).
    name: a report: summary, cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, nvtx_sum, ... (gprof-report
    --help lists them; nsys's names work too).
    options: gprof-report's options by name, e.g. process=1234, time_range="1s:2s", kernel_filter="gemm",
    cuda_nested_driver_calls=True.

    Returns a pandas DataFrame (columns in the report's order) when pandas is installed, else a list of dicts.
    Times are ns, sizes bytes, as in the JSON. Warnings (damaged traces, dropped records) are GprofRunWarning.
    """
    doc = report_document(run, name, **options)
    tables = doc["reports"]
    if len(tables) != 1:
        raise ReportError(f"gprof-report returned {len(tables)} reports for '{name}'")
    table = next(iter(tables.values()))
    if not isinstance(table, dict) or "rows" not in table:
        raise ReportError(f"'{name}' is not a table report (use report_document() for its whole JSON)")
    return to_table_rows(table["rows"], table.get("columns"))
