"""gprof_run's Python reader against gprof-report: the same numbers from the same runs.

For every run given: gprof_run.events() grouped and summed here must give, row for row, what
`gprof-report -r cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_sum
--format json RUN` says (instances, total, min, max); gprof_run.report() must return exactly the JSON's rows;
and the output shapes (python lists, numpy arrays, a DataFrame) must hold the same values.

Usage: python check_reader.py --gprof-report PATH RUN...   (gprof_run importable from sys.path)
The expected side comes from running the given gprof-report directly, never from gprof_run.
"""

import argparse
import collections
import importlib.util
import json
import math
import os
import subprocess
import sys
import warnings

import gprof_run

REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum",
           "cuda_gpu_sum"]
# nsys's operation names of the reports (report/model/aggregate.cpp memop_nsys_name), by copy kind.
MEMCPY_OPERATION = {"HtoD": "[CUDA memcpy Host-to-Device]", "DtoH": "[CUDA memcpy Device-to-Host]",
                    "DtoD": "[CUDA memcpy Device-to-Device]", "HtoH": "[CUDA memcpy Host-to-Host]",
                    "PtoP": "[CUDA memcpy Peer-to-Peer]"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def expected_document(gprof_report, run):
    proc = subprocess.run([gprof_report, "-r", ",".join(REPORTS), "--format", "json", run], capture_output=True,
                          text=True, check=False)
    return json.loads(proc.stdout)


class Stat:
    def __init__(self):
        self.count = 0
        self.total = 0
        self.min = None
        self.max = None

    def add(self, value):
        self.count += 1
        self.total += value
        self.min = value if self.min is None else min(self.min, value)
        self.max = value if self.max is None else max(self.max, value)


def group(keys, values):
    stats = collections.defaultdict(Stat)
    for k, v in zip(keys, values):
        stats[k].add(v)
    return stats


def durations(ev):
    return [e - s for s, e in zip(ev["start"], ev["end"])]


def compare(run, report_name, rows, key_of_row, count_key, stats, what, total_key="total_time_ns",
            min_key="min_ns", max_key="max_ns"):
    """Every row of the report has a group with its count/total/min/max, and every group a row."""
    seen = set()
    for row in rows:
        key = key_of_row(row)
        if key is None:
            continue
        seen.add(key)
        s = stats.get(key)
        if not check(s is not None, f"{run}: {report_name} row {key!r} has no {what} events"):
            continue
        got = (s.count, s.total, s.min, s.max)
        want = (row[count_key], row[total_key], row[min_key], row[max_key])
        check(got == want, f"{run}: {report_name} {key!r}: events give {got}, the report {want}")
    for key in stats:
        check(key in seen, f"{run}: {what} events {key!r} are in no {report_name} row")


def check_run(gprof_report, run):
    doc = expected_document(gprof_report, run)
    reports = doc["reports"]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernels = gprof_run.events(run, "kernel", output="python")
    check([str(w.message) for w in caught] == doc["warnings"],
          f"{run}: events() warned {[str(w.message) for w in caught]}, gprof-report {doc['warnings']}")
    check(all(issubclass(w.category, gprof_run.GprofRunWarning) for w in caught), f"{run}: warning category")

    # Kernels: instances, total, min, max per (demangled) name.
    compare(run, "cuda_gpu_kern_sum", reports["cuda_gpu_kern_sum"]["rows"], lambda r: r["name"], "instances",
            group(kernels["name"], durations(kernels)), "kernel")

    # CUDA API calls, the runtime's own driver calls left out as in the report.
    api = gprof_run.events(run, "api_call", columns=["name", "start", "end"], output="python")
    check(list(api) == ["name", "start", "end"], f"{run}: columns= order not kept: {list(api)}")
    compare(run, "cuda_api_sum", reports["cuda_api_sum"]["rows"], lambda r: r["name"], "num_calls",
            group(api["name"], durations(api)), "api_call")

    # Copies and memsets: time and size per operation.
    memcpy = gprof_run.events(run, "memcpy", output="python")
    memset = gprof_run.events(run, "memset", output="python")
    ops = [MEMCPY_OPERATION.get(k, f"[CUDA memcpy {k}]") for k in memcpy["copy_kind"]] + \
          ["[CUDA memset]"] * len(memset["start"])
    compare(run, "cuda_gpu_mem_time_sum", reports["cuda_gpu_mem_time_sum"]["rows"], lambda r: r["operation"],
            "count", group(ops, durations(memcpy) + durations(memset)), "memcpy/memset")
    compare(run, "cuda_gpu_mem_size_sum", reports["cuda_gpu_mem_size_sum"]["rows"], lambda r: r["operation"],
            "count", group(ops, list(memcpy["bytes"]) + list(memset["bytes"])), "memcpy/memset",
            total_key="total_bytes", min_key="min_bytes", max_key="max_bytes")

    # NVTX ranges (marks have no length; a range that never ended has end -1 and is not summed).
    nvtx = gprof_run.events(run, "nvtx", output="python")
    keys, lengths = [], []
    for style, domain, name, start, end in zip(nvtx["type"], nvtx["domain"], nvtx["name"], nvtx["start"],
                                               nvtx["end"]):
        if style == "Mark" or end < 0:
            continue
        keys.append((style, f"{domain}:{name}"))
        lengths.append(end - start)
    compare(run, "nvtx_sum", reports["nvtx_sum"]["rows"], lambda r: (r["style"], r["range"]), "instances",
            group(keys, lengths), "nvtx")

    # Graph launches that stand for their GPU work (no node of the graph in the trace: graph-level tracing).
    graphs = gprof_run.events(run, "graph_launch", output="python")
    graph_ids_with_nodes = set(kernels["graph_id"]) | set(memcpy["graph_id"]) | set(memset["graph_id"])
    keys, lengths = [], []
    for gid, d in zip(graphs["graph_id"], durations(graphs)):
        if gid not in graph_ids_with_nodes:
            keys.append(f"[CUDA graph {gid}]")
            lengths.append(d)
    compare(run, "cuda_gpu_sum", reports["cuda_gpu_sum"]["rows"],
            lambda r: r["operation"] if r["category"] == "CUDA_GRAPH" else None, "instances",
            group(keys, lengths), "graph_launch")

    # report(): the JSON's rows themselves, through the package's own gprof-report.
    for name in ("cuda_gpu_kern_sum", "nvtx_sum"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gprof_run.GprofRunWarning)
            got = gprof_run.report(run, name)
        rows = reports[name]["rows"]
        if not isinstance(got, list):  # a DataFrame: back to rows, in the report's column order
            check(list(got.columns) == reports[name]["columns"], f"{run}: report({name}) columns {list(got.columns)}")
            got = got.to_dict("records")
        check(len(got) == len(rows), f"{run}: report({name}) has {len(got)} rows, the JSON {len(rows)}")
        for g, r in zip(got, rows):
            same = all(g[k] == r[k] or (isinstance(r[k], float) and math.isclose(g[k], r[k])) for k in r)
            check(same, f"{run}: report({name}) row {g} != {r}")

    # The other shapes hold the same values as the python one.
    if importlib.util.find_spec("numpy"):
        as_numpy = gprof_run.events(run, "kernel", output="numpy")
        for col, values in kernels.items():
            check(list(as_numpy[col]) == list(values), f"{run}: numpy column {col} differs")
    if importlib.util.find_spec("pandas"):
        frame = gprof_run.events(run, "kernel")
        check(type(frame).__name__ == "DataFrame", f"{run}: output='auto' with pandas gave {type(frame)}")
        check(list(frame.columns) == list(kernels), f"{run}: DataFrame columns {list(frame.columns)}")
        for col, values in kernels.items():
            check(list(frame[col]) == list(values), f"{run}: DataFrame column {col} differs")
        if len(frame):
            by_name = frame.assign(length=frame["end"] - frame["start"]).groupby("name", observed=True)["length"]
            sums = {name: int(total) for name, total in by_name.sum().items()}
            for row in reports["cuda_gpu_kern_sum"]["rows"]:
                check(sums.get(row["name"]) == row["total_time_ns"], f"{run}: pandas groupby total of {row['name']}")
    return sum(len(v["rows"]) for v in reports.values())


def check_api_edges(run):
    """Errors a notebook user makes get clear Python exceptions, never a crash."""
    def raises(exc, fn, text):
        try:
            fn()
        except exc as e:
            check(text in str(e), f"{fn}: message {e!r} lacks {text!r}")
            return
        except Exception as e:  # noqa: BLE001 -- the wrong exception type is the failure being checked
            check(False, f"expected {exc.__name__}, got {type(e).__name__}: {e}")
            return
        check(False, f"expected {exc.__name__}")

    raises(ValueError, lambda: gprof_run.events(run, "kernels"), "kernel")
    raises(ValueError, lambda: gprof_run.events(run, "kernel", columns=["start", "bogus"]), "bogus")
    raises(ValueError, lambda: gprof_run.events(run, "kernel", time_range="soon"), "soon")
    raises(RuntimeError, lambda: gprof_run.events(run + "/nonexistent", "kernel"), "nonexistent")
    raises(gprof_run.ReportError, lambda: gprof_run.report(run, "no_such_report"), "no_such_report")
    raises(ValueError, lambda: gprof_run.events(run, "kernel", output="excel"), "excel")
    kinds = gprof_run.event_kinds()
    check({"kernel", "memcpy", "memset", "api_call", "nvtx"} <= set(kinds), f"event_kinds: {kinds}")
    check(gprof_run.event_columns("kernel")[:4] == ["pid", "host", "start", "end"],
          f"kernel columns: {gprof_run.event_columns('kernel')}")
    # A time range selects what gprof-report's --time-range selects.
    full = gprof_run.events(run, "api_call", columns=["start"], output="python")["start"]
    if len(full) > 2:
        cut = sorted(full)[len(full) // 2]
        part = gprof_run.events(run, "api_call", columns=["start"], time_range=f"{cut}:", output="python")["start"]
        doc = gprof_run.report_document(run, "cuda_api_sum", time_range=f"{cut}:")
        calls = sum(r["num_calls"] for r in doc["reports"]["cuda_api_sum"]["rows"])
        check(0 < len(part) < len(full) and len(part) == calls,
              f"time_range: {len(part)} of {len(full)} calls, the report {calls}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-report", required=True)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    rows = 0
    for run in args.runs:
        rows += check_run(args.gprof_report, run)
    check_api_edges(args.runs[0])
    check(rows > 0, "no report row was compared at all")
    shapes = [m for m in ("numpy", "pandas") if importlib.util.find_spec(m)]
    print(f"check_reader: {len(args.runs)} runs, {rows} report rows compared (gprof_run from "
          f"{os.path.dirname(gprof_run.__file__)}; shapes: python{''.join(', ' + s for s in shapes)})")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
