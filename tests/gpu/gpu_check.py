#!/usr/bin/env python3
"""gpu-check, the part that runs on the GPU machine (and its plan and self-test, which run anywhere).

Only the Python standard library: the GPU machine has python3 and PyTorch but no package registry.
See docs/validation.md for the procedure, every check and its threshold.

  gpu_check.py --run PACK --budget SECONDS [--out DIR] [--only GROUPS|LABELS] [--rounds N] [--keep]
  gpu_check.py --plan --budget SECONDS [--only ...]       run order and estimates, without a GPU
  gpu_check.py --selftest [--apps-dir DIR] [--pack PACK]

PACK is the folder scripts/gpu-check packed: gprof-run/ (the install tree), apps/ (known-answer programs, probes,
gprof-test-trace-dump), tests/gpu/ (these scripts, train.py, fixtures). The checks and their order are the registry
in checks.py; budget.py runs them within the budget. Output: one line per verdict, "PASS|FAIL|SKIP name: figures",
"CHECK ..." lines around each check, then a summary line; results.json, summary.txt and the traces of failed checks
(zip) under --out, rewritten after every check.

This module holds the expectation logic (pure functions the self-test and the golden tests in
tests/report/check_known_answers.py run on fixtures) and the runners of the known-answer, overhead, PyTorch and
framework checks.
"""
import argparse
import copy
import glob
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import budget

EXIT_NO_DEVICE = 77
DEFAULT_BUDGET_S = 540  # one device command of at most 600 s, with time left to copy the results back

# ----- thresholds (docs/validation.md lists the same) ------------------------------------------------------
PYTORCH_MATCH_MIN = 0.99        # share of launches matched by name between gprof-run and torch.profiler
PYTORCH_TIME_TOL = 0.05         # total GPU kernel time, relative
LARGE_EVENT_TOL = 0.03          # ka_large kernel time vs cudaEvent time, relative
# overhead goals per workload: OVERHEAD_WORKLOADS below (issue 17's table)
WALL_SLACK_NS = 50_000_000      # GPU activity span may exceed the app's measured wall time by clock skew only


# ----- verdicts ------------------------------------------------------------------------------------------------

class Verdicts:
    """Every verdict of a run, each tagged with the check that gave it (budget.Runner sets `current`)."""

    def __init__(self, stream=sys.stdout):
        self.items = []
        self.stream = stream
        self.current = None

    def add(self, status, name, figures="", data=None, check=None):
        assert status in ("PASS", "FAIL", "SKIP")
        self.items.append({"status": status, "name": name, "figures": figures, "data": data or {},
                           "check": check or self.current})
        budget.say(self, f"{status} {name}: {figures}")

    def summary(self):
        n = {s: sum(1 for i in self.items if i["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
        return f"SUMMARY {n['PASS']} passed, {n['FAIL']} failed, {n['SKIP']} skipped"

    def failed(self):
        return any(i["status"] == "FAIL" for i in self.items)


# ----- gprof-report JSON (docs/report-schema.md): the only place that knows its shape ----------------------

def report_rows(doc, report):
    """Rows (list of dicts) of one report in a `gprof-report REPORT --format json` document.

    Shape as of this writing: {"schema": "gprof-report", "reports": {REPORT: {"columns": [...], "rows": [{...}]}}}.
    Kernel rows carry "name" (demangled), "instances", "total_time_ns"; API rows "name", "num_calls".
    """
    reports = doc.get("reports", {})
    table = reports.get(report) if isinstance(reports, dict) else None
    if table is None and isinstance(reports, list):  # tolerate a list of {"name": ..., "rows": ...}
        table = next((r for r in reports if r.get("name") == report), None)
    if table is None:
        raise KeyError(f"report {report!r} not in gprof-report output (has {list(reports)})")
    rows = table.get("rows", [])
    if rows and isinstance(rows[0], list):  # rows as arrays: zip with the column keys
        rows = [dict(zip(table.get("columns", []), r)) for r in rows]
    return rows


def report_kernel_counts(doc):
    return {r["name"]: {"count": int(r.get("instances", r.get("count", 0))),
                        "total_ns": float(r.get("total_time_ns", 0))}
            for r in report_rows(doc, "cuda_gpu_kern_sum")}


def report_api_counts(doc):
    return {r["name"]: int(r.get("num_calls", r.get("count", 0))) for r in report_rows(doc, "cuda_api_sum")}


# ----- raw records (gprof-test-trace-dump JSON lines) -----------------------------------------------------------

class Records:
    """Every record of a run, grouped by kind; one per run directory (all its processes)."""

    def __init__(self):
        self.by_kind = {}
        self.files = []       # header lines
        self.reads = []       # "read" lines: reader statistics per file
        self.errors = []      # files that could not be opened

    def add(self, rec):
        k = rec.get("k")
        if k == "header":
            self.files.append(rec)
        elif k == "read":
            self.reads.append(rec)
        elif k == "error":
            self.errors.append(rec)
        else:
            self.by_kind.setdefault(k, []).append(rec)

    def of(self, kind):
        return self.by_kind.get(kind, [])

    @classmethod
    def from_lines(cls, lines):
        r = cls()
        for line in lines:
            line = line.strip()
            if line:
                r.add(json.loads(line))
        return r


def normalize_api_name(name):
    """cudaLaunchKernel_v7000 / cudaMemcpyAsync_ptsz_v7000 -> cudaLaunchKernel / cudaMemcpyAsync."""
    name = re.sub(r"_v\d+$", "", name)
    return re.sub(r"_(ptsz|ptds)$", "", name)


def dims(rec, what):
    """A kernel record's grid or block as [x, y, z] (the dump has one field per dimension: grid_x, ...)."""
    return [rec[f"{what}_{axis}"] for axis in "xyz"]


def spread_dims(what, xyz):
    return {f"{what}_{axis}": v for axis, v in zip("xyz", xyz)}


def kernel_matches(rec, exp):
    name, dem = rec.get("name", ""), rec.get("demangled", rec.get("name", ""))
    if name in exp["names"] or dem in exp["names"]:
        return True
    return any(sub in dem or sub in name for sub in exp.get("contains", []))


def activity_records(records):
    return records.of("kernel") + records.of("memcpy") + records.of("memset")


# ----- the expectation logic (pure: the self-test runs it on fixtures) ------------------------------------------

def memory_kind_key(rec):
    """The report's memory kind of a raw Memory record (report/model/memory.h keeps the same budgets)."""
    if rec.get("pool_type", "none") != "none":
        return "pool"
    kind = rec.get("memory_kind")
    if kind in ("Device", "Array"):
        return "device"
    if kind in ("DeviceStatic", "ManagedStatic"):
        return "static"
    if kind == "Pinned":
        return "pinned_host"
    if kind == "Managed":
        return "managed"
    return "other"


DEVICE_KINDS = ("device", "pool", "static")


def memory_ledger(memory_records):
    """Replays Memory records in time order: ({kind: totals summed over devices}, {device: peak device memory})."""
    kinds, live, in_use, peak = {}, {}, {}, {}
    for r in sorted(memory_records, key=lambda r: r["timestamp"]):
        if not r["timestamp"]:
            continue
        if r["op"] == "allocation":
            k = memory_kind_key(r)
            t = kinds.setdefault(k, {"allocations": 0, "bytes": 0, "releases": 0, "live_count": 0, "live_bytes": 0})
            t["allocations"] += 1
            t["bytes"] += r["bytes"]
            t["live_count"] += 1
            t["live_bytes"] += r["bytes"]
            live.setdefault(r["address"], []).append(r)
            if k in DEVICE_KINDS:
                in_use[r["device"]] = in_use.get(r["device"], 0) + r["bytes"]
                peak[r["device"]] = max(peak.get(r["device"], 0), in_use[r["device"]])
        elif r["op"] == "release" and live.get(r["address"]):
            # one address alive twice: a release was lost; this one takes the allocation of its size, else the oldest
            at = live[r["address"]]
            a = next((x for x in at if x["bytes"] == r["bytes"]), at[0])
            at.remove(a)
            k = memory_kind_key(a)
            t = kinds[k]
            t["releases"] += 1
            t["live_count"] -= 1
            t["live_bytes"] -= a["bytes"]
            if k in DEVICE_KINDS:
                in_use[a["device"]] -= a["bytes"]
    return kinds, peak


def check_memory(answer, kinds, peaks, name):
    """answer["memory"] and ["device_peak_bytes"] against per-kind totals and device 0's peak (raw or report)."""
    out = []
    for exp in answer.get("memory", []):
        got = kinds.get(exp["kind"], {})
        fields = ("allocations", "bytes", "releases", "live_count", "live_bytes")
        wrong = [f"{f}={got.get(f, 0)} expected {exp[f]}" for f in fields if got.get(f, 0) != exp[f]]
        out.append(("FAIL" if wrong else "PASS", f"{name}:memory:{exp['kind']}",
                    "; ".join(wrong) or " ".join(f"{f}={got.get(f, 0)}" for f in fields)))
    if answer.get("device_peak_bytes", -1) >= 0:
        got = peaks.get(0, 0)
        out.append(("PASS" if got == answer["device_peak_bytes"] else "FAIL", f"{name}:memory:device-peak",
                    f"device 0 peak={got} expected={answer['device_peak_bytes']} (pinned host and managed memory "
                    "are not device memory)"))
    return out


def graph_level_answer(answer):
    """What a graph-level trace (--cuda-graph-trace=graph, or any trace of a collector that enabled CUPTI's
    GRAPH_TRACE) holds of a known answer: one GraphLaunch per cudaGraphLaunch instead of the graph's kernels and
    memsets (the graph mode's memsets are all graph nodes)."""
    a = copy.deepcopy(answer)
    a["graph_trace"] = "graph"
    a["graph_launches"] = sum(x["count"] for x in answer["api"] if x["name"] in ("cudaGraphLaunch", "cuGraphLaunch"))
    a["kernels"] = [k for k in answer["kernels"] if not k["graph"]]
    if any(k["graph"] for k in answer["kernels"]) and answer["mode"] == "graph":
        a["memset"] = []
    return a


GRAPH_LAUNCH_APIS = ("cudaGraphLaunch", "cuGraphLaunch")


GPU_WORK_KINDS = ("kernel", "memcpy", "memset", "graph_launch")


def check_devices(records, name):
    """Every device that ran GPU work has its Device record (name, compute capability, SMs, memory): the summary's
    "device 0: NVIDIA H200 ..." line. Every known-answer run of the H200 lease of 2026-11-27 lacked it (the collector
    asked the driver only at exit, after the driver had shut down)."""
    used = sorted({r.get("device", 0) for k in GPU_WORK_KINDS for r in records.of(k)})
    described = sorted({d.get("id") for d in records.of("device") if d.get("name")})
    missing = [d for d in used if d not in described]
    return ("PASS" if not missing else "FAIL", f"{name}:devices",
            f"devices with GPU work={used} device records={described}" + (f"; missing {missing}" if missing else ""))


def check_known_answer(answer, records, wall_ns, label):
    """Compare one run's records with the app's known answer. Returns [(status, name, figures)]."""
    out = []
    mode = answer["mode"]
    name = f"{label}:{mode}"

    if records.errors:
        out.append(("FAIL", f"{name}:readable", "; ".join(e["message"] for e in records.errors)))
        return out
    n_files = len(records.files)
    if n_files != answer.get("processes", 1):
        out.append(("FAIL", f"{name}:processes", f"traces={n_files} expected={answer.get('processes', 1)}"))
    if not answer.get("expect_abort"):
        # Every process ended normally: each trace is complete, and nothing warns about a CUDA the process did not
        # use (issue #13: fork's CPU-only child was told "the CUDA driver was loaded but never initialised").
        ends = len(records.of("end"))
        alarms = [s.get("message", "") for s in records.of("status") if s.get("level") in ("warning", "error")]
        if mode == "fork":
            false_alarms = alarms
        else:
            false_alarms = [m for m in alarms if "never initialised" in m or "trace incomplete" in m]
        out.append(("PASS" if ends == n_files and not false_alarms else "FAIL", f"{name}:complete-no-false-warning",
                    f"end records={ends} of {n_files} traces; warnings={false_alarms[:3]}"))

    out.append(check_devices(records, name))

    kernels = records.of("kernel")
    # kernels by name, count, launch configuration, streams, graph
    for exp in answer["kernels"]:
        got = [k for k in kernels if kernel_matches(k, exp)]
        label_k = exp["names"][0] if not exp.get("contains") else exp["contains"][0]
        probs = []
        if answer.get("expect_abort"):
            # killed midway: at least the part before the pause must be there, never more than launched
            if not (0 < len(got) <= 2 * exp["count"]):
                probs.append(f"count={len(got)} expected 1..{2 * exp['count']}")
        elif len(got) != exp["count"]:
            probs.append(f"count={len(got)} expected={exp['count']}")
        bad_cfg = [k for k in got if dims(k, "grid") != exp["grid"] or dims(k, "block") != exp["block"]]
        if bad_cfg:
            k = bad_cfg[0]
            probs.append(f"{len(bad_cfg)} with grid/block {dims(k, 'grid')}/{dims(k, 'block')} expected {exp['grid']}/{exp['block']}")
        bad_smem = [k for k in got if k.get("dynamic_shared_bytes", 0) != exp["dynamic_shared_bytes"]]
        if bad_smem:
            probs.append(f"{len(bad_smem)} with dynamic shared {bad_smem[0].get('dynamic_shared_bytes')} expected {exp['dynamic_shared_bytes']}")
        streams = {(k["device"], k["stream"]) for k in got}
        if exp["streams"] and got and len(streams) != exp["streams"]:
            probs.append(f"streams={len(streams)} expected={exp['streams']}")
        if exp["graph"] and any(k.get("graph_id", 0) == 0 for k in got):
            probs.append(f"{sum(1 for k in got if k.get('graph_id', 0) == 0)} without a graph id")
        fig = f"count={len(got)}/{exp['count']} streams={len(streams)}"
        out.append(("FAIL" if probs else "PASS", f"{name}:kernel:{label_k}", "; ".join(probs) or fig))

    for absent in answer.get("absent_kernels", []):
        got = [k for k in kernels if k["name"] == absent or k.get("demangled") == absent]
        out.append(("FAIL" if got else "PASS", f"{name}:absent:{absent}", f"count={len(got)} expected=0"))

    memcpys = records.of("memcpy")
    for exp in answer["memcpy"]:
        got = [m for m in memcpys if m["copy_kind"] == exp["kind"] and m["bytes"] == exp["bytes"]]
        probs = []
        if len(got) != exp["count"]:
            probs.append(f"count={len(got)} expected={exp['count']}")
        wrong_mem = [m for m in got if (m["src_kind"], m["dst_kind"]) != (exp["src"], exp["dst"])]
        if wrong_mem:
            probs.append(f"{len(wrong_mem)} as {wrong_mem[0]['src_kind']}->{wrong_mem[0]['dst_kind']} expected {exp['src']}->{exp['dst']}")
        streams = {(m["device"], m["stream"]) for m in got}
        if exp["streams"] and got and len(streams) != exp["streams"]:
            probs.append(f"streams={len(streams)} expected={exp['streams']}")
        tag = f"{exp['kind']}:{exp['src']}->{exp['dst']}:{exp['bytes']}B"
        out.append(("FAIL" if probs else "PASS", f"{name}:memcpy:{tag}",
                    "; ".join(probs) or f"count={len(got)}/{exp['count']} streams={len(streams)}"))

    memsets = records.of("memset")
    for exp in answer["memset"]:
        got = [m for m in memsets if m["bytes"] == exp["bytes"]]
        probs = []
        if len(got) != exp["count"]:
            probs.append(f"count={len(got)} expected={exp['count']}")
        wrong = [m for m in got if "value" in m and m["value"] != exp["value"]]
        if wrong:
            probs.append(f"{len(wrong)} with value {wrong[0]['value']} expected {exp['value']}")
        out.append(("FAIL" if probs else "PASS", f"{name}:memset:{exp['bytes']}B",
                    "; ".join(probs) or f"count={len(got)}/{exp['count']}"))

    api = {}
    for a in records.of("api_call"):
        n = normalize_api_name(a["name"])
        api[n] = api.get(n, 0) + 1
    for exp in answer["api"]:
        got = api.get(exp["name"], 0)
        if exp["name"] == "cudaGraphInstantiate":
            got += api.get("cudaGraphInstantiateWithFlags", 0)
        ok = got >= exp["count"] if exp["at_least"] else got == exp["count"]
        rel = ">=" if exp["at_least"] else "=="
        out.append(("PASS" if ok else "FAIL", f"{name}:api:{exp['name']}", f"count={got} expected {rel} {exp['count']}"))

    if answer.get("threads"):
        tids = {a["tid"] for a in records.of("api_call") if normalize_api_name(a["name"]) == "cudaLaunchKernel"}
        ok = len(tids) >= answer["threads"]
        out.append(("PASS" if ok else "FAIL", f"{name}:threads", f"launching threads={len(tids)} expected>={answer['threads']}"))

    nvtx = {}
    for r in records.of("nvtx"):
        nvtx[r["name"]] = nvtx.get(r["name"], 0) + 1
    for exp in answer["nvtx"]:
        got = nvtx.get(exp["name"], 0)
        out.append(("PASS" if got == exp["count"] else "FAIL", f"{name}:nvtx:{exp['name']}",
                    f"count={got} expected={exp['count']}"))

    # timing sanity: durations positive, inside the app's wall time; nothing overlaps on one stream
    acts = activity_records(records)
    if acts:
        zero = [a for a in acts if not a["start"] or not a["end"]]
        neg = [a for a in acts if a["start"] and a["end"] and a["end"] < a["start"]]
        timed = [a for a in acts if a["start"] and a["end"]]
        span = (max(a["end"] for a in timed) - min(a["start"] for a in timed)) if timed else 0
        longest = max((a["end"] - a["start"] for a in timed), default=0)
        ok = not neg and (wall_ns is None or span <= wall_ns + WALL_SLACK_NS)
        out.append(("PASS" if ok else "FAIL", f"{name}:durations",
                    f"gpu span={span / 1e6:.3f} ms app wall={(wall_ns or 0) / 1e6:.3f} ms longest={longest / 1e6:.3f} ms "
                    f"negative={len(neg)} unknown-timestamps={len(zero)}"))
        per_stream = {}
        for a in timed:
            per_stream.setdefault((a["device"], a["stream"]), []).append(a)
        overlaps, worst = 0, 0
        for items in per_stream.values():
            items.sort(key=lambda a: (a["start"], a["end"]))
            for prev, cur in zip(items, items[1:]):
                if cur["start"] < prev["end"]:
                    overlaps += 1
                    worst = max(worst, prev["end"] - cur["start"])
        out.append(("FAIL" if overlaps else "PASS", f"{name}:stream-overlaps",
                    f"overlaps={overlaps} worst={worst} ns streams={len(per_stream)}"))

    if answer.get("graph_launches") is not None:
        got = len(records.of("graph_launch"))
        nodes = [k for k in activity_records(records) if k.get("graph_id", 0)]
        ok = got == answer["graph_launches"] and not nodes
        out.append(("PASS" if ok else "FAIL", f"{name}:graph-launches",
                    f"graph_launch records={got} expected={answer['graph_launches']}, graph node records={len(nodes)} "
                    "expected 0 (graph-level tracing)"))
    elif any(k["graph"] for k in answer["kernels"]):
        # node by node: every node names the graph launch that ran it (its correlation id), so the timeline can
        # draw cudaGraphLaunch -> each node
        launches = {a["correlation"] for a in records.of("api_call")
                    if normalize_api_name(a["name"]) in GRAPH_LAUNCH_APIS}
        nodes = [k for k in activity_records(records) if k.get("graph_id", 0)]
        matched = sum(1 for k in nodes if k.get("correlation") in launches)
        per_launch = {}
        for k in nodes:
            per_launch[k.get("correlation")] = per_launch.get(k.get("correlation"), 0) + 1
        ok = nodes and matched == len(nodes) and len(per_launch) == len(launches)
        out.append(("PASS" if ok else "FAIL", f"{name}:graph-node-correlation",
                    f"nodes={len(nodes)} with a graph launch's correlation={matched}; graph launches={len(launches)} "
                    f"with nodes={len(per_launch)}; nodes per launch={sorted(set(per_launch.values()))}"))

    if answer.get("memory") or answer.get("device_peak_bytes", -1) >= 0:
        kinds, peaks = memory_ledger(records.of("memory"))
        out += check_memory(answer, kinds, peaks, name)

    dropped = sum(d["count"] for d in records.of("dropped"))
    end_dropped = sum(e.get("records_dropped", 0) for e in records.of("end"))
    out.append(("PASS" if dropped == 0 and end_dropped == 0 else "FAIL", f"{name}:dropped",
                f"dropped={max(dropped, end_dropped)}"))

    if answer.get("capture", "none") != "none":
        caps = records.of("capture")
        kinds = sorted({(c["action"], c["reason"]) for c in caps})
        ok = any(c["action"] == "start" for c in caps)
        out.append(("PASS" if ok else "FAIL", f"{name}:capture-markers", f"{len(caps)} markers {kinds}"))

    if answer.get("expect_abort"):
        ends = len(records.of("end"))
        trunc = sum(r.get("truncated_bytes", 0) for r in records.reads)
        out.append(("PASS", f"{name}:readable-after-abort",
                    f"records={sum(r.get('records', 0) for r in records.reads)} end-record={ends} truncated={trunc} B"))

    t = answer.get("timing", {})
    if mode == "large" and t.get("gpu_event_ms", -1) > 0:
        got = [k for k in kernels if k["name"] == "ka_large"]
        total = sum(k["end"] - k["start"] for k in got if k["start"] and k["end"])
        ref = t["gpu_event_ms"] * 1e6
        rel = abs(total - ref) / ref
        out.append(("PASS" if rel <= LARGE_EVENT_TOL else "FAIL", f"{name}:kernel-time-vs-cudaEvent",
                    f"kernels={total / 1e6:.3f} ms events={ref / 1e6:.3f} ms diff={rel * 100:.2f}% (max {LARGE_EVENT_TOL * 100:.0f}%)"))
    return out


def check_report_agrees(doc, records, label):
    """gprof-report's summaries must count what the raw records hold."""
    out = []
    try:
        rep_k = report_kernel_counts(doc)
        rep_a = report_api_counts(doc)
    except (KeyError, TypeError, ValueError) as e:
        return [("FAIL", f"{label}:report-json", f"cannot read gprof-report JSON: {e}")]
    raw_k = {}
    for k in records.of("kernel"):
        n = k.get("demangled", k["name"])
        raw_k[n] = raw_k.get(n, 0) + 1
    diff = {n: (raw_k.get(n, 0), rep_k.get(n, {}).get("count", 0)) for n in set(raw_k) | set(rep_k)
            if raw_k.get(n, 0) != rep_k.get(n, {}).get("count", 0)}
    out.append(("FAIL" if diff else "PASS", f"{label}:report-kernels",
                f"names={len(raw_k)} launches={sum(raw_k.values())}" + (f" differ (raw, report): {dict(list(diff.items())[:3])}" if diff else "")))
    raw_a = {}
    for a in records.of("api_call"):
        raw_a[a["name"]] = raw_a.get(a["name"], 0) + 1
    rep_total, raw_total = sum(rep_a.values()), sum(raw_a.values())
    out.append(("PASS" if rep_total == raw_total else "FAIL", f"{label}:report-api",
                f"calls raw={raw_total} report={rep_total}"))
    return out


# ----- every report against a known answer (gpu-check on fresh runs; CI on the stored H100 traces) -----------

ALL_REPORTS = ["summary", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
               "nvtx_sum", "cuda_gpu_trace", "cuda_api_trace", "cuda_gpu_sum", "memory"]
NESTED_DRIVER_FLAG = "--cuda-nested-driver-calls"  # gprof-report's option (report/model/model.h)
MEMCPY_OPERATION = {"HtoD": "[CUDA memcpy Host-to-Device]", "DtoH": "[CUDA memcpy Device-to-Host]",
                    "DtoD": "[CUDA memcpy Device-to-Device]", "HtoH": "[CUDA memcpy Host-to-Host]",
                    "PtoP": "[CUDA memcpy Peer-to-Peer]"}


def gather_reports(gprof_report, run_dir, work):
    """Everything gprof-report says about one run: every report as JSON, the API table with the runtime's own
    driver calls, the analysis, the JSON timeline, and every report as console text (exit status, bytes).
    Returns (docs, problems): problems are lines saying what could not be produced."""
    docs, problems = {"texts": {}}, []

    def call(args, what):
        rc, _, out, err = timed([gprof_report] + args, timeout=600)
        if rc not in (0, 2):
            problems.append(f"{what}: exit {rc}: {err.strip()[-300:]}")
        return rc, out, err

    def parse(args, what):
        rc, out, err = call(args, what)
        try:
            return rc, json.loads(out)
        except ValueError as e:
            problems.append(f"{what}: not JSON ({e}): {err.strip()[-200:]}")
            return rc, None

    docs["reports_rc"], docs["reports"] = parse(ALL_REPORTS + ["--format", "json", run_dir], "reports --format json")
    _, docs["nested"] = parse(["cuda_api_sum", NESTED_DRIVER_FLAG, "--format", "json", run_dir],
                              f"cuda_api_sum {NESTED_DRIVER_FLAG}")
    _, docs["analysis"] = parse(["analyze", "--format", "json", run_dir], "analyze --format json")
    tl = os.path.join(work, "timeline-check.json")
    rc, _, err = call(["timeline", run_dir, "-o", tl], "timeline")
    docs["timeline"] = None
    if os.path.exists(tl):
        with open(tl) as f:
            doc = json.load(f)
        docs["timeline"] = doc["traceEvents"] if isinstance(doc, dict) else doc
        os.remove(tl)
    for r in ALL_REPORTS:
        rc, out, _ = call([r, run_dir], f"{r} (table)")
        docs["texts"][r] = (rc, out)
    return docs, problems


def _rows(doc, report):
    try:
        return report_rows(doc, report)
    except (KeyError, TypeError, AttributeError):
        return []


def _matching(rows, exp, key="name"):
    return [r for r in rows if kernel_matches({"name": r.get(key) or ""}, exp)]


def check_reports(answer, docs, label):
    """Every report of one run against the run's known answer. Returns [(status, name, figures)]."""
    out = []
    name = f"{label}:{answer['mode']}:report"
    doc = docs.get("reports")
    if not doc:
        return [("FAIL", f"{name}:json", "gprof-report gave no JSON document")]

    def add(ok, what, figures):
        out.append(("PASS" if ok else "FAIL", f"{name}:{what}", figures))

    header = doc["reports"]["summary"].get("header", {})
    summary = _rows(doc, "summary")
    gpu_trace = _rows(doc, "cuda_gpu_trace")
    gpu_sum = _rows(doc, "cuda_gpu_sum")
    kern_sum = _rows(doc, "cuda_gpu_kern_sum")
    api_sum = {r["name"]: r["num_calls"] for r in _rows(doc, "cuda_api_sum")}
    events = docs.get("timeline") or []
    add(docs.get("timeline") is not None, "timeline", f"{len(events)} events")
    slices = [e for e in events if e.get("ph") == "X"]
    abort = answer.get("expect_abort", False)

    n_proc = len(header.get("processes", []))
    add(n_proc == answer.get("processes", 1), "processes", f"processes={n_proc} expected={answer.get('processes', 1)}")
    add(header.get("dropped", -1) == 0, "dropped", f"dropped={header.get('dropped')}")

    def count_ok(got, want):
        return 0 < got <= 2 * want if abort else got == want

    for exp in answer["kernels"]:
        tag = exp["names"][0] if not exp.get("contains") else exp["contains"][0]
        rows = _matching(gpu_trace, exp)
        probs = []
        if not count_ok(len(rows), exp["count"]):
            probs.append(f"cuda_gpu_trace rows={len(rows)}")
        bad = [r for r in rows if [r["grid_x"], r["grid_y"], r["grid_z"]] != exp["grid"]
               or [r["block_x"], r["block_y"], r["block_z"]] != exp["block"]
               or r["dynamic_shared_bytes"] != exp["dynamic_shared_bytes"]]
        if bad:
            probs.append(f"{len(bad)} rows with another grid/block/dynamic shared memory")
        streams = {(r["device"], r["stream"]) for r in rows}
        if exp["streams"] and rows and len(streams) != exp["streams"]:
            probs.append(f"streams={len(streams)} expected={exp['streams']}")
        n_sum = sum(r["instances"] for r in _matching(kern_sum, exp))
        n_gpu = sum(r["instances"] for r in _matching(gpu_sum, exp, "operation") if r.get("category") == "CUDA_KERNEL")
        n_summary = sum(r["calls"] for r in _matching(summary, exp) if r.get("type") == "GPU activities")
        n_tl = len([e for e in slices if e.get("cat") == "kernel" and kernel_matches({"name": e["name"]}, exp)])
        for what, got in (("cuda_gpu_kern_sum", n_sum), ("cuda_gpu_sum", n_gpu), ("summary", n_summary),
                          ("timeline", n_tl)):
            if got != len(rows):
                probs.append(f"{what}={got} but cuda_gpu_trace={len(rows)}")
        if exp["graph"] and not answer.get("graph_trace"):
            no_id = [e for e in slices if e.get("cat") == "kernel" and kernel_matches({"name": e["name"]}, exp)
                     and not e.get("args", {}).get("graph id")]
            if no_id:
                probs.append(f"{len(no_id)} timeline slices without a graph id")
        add(not probs, f"kernel:{tag}", "; ".join(probs) or f"count={len(rows)} in every report, streams={len(streams)}")

    if answer.get("kernel_launches") is not None:
        n_sum = sum(r["instances"] for r in kern_sum)
        n_trace = len([r for r in gpu_trace if r.get("grid_x") is not None])
        n_tl = len([e for e in slices if e.get("cat") == "kernel"])
        add(n_sum == n_trace == n_tl == answer["kernel_launches"], "kernel-launches",
            f"cuda_gpu_kern_sum={n_sum} cuda_gpu_trace={n_trace} timeline={n_tl} expected={answer['kernel_launches']}")

    for absent in answer.get("absent_kernels", []):
        got = [r for r in kern_sum if r["name"] == absent]
        add(not got, f"absent:{absent}", f"rows={len(got)} expected=0")

    for exp in answer["memcpy"]:
        op = MEMCPY_OPERATION.get(exp["kind"], f"[CUDA memcpy {exp['kind']}]")
        rows = [r for r in gpu_trace if r["name"] == op and r["bytes"] == exp["bytes"]
                and r["src_mem_kind"] == exp["src"] and r["dst_mem_kind"] == exp["dst"]]
        streams = {(r["device"], r["stream"]) for r in rows}
        ok = count_ok(len(rows), exp["count"]) and (not exp["streams"] or not rows or len(streams) == exp["streams"])
        add(ok, f"memcpy:{exp['kind']}:{exp['src']}->{exp['dst']}:{exp['bytes']}B",
            f"cuda_gpu_trace rows={len(rows)}/{exp['count']} streams={len(streams)}")
    if answer["memcpy"]:
        by_op = {}
        for r in gpu_trace:
            if r["name"].startswith("[CUDA memcpy"):
                by_op[r["name"]] = by_op.get(r["name"], 0) + 1
        sizes = {r["operation"]: r["count"] for r in _rows(doc, "cuda_gpu_mem_size_sum")}
        times = {r["operation"]: r["count"] for r in _rows(doc, "cuda_gpu_mem_time_sum")}
        ok = all(sizes.get(k) == v and times.get(k) == v for k, v in by_op.items())
        add(ok, "memcpy:mem_sum", f"cuda_gpu_trace {by_op}, mem_size_sum {sizes}, mem_time_sum {times}")

    for exp in answer["memset"]:
        rows = [r for r in gpu_trace if r["name"] == "[CUDA memset]" and r["bytes"] == exp["bytes"]]
        add(count_ok(len(rows), exp["count"]), f"memset:{exp['bytes']}B", f"cuda_gpu_trace rows={len(rows)}/{exp['count']}")

    for exp in answer["api"]:
        got = sum(v for k, v in api_sum.items() if normalize_api_name(k) == exp["name"])
        if exp["name"] == "cudaGraphInstantiate":
            got += api_sum.get("cudaGraphInstantiateWithFlags", 0)
        ok = got >= exp["count"] if exp["at_least"] else got == exp["count"]
        add(ok, f"api:{exp['name']}", f"cuda_api_sum={got} expected {'>=' if exp['at_least'] else '=='} {exp['count']}")

    if answer.get("threads"):
        tids = {r["tid"] for r in _rows(doc, "cuda_api_trace") if r["name"] == "cudaLaunchKernel"}
        add(len(tids) >= answer["threads"], "threads", f"launching threads={len(tids)} expected>={answer['threads']}")

    nvtx_sum = _rows(doc, "nvtx_sum")
    for exp in answer["nvtx"]:
        got = sum(r["instances"] for r in nvtx_sum if r["range"].split(":", 1)[-1] == exp["name"])
        where = "nvtx_sum"
        if got == 0:  # a mark: an instant on the timeline
            got = len([e for e in events if e.get("ph") == "i" and e.get("name") == exp["name"]])
            where = "timeline marks"
        add(got == exp["count"], f"nvtx:{exp['name']}", f"{where}={got} expected={exp['count']}")

    if answer.get("graph_launches") is not None:
        want = answer["graph_launches"]
        n_sum = sum(r["instances"] for r in gpu_sum if r.get("category") == "CUDA_GRAPH")
        n_trace = len([r for r in gpu_trace if r["name"].startswith("[CUDA graph ")])
        n_summary = sum(r["calls"] for r in summary if r.get("type") == "GPU activities"
                        and r["name"].startswith("[CUDA graph "))
        graph_slices = [e for e in slices if e.get("cat") == "cuda_graph"]
        add(n_sum == want and n_trace == want and n_summary == want and len(graph_slices) == want,
            "graph-launches-as-gpu-work",
            f"cuda_gpu_sum={n_sum} cuda_gpu_trace={n_trace} summary={n_summary} timeline={len(graph_slices)} "
            f"expected={want}")
        flows_in = flow_ends(events, lambda e: e.get("cat") == "cuda_graph")
        add(flows_in == want, "graph-launches:flows", f"launch->graph flows={flows_in} expected={want}")
    elif any(k["graph"] for k in answer["kernels"]):
        nodes = [e for e in slices if e.get("args", {}).get("graph id")]
        flows_in = flow_ends(events, lambda e: bool(e.get("args", {}).get("graph id")))
        add(nodes and flows_in == len(nodes), "graph-nodes:flows",
            f"graph node slices={len(nodes)} with a flow from their cudaGraphLaunch={flows_in}")

    analysis = docs.get("analysis") or {}
    any_gpu = answer["kernels"] or answer["memcpy"] or answer["memset"] or answer.get("graph_launches")
    if any_gpu:
        busy = sum(d.get("busy_ns", 0) for d in analysis.get("devices", []))
        verdict = analysis.get("verdict", {})
        verdict = verdict.get("id", verdict.get("title")) if isinstance(verdict, dict) else verdict
        graphs = sum(d.get("graph_ns", 0) for d in analysis.get("devices", []))
        ok = busy > 0 and verdict != "no_gpu_work" and (not answer.get("graph_launches") or graphs > 0)
        add(ok, "analyze:gpu-busy", f"busy={busy} ns graph={graphs} ns verdict={verdict}")

    # The runtime's own driver calls: out of the API table by default, all there with the option.
    nested = {r["name"]: r["num_calls"] for r in _rows(docs.get("nested") or {}, "cuda_api_sum")}
    hidden = header.get("hidden_driver_calls", 0)
    extra = sum(nested.values()) - sum(api_sum.values())
    ok = bool(nested) and extra == hidden and "cuKernelGetName" not in api_sum
    add(ok, "api:runtime-driver-calls",
        f"hidden={hidden}, {NESTED_DRIVER_FLAG} adds {extra} calls (cuKernelGetName={nested.get('cuKernelGetName', 0)}, "
        f"cudaLaunchKernel={api_sum.get('cudaLaunchKernel', 0)}); default table has cuKernelGetName="
        f"{api_sum.get('cuKernelGetName', 0)}")

    mem = doc["reports"].get("memory", {})
    kinds = {}
    for r in mem.get("rows", []):
        t = kinds.setdefault(r["kind"], {"allocations": 0, "bytes": 0, "releases": 0, "live_count": 0, "live_bytes": 0})
        t["allocations"] += r["allocations"]
        t["bytes"] += r["allocated_bytes"]
        t["releases"] += r["releases"]
        t["live_count"] += r["live_count"]
        t["live_bytes"] += r["live_bytes"]
    peaks = {d["device"]: d["peak_bytes"] for d in mem.get("devices", [])}
    out += check_memory(answer, kinds, peaks, name)
    # Pinned host and managed memory never count as device memory: a device's peak is at most what the device
    # kinds ever allocated there.
    device_bytes = {}
    for r in mem.get("rows", []):
        if r["kind"] in DEVICE_KINDS:
            device_bytes[(r["pid"], r["device"])] = device_bytes.get((r["pid"], r["device"]), 0) + r["allocated_bytes"]
    over = [d for d in mem.get("devices", []) if d["peak_bytes"] > device_bytes.get((d["pid"], d["device"]), 0)]
    live = mem.get("live_allocations", [])
    live_total = sum(t["live_count"] for k, t in kinds.items() if k != "static")
    add(not over and len(live) == live_total, "memory:consistent",
        f"devices={len(mem.get('devices', []))} over their device allocations={len(over)}; live allocations listed="
        f"{len(live)} of {live_total}")

    for r, (rc, text) in sorted(docs.get("texts", {}).items()):
        add(rc in (0, 2) and text.strip() != "", f"table:{r}", f"exit {rc}, {len(text)} bytes")
    if abort:
        # The process died: its trace has no End record (and may be cut inside a chunk: exit 2, damage said).
        incomplete = [p["pid"] for p in header.get("processes", []) if not p.get("complete", True)]
        add(bool(incomplete) and docs.get("reports_rc") in (0, 2), "incomplete-trace",
            f"processes without an end record: {incomplete}; exit {docs.get('reports_rc')}")
    return out


def flow_ends(events, is_target):
    """Flows that end on a slice is_target() accepts: in gprof-report's JSON each slice's flow events follow it."""
    n, last = 0, None
    for e in events:
        ph = e.get("ph")
        if ph == "X":
            last = e
        elif ph == "f" and last is not None and is_target(last):
            n += 1
    return n


def compare_kernel_tables(ours, theirs):
    """ours/theirs: {name: {"count", "total_ns"}}. Returns (matched share of launches, time ratio, worst names)."""
    total = max(sum(v["count"] for v in ours.values()), sum(v["count"] for v in theirs.values()), 1)
    matched = sum(min(ours[n]["count"], theirs[n]["count"]) for n in set(ours) & set(theirs))
    t_ours = sum(v["total_ns"] for v in ours.values())
    t_theirs = sum(v["total_ns"] for v in theirs.values())
    ratio = t_ours / t_theirs if t_theirs else float("inf")
    worst = sorted(set(ours) | set(theirs),
                   key=lambda n: -abs(ours.get(n, {}).get("count", 0) - theirs.get(n, {}).get("count", 0)))[:3]
    worst = {n: (ours.get(n, {}).get("count", 0), theirs.get(n, {}).get("count", 0)) for n in worst
             if ours.get(n, {}).get("count", 0) != theirs.get(n, {}).get("count", 0)}
    return matched / total, ratio, worst


def kernel_table_from_records(records):
    out = {}
    for k in records.of("kernel"):
        n = k.get("demangled", k["name"])
        e = out.setdefault(n, {"count": 0, "total_ns": 0.0})
        e["count"] += 1
        if k["start"] and k["end"]:
            e["total_ns"] += k["end"] - k["start"]
    return out


def parse_answer(stdout):
    for line in stdout.splitlines():
        if line.startswith("KNOWN_ANSWER "):
            return json.loads(line[len("KNOWN_ANSWER "):])
    return None


# ----- running things on the GPU machine -----------------------------------------------------------------------

class Pack:
    """What scripts/gpu-check packed (PACK/gprof-run/ the install tree, PACK/apps/ the programs, PACK/tests/gpu/ the
    scripts), or a build tree (build/bin, build/tests/apps; the scripts from this source tree): the CPU-only tests
    run the real checks against the build tree, where each finds no CUDA device."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        here = os.path.dirname(os.path.abspath(__file__))
        if os.path.exists(os.path.join(self.root, "CMakeCache.txt")):
            installed, self.apps, scripts = self.root, os.path.join(self.root, "tests", "apps"), here
            self.example = os.path.join(self.root, "examples", "gprof-example-nvtx")
            self.driver_calls_header = os.path.join(here, "..", "..", "formats", "include", "gprof", "trace",
                                                    "runtime_driver_calls.h")
        else:
            installed, self.apps = os.path.join(self.root, "gprof-run"), os.path.join(self.root, "apps")
            scripts = os.path.join(self.root, "tests", "gpu")
            self.example = os.path.join(installed, "share", "doc", "gprof-run", "examples", "gprof-example-nvtx")
            self.driver_calls_header = os.path.join(scripts, "runtime_driver_calls.h")
        self.gprof_run = os.path.join(installed, "bin", "gprof-run")
        self.gprof_report = os.path.join(installed, "bin", "gprof-report")
        self.dump = os.path.join(self.apps, "gprof-test-trace-dump")
        self.pm_probe = os.path.join(self.apps, "gprof-test-pm-sampling-probe")
        self.cupti_client = os.path.join(self.apps, "gprof-test-cupti-client")
        self.train = os.path.join(scripts, "train.py")
        # CUPTI 12.9 (nvidia-cuda-cupti-cu12 12.9.79, fetched by scripts/setup), for the issue 34 check
        self.cupti12 = (os.path.join(self.root, "cupti12", "libcupti.so.12") if installed != self.root else
                        os.path.join(here, "..", "..", ".deps", "cupti-wheels", "12.9.79", "nvidia", "cuda_cupti", "lib",
                                     "libcupti.so.12"))
        self.compiled = os.path.join(scripts, "compiled_graphs.py")
        self.frameworks = os.path.join(scripts, "frameworks.py")

    def app(self, variant):
        return os.path.join(self.apps, "gprof-test-ka" if variant == "static" else "gprof-test-ka-shared")

    def missing(self):
        """The programs every run needs that are not there (or not executable)."""
        return [p for p in (self.gprof_run, self.gprof_report, self.dump, self.app("static")) if not os.access(p, os.X_OK)]


def launcher_cmd(pack, run_dir, argv, capture=None, capture_end=None, graph_trace=None, backtrace=False,
                 nested_driver_calls=False, cuda_api=None, trace=None, sample=None, gpu_metrics=None):
    """The gprof-run command line (launcher/src/options.cpp). The one place that knows its options."""
    cmd = [pack.gprof_run, "-o", run_dir, "-f", "--summary", "none", "--no-timeline"]
    if capture and capture != "none":
        cmd += ["-c", capture]
        if capture_end:
            cmd += ["--capture-range-end", capture_end]
    if graph_trace:
        cmd += [f"--cuda-graph-trace={graph_trace}"]
    if backtrace:
        cmd += ["--backtrace"]
    if nested_driver_calls:
        cmd += ["--cuda-nested-driver-calls"]
    if cuda_api:
        cmd += [f"--cuda-api={cuda_api}"]
    if trace:
        cmd += ["-t", trace]
    if sample:
        cmd += ["-s", sample]
    if gpu_metrics:
        cmd += ["--gpu-metrics-devices", gpu_metrics]
    return cmd + ["--"] + argv


def find_nsys():
    """nsys on PATH, else the one an Nsight install keeps under /opt (the H100 machine has Nsight Systems inside
    Nsight Compute: `find /opt -name nsys -type f`); None when there is none."""
    found = shutil.which("nsys")
    if found:
        return found
    candidates = []
    for root, dirs, files in os.walk("/opt"):
        if root.count(os.sep) > 8:
            dirs[:] = []
            continue
        if "nsys" in files:
            path = os.path.join(root, "nsys")
            if os.path.isfile(path) and os.access(path, os.X_OK):
                candidates.append(path)
    # the launcher script in bin/ over the per-target binary; newest version last in sort order
    candidates.sort(key=lambda p: (os.sep + "bin" + os.sep in p, p))
    return candidates[-1] if candidates else None


def app_env(pack, extra=None):
    env = dict(os.environ)
    lib = os.path.join(pack.apps, "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.update(extra or {})
    return env


def timed(cmd, env=None, timeout=300, cwd=None):
    """(exit status, wall ns, stdout, stderr); within the running check's time limit (budget.run_process)."""
    return budget.run_process(cmd, env=env, timeout=timeout, cwd=cwd)


def load_run(pack, run_dir):
    traces = sorted(glob.glob(os.path.join(run_dir, "**", "*.gprof"), recursive=True))
    if not traces:
        r = Records()
        r.errors.append({"message": f"no *.gprof trace in {run_dir}"})
        return r, traces
    rc, _, out, err = timed([pack.dump] + traces, timeout=600)
    r = Records.from_lines(out.splitlines())
    if rc not in (0, 2):
        r.errors.append({"message": f"gprof-test-trace-dump exit {rc}: {err.strip()[:300]}"})
    return r, traces


def report_json(pack, run_dir, reports, options=()):
    """`gprof-report REPORT... [OPTIONS] --format json RUN_DIR` parsed, or raises RuntimeError."""
    rc, _, out, err = timed([pack.gprof_report] + list(reports) + list(options) + ["--format", "json", run_dir],
                            timeout=600)
    if rc != 0:
        raise RuntimeError(f"gprof-report exit {rc}: {err.strip()[:300]}")
    return json.loads(out)


KNOWN_MODES = ["kernels", "memcpy", "memset", "streams", "tiny", "latency", "api", "memcpy-loop", "large", "graph", "range",
               "threads", "nvtx", "fork", "abort", "memory"]
REPORT_MODES = {"kernels", "memcpy", "memset", "streams", "large", "graph", "range", "threads", "nvtx", "fork", "abort",
                "memory"}  # every report checked against the answer (the big timed modes: raw records only)
SHARED_MODES = ["kernels", "memcpy", "tiny", "nvtx", "fork"]


def no_device_reason(stderr):
    """The line a program printed when it found no CUDA device (exit 77), as the reason every later check skips."""
    lines = [l for l in stderr.strip().splitlines() if "no CUDA device" in l]
    return (lines[-1] if lines else "no CUDA device (exit 77)")[:240]


def bare_answer(ctx, app, mode, label):
    """The known answer of `app mode` run bare (it must work on this machine); None after a SKIP or FAIL verdict.
    No CUDA device: ctx.skip_rest is set, so the runner skips every later check."""
    rc, _, out, err = timed([app, mode], env=app_env(ctx.pack))
    bare = parse_answer(out)
    if rc == EXIT_NO_DEVICE:
        ctx.skip_rest = no_device_reason(err)
        ctx.v.add("SKIP", f"{label}:{mode}", ctx.skip_rest)
        return None
    if bare is None or (rc != 0 and mode != "abort"):
        ctx.v.add("FAIL", f"{label}:{mode}:bare-run", f"exit {rc}: {err.strip()[:300]}")
        return None
    return bare


def add_all(v, results):
    for status, name, fig in results:
        v.add(status, name, fig)


def known_mode(ctx, variant, mode, reports=None, run_name=None, bare=None, label=None, expect=None, env=None,
               **gprof_options):
    """One mode of a known-answer app under gprof-run: the raw records, and (report modes) every report, against the
    answer the app printed. bare: the answer of a bare run made already (else one is made here); label: the
    verdicts' prefix (default ka-VARIANT); expect: what a run with these options must hold of the answer (e.g. no API
    calls under --cuda-api=off); env: more environment of the gprof-run (GPROF_CUPTI_LIB). Returns (answer, records,
    run_dir), or None when it could not run."""
    pack, v = ctx.pack, ctx.v
    app, label = pack.app(variant), label or f"ka-{variant}"
    bare = bare or bare_answer(ctx, app, mode, label)
    if bare is None:
        return None
    run_dir = ctx.run_dir(run_name or f"{label}-{mode}")
    rc, wall, out, err = timed(launcher_cmd(pack, run_dir, [app, mode], bare["capture"], **gprof_options),
                               env=app_env(pack, env))
    answer = parse_answer(out) or bare
    if rc not in ((134, -6) if mode == "abort" else (0,)):
        v.add("FAIL", f"{label}:{mode}:exit", f"exit {rc} under gprof-run: {err.strip()[-400:]}")
        if mode != "abort":
            return None
    records, _ = load_run(pack, run_dir)
    add_all(v, check_known_answer(expect(answer) if expect else answer, records, wall, label))
    if reports if reports is not None else mode in REPORT_MODES:
        docs, problems = gather_reports(pack.gprof_report, run_dir, ctx.work)
        for p in problems:
            v.add("FAIL", f"{label}:{mode}:gprof-report", p)
        add_all(v, check_reports(answer, docs, label))
    if mode in ("kernels", "tiny", "streams") and variant == "static":
        try:
            doc = report_json(pack, run_dir, ["cuda_gpu_kern_sum", "cuda_api_sum"])
            add_all(v, check_report_agrees(doc, records, f"{label}:{mode}"))
        except (RuntimeError, ValueError) as e:
            v.add("FAIL", f"{label}:{mode}:report-json", str(e))
    return answer, records, run_dir


def graph_level(ctx):
    """CUDA graphs graph by graph (--cuda-graph-trace=graph): one GraphLaunch per launch instead of its nodes, and
    every report shows them as GPU work. (Node by node, the default, is the "graph" mode.)"""
    pack, v = ctx.pack, ctx.v
    app = pack.app("static")
    if bare_answer(ctx, app, "graph", "ka-static-graph-level") is None:
        return
    run_dir = ctx.run_dir("ka-static-graph-level")
    rc, wall, out, err = timed(launcher_cmd(pack, run_dir, [app, "graph"], graph_trace="graph"), env=app_env(pack))
    bare = parse_answer(out)
    if rc != 0 or bare is None:
        v.add("FAIL", "ka-static-graph-level:exit", f"exit {rc}: {err.strip()[-400:]}")
        return
    answer = graph_level_answer(bare)
    records, _ = load_run(pack, run_dir)
    add_all(v, check_known_answer(answer, records, wall, "ka-static-graph-level"))
    docs, problems = gather_reports(pack.gprof_report, run_dir, ctx.work)
    for p in problems:
        v.add("FAIL", "ka-static-graph-level:gprof-report", p)
    add_all(v, check_reports(answer, docs, "ka-static-graph-level"))


def nvtx_capture(ctx):
    """NVTX capture range: only what runs inside "compute" may be recorded. The app has 3 "compute" ranges of 20
    kernels each: --capture-range-end repeat records all three, the default (stop) the first one only."""
    pack, v = ctx.pack, ctx.v
    app = pack.app("static")
    if bare_answer(ctx, app, "nvtx", "capture:nvtx") is None:
        return
    for end, expected in (("repeat", 60), (None, 20)):
        label = "capture:nvtx:compute" + (":" + end if end else "")
        run_dir = ctx.run_dir("ka-static-nvtx-capture" + ("-" + end if end else ""))
        rc, wall, out, err = timed(launcher_cmd(pack, run_dir, [app, "nvtx"], "nvtx:compute", end), env=app_env(pack))
        records, _ = load_run(pack, run_dir)
        names = {}
        for k in records.of("kernel"):
            names[k["name"]] = names.get(k["name"], 0) + 1
        ok = rc == 0 and names.get("ka_nvtx_compute", 0) == expected and names.get("ka_nvtx_setup", 0) == 0
        v.add("PASS" if ok else "FAIL", label, f"exit={rc} kernels={names} expected ka_nvtx_compute={expected} only")


def median(xs):
    return statistics.median(xs) if xs else float("nan")


# ----- overhead: every way of recording side by side (issue 17) -----------------------------------------------------
# The issue's table: one row per workload, one column per profiler or collector variant, each the median over
# alternating rounds divided by the bare program's median. The default ("gprof-run") is whichever variant wins on the
# GPU; until a GPU run decides, it stays CUPTI activity records for API calls (docs/performance.md).

# (name, extra gprof-run arguments, extra environment): the collector's alternatives (docs/environment.md).
GPROF_VARIANTS = [
    ("gprof-run", [], {}),
    ("api=callback", ["--cuda-api=callback"], {}),
    ("api=off", ["--cuda-api=off"], {}),
    ("zeroed-buffers", [], {"GPROF_CUPTI_ZEROED_BUFFERS": "1"}),
    ("device-buffer=32MiBx6", [], {"GPROF_CUPTI_DEVICE_BUFFER_MB": "32", "GPROF_CUPTI_PREALLOCATE": "6"}),
]
# Call sites (issue 18): their cost on a PyTorch step, a row of its own (docs/performance.md "Native call sites").
CALL_SITE_VARIANTS = [
    ("backtrace", ["--backtrace"], {}),
    ("cudabacktrace=kernel", ["--cudabacktrace=kernel"], {}),
]
# workload -> (what it is, goal for the default gprof-run as a ratio to bare; None: no goal)
OVERHEAD_WORKLOADS = {
    "tiny": ("100 000 tiny kernels on one stream", 1.20),
    "latency": ("32 dependent tiny kernels + sync per iteration", 1.30),
    "api": ("cheap API calls (event record + query)", 2.0),
    "memcpy-loop": ("20 000 x 4 KiB H2D + D2H async copies", None),
    "large": ("few large kernels", 1.002),
    "pytorch": ("PyTorch training step with sync", 1.05),
    "pytorch-call-sites": ("PyTorch training step, call sites on", None),
}
CUDA_WORKLOADS = ("tiny", "latency", "api", "memcpy-loop", "large")
NSYS_ARGS = ["profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none", "--force-overwrite=true"]


def overhead_variants(nsys, torch_profiler):
    """The columns of the table, in the order a round starts from: bare first, then ours, then the others."""
    names = ["bare"] + [name for name, _, _ in GPROF_VARIANTS]
    if nsys:
        names.append("nsys")
    if torch_profiler:
        names.append("torch.profiler")
    return names


def round_order(variants, rnd):
    """Round rnd starts at a different variant each time, so none always runs first (warm caches, clocks)."""
    k = rnd % len(variants)
    return variants[k:] + variants[:k]


def variant_command(pack, nsys, name, run_dir, argv, torch_argv=None):
    """(command, extra environment) of one variant running argv; torch_argv: the torch.profiler form of argv."""
    if name == "bare":
        return argv, {}
    if name == "nsys":
        return [nsys] + NSYS_ARGS + ["-o", run_dir] + argv, {}
    if name == "torch.profiler":
        return torch_argv, {}
    for vname, extra, env in GPROF_VARIANTS + CALL_SITE_VARIANTS:
        if vname == name:
            cmd = launcher_cmd(pack, run_dir, argv)
            sep = cmd.index("--")
            return cmd[:sep] + extra + cmd[sep:], env
    raise ValueError(f"unknown variant {name}")


def overhead_ratios(samples):
    """{workload: {variant: median / bare median}} from {workload: {variant: [figures]}}; workloads without bare
    figures are left out, variants without figures are None."""
    out = {}
    for wl, by_variant in samples.items():
        base = median(by_variant.get("bare", []))
        if not by_variant.get("bare") or not base or base != base:
            continue
        out[wl] = {name: (median(xs) / base if xs else None) for name, xs in by_variant.items() if name != "bare"}
    return out


def overhead_table(samples, rounds):
    """The issue's table in Markdown: a row per workload, a column per variant (ratio to bare), the goal, and which
    of our variants was fastest."""
    ratios = overhead_ratios(samples)
    columns = []
    for wl in ratios:
        for name in ratios[wl]:
            if name not in columns:
                columns.append(name)
    ours = [name for name, _, _ in GPROF_VARIANTS]
    lines = ["| workload | " + " | ".join(columns) + " | goal | fastest of ours |",
             "|---" * (len(columns) + 3) + "|"]
    for wl, row in ratios.items():
        what, goal = OVERHEAD_WORKLOADS.get(wl, (wl, None))
        cells = [f"{row[c]:.3f}x" if row.get(c) is not None else "-" for c in columns]
        mine = {c: row[c] for c in ours if row.get(c) is not None}
        best = min(mine, key=mine.get) if mine else "-"
        lines.append(f"| {what} | " + " | ".join(cells) + f" | {f'<= {goal:g}x' if goal else '-'} | {best} |")
    lines.append(f"(median of {rounds} alternating rounds per cell, divided by the bare program's median)")
    return "\n".join(lines)


def overhead_verdicts(samples):
    """(status, name, figures) per workload: the default gprof-run against its goal, and what every variant gave."""
    out = []
    for wl, row in overhead_ratios(samples).items():
        what, goal = OVERHEAD_WORKLOADS.get(wl, (wl, None))
        default = row.get("gprof-run")
        figs = "; ".join(f"{name} {r:.3f}x" for name, r in row.items() if r is not None)
        if default is None:
            out.append(("FAIL", f"overhead:{wl}", "no figure for the default gprof-run; " + figs))
            continue
        ok = goal is None or default <= goal
        out.append(("PASS" if ok else "FAIL", f"overhead:{wl}",
                    (f"goal <= {goal}x; " if goal else "no goal; ") + figs))
    return out


def time_variants(ctx, rounds, workload, variants, argv, figure, torch_argv=None, env=None):
    """Runs every variant `rounds` times in alternating order; {variant: [figure(stdout)]}, or None after a failure
    (said as a verdict). The default gprof-run's first run is checked for dropped records."""
    pack, v = ctx.pack, ctx.v
    nsys = find_nsys()
    samples = {name: [] for name in variants}
    for rnd in range(rounds):
        for name in round_order(variants, rnd):
            run_dir = os.path.join(ctx.work, f"ovh-{workload}-{name}-{rnd}".replace("=", "-"))
            cmd, extra = variant_command(pack, nsys, name, run_dir, argv, torch_argv)
            run_env = dict(env if env is not None else os.environ)
            run_env.update(extra)
            rc, wall, out, err = timed(cmd, env=run_env, timeout=900)
            if rc == EXIT_NO_DEVICE:
                v.add("SKIP", f"overhead:{workload}", "no CUDA device")
                return None
            fig = figure(out) if rc == 0 else None
            if fig is None:
                v.add("FAIL", f"overhead:{workload}", f"{name} exit {rc}: {err.strip()[-300:]}")
                return None
            samples[name].append(fig)
            if name == "gprof-run" and rnd == 0 and workload != "pytorch":
                records, _ = load_run(pack, run_dir)
                d = sum(x["count"] for x in records.of("dropped"))
                if d:
                    v.add("FAIL", f"overhead:{workload}:dropped", f"gprof-run dropped {d} records")
            shutil.rmtree(run_dir, ignore_errors=True)
    return samples


def per_iter_figure(out):
    ans = parse_answer(out)
    return ans["timing"]["per_iter_ns"] if ans else None


def step_figure(out):
    res = train_result(out)
    return res["step_median_ns"] if res else None


def record_overhead(ctx, samples, rounds):
    """Verdicts, the table (printed) and the figures (results["overhead"], merged with an earlier group's)."""
    for status, name, figs in overhead_verdicts(samples):
        ctx.v.add(status, name, figs + f"; median of {rounds}", samples.get(name.split(":")[1]))
    o = ctx.results.setdefault("overhead", {})
    o.setdefault("samples", {}).update(samples)
    o["ratios"] = overhead_ratios(o["samples"])
    o["nsys"] = find_nsys()
    o.setdefault("rounds", {}).update({wl: rounds for wl in samples})
    o["table"] = overhead_table(o["samples"], rounds)
    budget.show("OVERHEAD TABLE" + (" (nsys not found)" if not o["nsys"] else f" (nsys: {o['nsys']})"))
    budget.show(o["table"])


def overhead_cuda(ctx, rounds):
    """The CUDA workloads of the known-answer app, every variant, `rounds` alternating rounds."""
    app = ctx.pack.app("static")
    variants = overhead_variants(find_nsys(), False)
    samples = {}
    for wl in CUDA_WORKLOADS:
        got = time_variants(ctx, rounds, wl, variants, [app, wl], per_iter_figure, env=app_env(ctx.pack))
        if got:
            samples[wl] = got
    record_overhead(ctx, samples, rounds)


def overhead_pytorch(ctx, rounds, steps=300):
    """train.py's step time: bare, every variant, nsys and torch.profiler."""
    if not have_torch():
        ctx.v.add("SKIP", "overhead:pytorch", "PyTorch with CUDA not importable by " + sys.executable)
        return
    train = [sys.executable, ctx.pack.train, "--steps", str(steps)]
    got = time_variants(ctx, rounds, "pytorch", overhead_variants(find_nsys(), True), train + ["--mode", "bare"],
                        step_figure, torch_argv=train + ["--mode", "torchprof"])
    if not got:
        return
    ratios = overhead_ratios({"pytorch": got})["pytorch"]
    if ratios.get("torch.profiler") is not None and ratios.get("gprof-run") is not None:
        ok = ratios["gprof-run"] < ratios["torch.profiler"]
        ctx.v.add("PASS" if ok else "FAIL", "overhead:pytorch:vs-torch.profiler",
                  f"gprof-run {ratios['gprof-run']:.3f}x, torch.profiler {ratios['torch.profiler']:.3f}x")
    record_overhead(ctx, {"pytorch": got}, rounds)


def overhead_call_sites(ctx, rounds, steps=300):
    """What call sites cost a PyTorch step on a real driver: train.py bare, under gprof-run, with --backtrace and
    with --cudabacktrace=kernel."""
    if not have_torch():
        ctx.v.add("SKIP", "overhead:pytorch-call-sites", "PyTorch with CUDA not importable by " + sys.executable)
        return
    train = [sys.executable, ctx.pack.train, "--steps", str(steps), "--mode", "bare"]
    variants = ["bare", "gprof-run"] + [name for name, _, _ in CALL_SITE_VARIANTS]
    got = time_variants(ctx, rounds, "pytorch-call-sites", variants, train, step_figure)
    if got:
        record_overhead(ctx, {"pytorch-call-sites": got}, rounds)


def have_torch():
    rc, _, _, _ = timed([sys.executable, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)"])
    return rc == 0


def result_line(out, tag):
    """The JSON of the first line "TAG {json}" in a program's output; None when there is none."""
    for line in out.splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    return None


def train_result(out):
    return result_line(out, "TRAIN_RESULT")


def compiled_result(out):
    return result_line(out, "COMPILED_RESULT")


def framework_result(out):
    return result_line(out, "FRAMEWORK_RESULT")


def graph_replays(records):
    """(graph launch API calls, {correlation: node records}) of a run: the nodes each replay ran."""
    launches = [a for a in records.of("api_call") if normalize_api_name(a["name"]) in GRAPH_LAUNCH_APIS]
    nodes = {}
    for k in activity_records(records):
        if k.get("graph_id", 0):
            nodes.setdefault(k.get("correlation"), []).append(k)
    return launches, nodes


def torch_compiled(ctx, replays=50):
    """torch.compile(mode="reduce-overhead"): CUDA graph replays, node by node and graph by graph."""
    pack, v = ctx.pack, ctx.v
    if not have_torch():
        v.add("SKIP", "torch.compile", "PyTorch with CUDA not importable by " + sys.executable)
        return
    cmd = [sys.executable, pack.compiled, "--replays", str(replays)]
    for mode in ("node", "graph"):
        label = f"torch.compile:{mode}"
        run_dir = ctx.run_dir(f"torch-compiled-{mode}")
        rc, _, out, err = timed(launcher_cmd(pack, run_dir, cmd, graph_trace=mode), timeout=900)
        res = compiled_result(out)
        if rc == EXIT_NO_DEVICE:
            v.add("SKIP", label, err.strip()[-200:])
            return
        if rc != 0 or res is None:
            v.add("FAIL", label, f"exit {rc}: {err.strip()[-400:]}")
            continue
        records, _ = load_run(pack, run_dir)
        launches, nodes = graph_replays(records)
        if mode == "node":
            sizes = sorted({len(n) for n in nodes.values()})
            kernels = {len([k for k in n if k.get("k") == "kernel"]) for n in nodes.values()}
            ok = len(launches) >= replays and len(nodes) == len(launches) and len(sizes) == 1 and sizes[0] > 0
            v.add("PASS" if ok else "FAIL", label + ":kernels-per-replay",
                  f"graph launches={len(launches)} (replays asked {replays}) with nodes={len(nodes)}; "
                  f"ops per replay={sizes} kernels per replay={sorted(kernels)}")
            ctx.results.setdefault("compiled", {})["ops_per_replay"] = sizes
        else:
            glaunch = records.of("graph_launch")
            try:
                doc = report_json(pack, run_dir, ["cuda_gpu_sum"])
                shown = sum(r["instances"] for r in report_rows(doc, "cuda_gpu_sum") if r.get("category") == "CUDA_GRAPH")
            except (RuntimeError, ValueError, KeyError) as e:
                shown = f"error: {e}"
            ok = len(glaunch) == len(launches) >= replays and not nodes and shown == len(glaunch)
            v.add("PASS" if ok else "FAIL", label + ":graph-launches",
                  f"graph_launch records={len(glaunch)} cudaGraphLaunch calls={len(launches)} (replays asked "
                  f"{replays}), node records={sum(len(n) for n in nodes.values())}, cuda_gpu_sum CUDA_GRAPH={shown}")


def pytorch_vs_torch_profiler(ctx, steps=300):
    """gprof-run's kernels of train.py against torch.profiler's; torch.profiler inside gprof-run exits normally."""
    pack, v = ctx.pack, ctx.v
    if not have_torch():
        v.add("SKIP", "pytorch", "PyTorch with CUDA not importable by " + sys.executable)
        return
    train = [sys.executable, pack.train, "--steps", str(steps)]
    # (a) gprof-run python3 train.py
    run_dir = ctx.run_dir("torch-gprof")
    rc, wall, out, err = timed(launcher_cmd(pack, run_dir, train + ["--mode", "bare"]), timeout=900)
    if rc != 0:
        v.add("FAIL", "pytorch:gprof-run", f"exit {rc}: {err.strip()[-400:]}")
        return
    records, _ = load_run(pack, run_dir)
    ours = kernel_table_from_records(records)
    # (b) torch.profiler in the same script
    kfile = os.path.join(ctx.work, "torch-kernels.json")
    rc, _, out, err = timed(train + ["--mode", "torchprof", "--kernels", kfile], timeout=900)
    if rc != 0:
        v.add("FAIL", "pytorch:torch.profiler", f"exit {rc}: {err.strip()[-400:]}")
        return
    with open(kfile) as f:
        theirs = json.load(f)["kernels"]
    share, ratio, worst = compare_kernel_tables(ours, theirs)
    ok = share >= PYTORCH_MATCH_MIN and abs(ratio - 1) <= PYTORCH_TIME_TOL
    n_ours, n_theirs = sum(x["count"] for x in ours.values()), sum(x["count"] for x in theirs.values())
    v.add("PASS" if ok else "FAIL", "pytorch:vs-torch.profiler",
          f"launches gprof={n_ours} torch={n_theirs} matched={share * 100:.2f}% (min {PYTORCH_MATCH_MIN * 100:.0f}%) "
          f"kernel time ratio={ratio:.4f} (within {PYTORCH_TIME_TOL * 100:.0f}%) names gprof={len(ours)} torch={len(theirs)}"
          + (f" worst={worst}" if worst else ""))
    dropped = sum(x["count"] for x in records.of("dropped"))
    v.add("PASS" if dropped == 0 else "FAIL", "pytorch:dropped", f"dropped={dropped}")
    ctx.results.setdefault("pytorch", {})["agreement"] = {"share": share, "time_ratio": ratio, "gprof": n_ours,
                                                          "torch": n_theirs}
    # torch.profiler inside a gprof-run'd process: one CUPTI subscriber; both must survive
    rc, _, out, err = timed(launcher_cmd(pack, ctx.run_dir("torch-both"), train + ["--mode", "torchprof"]),
                            timeout=900)
    res = train_result(out)
    v.add("PASS" if rc == 0 else "FAIL", "pytorch:coexist-with-torch.profiler",
          f"exit={rc} torch.profiler kernels={res.get('kernel_launches') if res else None}")


FRAMEWORK_PROGRAMS = ["jax", "cupy", "triton", "compile", "dataloader", "spawn"]


# A process's first line in the summary (report/reports/reports.cpp, report/model/identity.cpp's process_label):
# "  process PID: CMD (...)", or with a rank "  rank N @ HOST (pid PID): CMD (...)", or on several hosts
# "  EXE @ HOST (pid PID): CMD (...)".
SUMMARY_PROCESS_LINE = re.compile(r"^  (?:process \d+|\S.* @ .* \(pid \d+\)): ", re.M)


def summary_process_lines(summary_text):
    return SUMMARY_PROCESS_LINE.findall(summary_text)


def check_framework_run(label, res, doc, summary_text):
    """What must hold of one framework program's run under gprof-run (issue #13). Returns [(status, name, figures)]."""
    out = []

    def add(ok, what, figures):
        out.append(("PASS" if ok else "FAIL", f"{label}:{what}", figures))

    procs = doc["reports"]["summary"].get("header", {}).get("processes", [])
    gpu = [p for p in procs if p.get("gpu_work")]
    ops = sum(w["ops"] for p in gpu for w in p["gpu_work"])
    add(len(gpu) == res["gpu_processes"] and ops > 0, "gpu-work",
        f"processes with GPU work={len(gpu)} expected={res['gpu_processes']}; GPU ops={ops}; processes={len(procs)}")
    incomplete = [p["pid"] for p in procs if not p.get("complete")]
    alarms = [(p["pid"], s) for p in procs for s in p.get("status", []) if " warning: " in s or " error: " in s]
    add(not incomplete and not alarms, "no-false-warning", f"incomplete={incomplete} warnings={alarms[:3]}")
    helpers = sum(1 for p in procs if p.get("helper"))
    shown = len(summary_process_lines(summary_text))
    folded = "helper process" in summary_text
    add(shown == len(procs) - helpers and folded == (helpers > 0), "summary-about-the-program",
        f"process lines={shown} of {len(procs)} processes, helpers={helpers} folded={folded}")
    if "launches" in res:
        kern = [r for r in report_rows(doc, "cuda_gpu_kern_sum") if res["kernel"] in r.get("name", "")]
        n = sum(r["instances"] for r in kern)
        add(n == res["launches"], "kernels", f"{res['kernel']} instances={n} launched={res['launches']}")
    if "ranks" in res:
        roles = sorted(p.get("role", "") for p in gpu)
        want = sorted(f"RANK={r} LOCAL_RANK={r} WORLD_SIZE={res['ranks']}" for r in range(res["ranks"]))
        add(roles == want, "roles", f"roles={roles} expected={want}")
    if "workers" in res:
        add(len(procs) >= 1 + res["workers"], "workers", f"processes={len(procs)} (1 + {res['workers']} workers)")
    return out


def framework_bare_and_traced(ctx, program, trace=None):
    """frameworks.py PROGRAM bare and under gprof-run: (bare result, traced result, run dir, traced stdout), or
    None after a SKIP or FAIL verdict. Same stdout and exit status is a verdict of its own."""
    pack, v = ctx.pack, ctx.v
    label = f"framework:{program}"
    cmd = [sys.executable, pack.frameworks, program]
    rc, _, bare_out, err = timed(cmd, timeout=900)
    if rc == EXIT_NO_DEVICE:
        v.add("SKIP", label, err.strip()[-200:])
        return None
    bare = framework_result(bare_out)
    if rc != 0 or bare is None:
        v.add("FAIL", label + ":bare", f"exit {rc}: {err.strip()[-400:]}")
        return None
    run_dir = ctx.run_dir(f"framework-{program}")
    rc2, _, out, err = timed(launcher_cmd(pack, run_dir, cmd, trace=trace), timeout=900)
    res = framework_result(out)
    strip = (lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("FRAMEWORK_RESULT "))) \
        if program == "profiler" else (lambda t: t)
    v.add("PASS" if rc2 == rc and strip(out) == strip(bare_out) else "FAIL", label + ":same-output",
          f"exit bare={rc} gprof-run={rc2}; stdout {'same' if strip(out) == strip(bare_out) else 'differs'}"
          + (f": {err.strip()[-300:]}" if rc2 != rc else ""))
    if res is None:
        return None
    return bare, res, run_dir


def framework(ctx, program):
    """One framework program (issue #13): same stdout and status, GPU work in the right processes, no false
    warning, a summary about the program (helpers folded)."""
    got = framework_bare_and_traced(ctx, program)
    if got is None:
        return
    bare, res, run_dir = got
    label = f"framework:{program}"
    try:
        doc = report_json(ctx.pack, run_dir, ["summary", "cuda_gpu_kern_sum"])
        _, _, text, _ = timed([ctx.pack.gprof_report, "summary", run_dir], timeout=600)
    except (RuntimeError, ValueError) as e:
        ctx.v.add("FAIL", label + ":gprof-report", str(e))
        return
    add_all(ctx.v, check_framework_run(label, res, doc, text))


def check_profiler_told(bare, traced, status_lines, nvtx_only):
    """torch.profiler inside gprof-run: it sees its kernels, or exactly one status line names it and the way out
    (`-t nvtx`); under `-t nvtx` it sees as many kernels as bare. Returns [(status, name, figures)]."""
    said = [s for s in status_lines if "-t nvtx" in s]
    ok = traced["profiler_kernels"] == bare["profiler_kernels"] or len(said) == 1
    out = [("PASS" if ok else "FAIL", "framework:profiler:told",
            f"torch.profiler kernels bare={bare['profiler_kernels']} under gprof-run={traced['profiler_kernels']}; "
            f"lines naming the way out={len(said)}" + (f": {said[0][:200]}" if said else ""))]
    got = nvtx_only.get("profiler_kernels") if nvtx_only else None
    out.append(("PASS" if got == bare["profiler_kernels"] else "FAIL", "framework:profiler:way-out",
                f"-t nvtx: torch.profiler kernels={got} bare={bare['profiler_kernels']}"))
    return out


def torch_profiler_told(ctx):
    """torch.profiler inside gprof-run: with one CUPTI subscriber per process its kernels are missing, and the
    summary says so in one line with the way out; under -t nvtx the program's profiler sees every kernel."""
    got = framework_bare_and_traced(ctx, "profiler")
    if got is None:
        return
    bare, res, run_dir = got
    try:
        doc = report_json(ctx.pack, run_dir, ["summary"])
    except (RuntimeError, ValueError) as e:
        ctx.v.add("FAIL", "framework:profiler:gprof-report", str(e))
        return
    lines = [s for p in doc["reports"]["summary"]["header"]["processes"] for s in p.get("status", [])]
    cmd = [sys.executable, ctx.pack.frameworks, "profiler"]
    rc3, _, out3, err3 = timed(launcher_cmd(ctx.pack, ctx.run_dir("framework-profiler-nvtx"), cmd, trace="nvtx"),
                               timeout=900)
    res3 = framework_result(out3)
    add_all(ctx.v, check_profiler_told(bare, res, lines, res3 if rc3 == 0 else None))
    ctx.data().update({"bare": bare, "gprof": res, "nvtx_only": res3, "nvtx_only_exit": rc3})


def example(ctx, outbox):
    """gprof-run gprof-example-nvtx 50 on the GPU: a small real trace for examples/ and the golden tests, packed
    with the results whatever its verdict."""
    if not os.access(ctx.pack.example, os.X_OK):
        ctx.v.add("SKIP", "example:gprof-example-nvtx", f"not in the pack: {ctx.pack.example}")
        return
    rd = os.path.join(ctx.work, "example-run")
    rc, _, _, err = timed(launcher_cmd(ctx.pack, rd, [ctx.pack.example, "50"]))
    kept = outbox.pack("rest:example", [rd]) if os.path.isdir(rd) else []
    ctx.v.add("PASS" if rc == 0 else "FAIL", "example:gprof-example-nvtx",
              f"exit={rc} run directory packed in {kept or 'nothing'}" + (f": {err.strip()[-200:]}" if rc else ""))


def environment_info(pack):
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "python": sys.version.split()[0]}
    for key, cmd in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]),
                     ("glibc", ["ldd", "--version"]), ("gprof_run", [pack.gprof_run, "--version"]),
                     ("nvcc", ["nvcc", "--version"]), ("nsys", [find_nsys() or "nsys", "--version"])):
        rc, _, out, err = timed(cmd, timeout=60)
        info[key] = (out or err).strip().splitlines()[0] if rc == 0 and (out or err).strip() else f"unavailable (exit {rc})"
    try:
        import importlib.util
        info["torch"] = "present" if importlib.util.find_spec("torch") else "absent"
    except Exception:  # noqa: BLE001
        info["torch"] = "unknown"
    return info


def select_checks(checks, only):
    """The checks `--only` names: groups (smoke, capability, ...) or group:check labels, comma-separated."""
    if not only:
        return list(checks)
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    unknown = wanted - {c.group for c in checks} - {c.label for c in checks}
    if unknown:
        raise SystemExit(f"gpu-check: --only: no group or check named {', '.join(sorted(unknown))} (see --plan)")
    return [c for c in checks if c.group in wanted or c.label in wanted]


def load_registry(path, options):
    """The checks to run, in order: checks.registry(options), or (tests) registry(options) of the module file
    `path`."""
    if not path:
        import checks
        return checks.registry(options)
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpu_check_registry", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.registry(options)


def run_all(args, started):
    pack = Pack(args.run)
    out_dir = args.out or os.environ.get("OUT") or os.path.join(pack.root, "results")
    outbox = budget.Outbox(out_dir, max_bytes=args.archive_bytes or budget.MAX_FILE_BYTES)
    work = tempfile.mkdtemp(prefix="gpu-check-")
    v = Verdicts()
    checks = select_checks(load_registry(args.registry, args), args.only)
    results = {"schema": "gpu-check-results", "version": 2, "pack": pack.root,
               "plan": [{"label": c.label, "estimate_s": c.estimate_s, "basis": c.basis} for c in checks]}
    results["environment"] = {} if args.registry else environment_info(pack)
    for k, val in results["environment"].items():
        budget.show(f"ENV {k}: {val}")
    ctx = budget.Context(pack, work, args, v, results, outbox)
    missing = [] if args.registry else pack.missing()
    if missing:
        ctx.skip_rest = "the pack is incomplete: missing or not executable: " + ", ".join(missing)
        v.add("FAIL", "pack", ctx.skip_rest)
    runner = budget.Runner(outbox, v, results, args.budget, started)
    try:
        code = runner.run(checks, ctx)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            budget.show(f"work directory kept: {work}")
    budget.show(f"results: {os.path.join(out_dir, budget.RESULTS_FILE)}")
    return code


# ----- self-test (runs anywhere: no GPU, no gprof-run) ------------------------------------------------------------

def synthesize_records(answer):
    """Records a perfect profiler would write for this answer (the fixture the self-test starts from)."""
    recs = [{"k": "header", "pid": 100 + i, "features": 0} for i in range(answer.get("processes", 1))]
    recs.append({"k": "device", "id": 0, "name": "NVIDIA H200", "cc_major": 9, "cc_minor": 0, "sm_count": 132})
    t = 1_000_000
    corr = 0
    stream_clock = {}

    def place(stream, dur=1000):
        nonlocal t
        start = max(t, stream_clock.get(stream, 0))
        stream_clock[stream] = start + dur
        t += 10
        return start, start + dur

    def next_corr():
        nonlocal corr
        corr += 1
        return corr

    # API calls first: graph nodes carry the correlation of the graph launch that ran them.
    tids = max(answer.get("threads", 0), 1)
    graph_launch_corrs, launch_corrs = [], []
    for exp in answer["api"]:
        for i in range(exp["count"]):
            c = next_corr()
            if exp["name"] in GRAPH_LAUNCH_APIS:
                graph_launch_corrs.append(c)
            elif "Launch" in exp["name"]:
                launch_corrs.append(c)
            recs.append({"k": "api_call", "name": exp["name"] + "_v7000", "start": t, "end": t + 5,
                         "tid": 1 + i % tids, "correlation": c, "domain": "runtime"})
    for exp in answer["kernels"]:
        for i in range(exp["count"]):
            s = 10 + (i % max(exp["streams"], 1))
            start, end = place(s)
            graph = exp["graph"] and graph_launch_corrs
            name = exp["names"][0]
            recs.append({"k": "kernel", "name": name, "demangled": exp["contains"][0] if exp["contains"] else name,
                         "start": start, "end": end, "device": 0, "stream": s,
                         **spread_dims("grid", exp["grid"]), **spread_dims("block", exp["block"]),
                         "dynamic_shared_bytes": exp["dynamic_shared_bytes"],
                         "correlation": graph_launch_corrs[i % len(graph_launch_corrs)] if graph
                         else launch_corrs.pop(0) if launch_corrs else next_corr(),
                         "graph_id": 5 if exp["graph"] else 0})
    for exp in answer["memcpy"]:
        for i in range(exp["count"]):
            s = 30 + (i % max(exp["streams"], 1))
            start, end = place(s)
            recs.append({"k": "memcpy", "copy_kind": exp["kind"], "src_kind": exp["src"], "dst_kind": exp["dst"],
                         "bytes": exp["bytes"], "start": start, "end": end, "device": 0, "stream": s})
    for exp in answer["memset"]:
        for _ in range(exp["count"]):
            start, end = place(50)
            recs.append({"k": "memset", "bytes": exp["bytes"], "value": exp["value"], "start": start, "end": end,
                         "device": 0, "stream": 50})
    for i in range(answer.get("graph_launches") or 0):
        start, end = place(60)
        recs.append({"k": "graph_launch", "graph_id": 5, "start": start, "end": end, "device": 0, "stream": 60,
                     "correlation": graph_launch_corrs[i % len(graph_launch_corrs)] if graph_launch_corrs else 0})
    # Memory: each kind's allocations, then the releases of all but the live ones (so every allocation is alive
    # at once: device 0's peak is the sum of the device kinds).
    kinds = {"device": "Device", "pool": "Device", "static": "DeviceStatic", "pinned_host": "Pinned",
             "managed": "Managed", "other": "Pageable"}
    address, frees = 0x10000000, []
    for exp in answer.get("memory", []):
        n, live = exp["allocations"], exp["live_count"]
        freed_n, freed_bytes = n - live, exp["bytes"] - exp["live_bytes"]
        sizes = [freed_bytes // freed_n + (freed_bytes % freed_n if i == 0 else 0) for i in range(freed_n)] if freed_n else []
        sizes += [exp["live_bytes"] // live + (exp["live_bytes"] % live if i == 0 else 0) for i in range(live)] if live else []
        for i, size in enumerate(sizes):
            address += 1 << 28
            rec = {"k": "memory", "op": "allocation", "memory_kind": kinds[exp["kind"]], "bytes": size,
                   "address": address, "device": 0, "timestamp": t + len(frees),
                   "pool_type": "local" if exp["kind"] == "pool" else "none"}
            recs.append(rec)
            if i < freed_n and i < exp["releases"]:
                frees.append(dict(rec, op="release"))
    for i, rec in enumerate(frees):
        rec["timestamp"] = t + 1000 + i
        recs.append(rec)
    for exp in answer["nvtx"]:
        for _ in range(exp["count"]):
            recs.append({"k": "nvtx", "name": exp["name"], "start": t, "end": t + 5, "tid": 1})
    if answer.get("capture", "none") != "none":
        recs.append({"k": "capture", "action": "start", "reason": "profiler_api", "timestamp": 1})
        recs.append({"k": "capture", "action": "stop", "reason": "profiler_api", "timestamp": t})
    for _ in range(answer.get("processes", 1)):  # each process's trace ends
        recs.append({"k": "end", "records_written": len(recs), "records_dropped": 0, "signal": 0})
    recs.append({"k": "read", "records": len(recs), "truncated_bytes": 0})
    return recs


def selftest(args):
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.join(here, "fixtures")
    failures = []

    def expect(cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            failures.append(what)

    # 1. answers: from the built app when given (every mode), else the stored fixture
    answers = {}
    if args.apps_dir:
        app = os.path.join(args.apps_dir, "gprof-test-ka")
        rc, _, out, _ = timed([app, "list"])
        expect(rc == 0, f"{app} list")
        for mode in out.split():
            rc, _, o, _ = timed([app, "expect", mode])
            a = parse_answer(o)
            expect(rc == 0 and a is not None and a["mode"] == mode, f"expect {mode} gives a known answer")
            if a:
                answers[mode] = a
        expect(set(KNOWN_MODES) <= set(answers), "every mode gpu-check runs exists in the app")
    with open(os.path.join(fixtures, "answer-kernels.json")) as f:
        answers.setdefault("kernels", json.load(f))

    # 2. a perfect record set passes every check of every mode
    for mode, a in sorted(answers.items()):
        recs = Records.from_lines(json.dumps(r) for r in synthesize_records(a))
        res = check_known_answer(a, recs, wall_ns=10**12, label="self")
        bad = [r for r in res if r[0] != "PASS"]
        expect(not bad, f"perfect records pass for {mode} ({len(res)} checks){' ' + str(bad[:2]) if bad else ''}")

    # 3. each kind of fault is caught
    a = answers["kernels"]

    def mutated(fn):
        recs = synthesize_records(a)
        fn(recs)
        return {r[1]: r[0] for r in check_known_answer(a, Records.from_lines(json.dumps(r) for r in recs), 10**12, "m")}

    def drop_first(kind):
        def f(recs):
            i = next(i for i, r in enumerate(recs) if r["k"] == kind)
            del recs[i]
        return f

    res = mutated(drop_first("kernel"))
    expect(res.get("m:kernels:kernel:ka_vec_add") == "FAIL", "a missing kernel fails its count")

    def wrong_grid(recs):
        next(r for r in recs if r["k"] == "kernel" and r["name"] == "ka_grid2d").update(spread_dims("grid", [1, 1, 1]))
    expect(mutated(wrong_grid).get("m:kernels:kernel:ka_grid2d") == "FAIL", "a wrong grid fails")

    def overlap(recs):
        ks = [r for r in recs if r["k"] == "kernel" and r["stream"] == 10]
        ks[1]["start"] = ks[0]["start"] + 1
    expect(mutated(overlap).get("m:kernels:stream-overlaps") == "FAIL", "an overlap on one stream fails")

    def dropped(recs):
        recs.append({"k": "dropped", "count": 3, "source": "cupti_buffer"})
    expect(mutated(dropped).get("m:kernels:dropped") == "FAIL", "dropped records fail")

    def false_warning(recs):
        recs.append({"k": "status", "level": "warning", "component": "cupti",
                     "message": "the CUDA driver was loaded but never initialised (cuInit failed)"})
    expect(mutated(false_warning).get("m:kernels:complete-no-false-warning") == "FAIL",
           "a 'never initialised' warning fails")
    expect(mutated(drop_first("end")).get("m:kernels:complete-no-false-warning") == "FAIL",
           "a trace without its end record fails")

    def api_short(recs):
        i = next(i for i, r in enumerate(recs) if r["k"] == "api_call" and r["name"].startswith("cudaLaunchKernel"))
        del recs[i]
    expect(mutated(api_short).get("m:kernels:api:cudaLaunchKernel") == "FAIL", "a missing API call fails")

    def no_device(recs):
        recs[:] = [r for r in recs if r["k"] != "device"]
    expect(mutated(no_device).get("m:kernels:devices") == "FAIL", "a run without its Device record fails")

    def beyond_wall(recs):
        next(r for r in recs if r["k"] == "kernel")["end"] += 10**13
    expect(mutated(beyond_wall).get("m:kernels:durations") == "FAIL", "a kernel longer than the app fails")

    expect(normalize_api_name("cudaMemcpyAsync_ptsz_v7000") == "cudaMemcpyAsync", "API names lose _ptsz_vNNNN")

    # 3a. framework runs (issue #13): ranks with their roles and GPU work, helpers folded, nothing false said
    def framework_doc():
        rank = lambda pid, r: {"pid": pid, "complete": True, "helper": False, "status": [],
                               "role": f"RANK={r} LOCAL_RANK={r} WORLD_SIZE=2",
                               "gpu_work": [{"device": r, "ops": 10, "busy_ns": 1000}]}
        procs = [{"pid": 1, "complete": True, "helper": False, "status": [], "role": "", "gpu_work": []},
                 rank(2, 0), rank(3, 1)]
        procs += [{"pid": 10 + i, "complete": True, "helper": True, "status": [], "role": "", "gpu_work": []}
                  for i in range(3)]
        return {"reports": {"summary": {"header": {"processes": procs}}}}
    spawn = {"program": "spawn", "gpu_processes": 2, "ranks": 2}
    # The summary as it is since ranks are named (H200 2026-11-27): the ranks' lines are "rank N @ HOST (pid P)".
    text = ("gprof-run profile: 6 processes\n  process 1: a (a.1.gprof)\n    no GPU work\n"
            "  rank 0 @ vm (pid 2): b (b.2.gprof)\n    parent 1; RANK=0\n  rank 1 @ vm (pid 3): c (c.3.gprof)\n"
            "  3 helper processes ...\n  device 0: NVIDIA H200 (compute capability 9.0)\n")
    fw = lambda doc, t=text: {r[1]: r[0] for r in check_framework_run("f", spawn, doc, t)}
    expect(set(fw(framework_doc()).values()) == {"PASS"}, "a framework run as it should be passes")
    doc = framework_doc()
    doc["reports"]["summary"]["header"]["processes"][4]["complete"] = False
    expect(fw(doc).get("f:no-false-warning") == "FAIL", "a framework helper without its end record fails")
    doc = framework_doc()
    doc["reports"]["summary"]["header"]["processes"][2]["role"] = ""
    expect(fw(doc).get("f:roles") == "FAIL", "a rank without its role fails")
    expect(fw(framework_doc(), text.replace("  3 helper processes ...\n", "")).get("f:summary-about-the-program") ==
           "FAIL", "helpers not folded fail")
    expect(fw(framework_doc(), text.replace("  rank 1 @ vm (pid 3): c (c.3.gprof)\n", "")).get(
        "f:summary-about-the-program") == "FAIL", "a rank missing from the summary fails")

    # 3b. graphs: node by node, every node names its launch; graph by graph, launches replace nodes
    if "graph" in answers:
        g = answers["graph"]
        res = {r[1]: r[0] for r in check_known_answer(g, Records.from_lines(json.dumps(r) for r in synthesize_records(g)),
                                                       10**12, "g")}
        expect(res.get("g:graph:graph-node-correlation") == "PASS", "graph nodes carry their launch's correlation")
        recs = synthesize_records(g)
        for r in recs:
            if r["k"] == "kernel":
                r["correlation"] += 100000
                break
        res = {r[1]: r[0] for r in check_known_answer(g, Records.from_lines(json.dumps(r) for r in recs), 10**12, "g")}
        expect(res.get("g:graph:graph-node-correlation") == "FAIL", "a node without its launch's correlation fails")
        gl = graph_level_answer(g)
        expect(gl["graph_launches"] == 200 and not gl["kernels"] and not gl["memset"],
               "graph-level answer: 200 launches instead of nodes")
        res = check_known_answer(gl, Records.from_lines(json.dumps(r) for r in synthesize_records(gl)), 10**12, "gl")
        bad = [r for r in res if r[0] != "PASS"]
        expect(not bad and any(r[1].endswith("graph-launches") for r in res),
               f"perfect graph-level records pass{' ' + str(bad[:2]) if bad else ''}")
        recs = synthesize_records(gl)
        del recs[next(i for i, r in enumerate(recs) if r["k"] == "graph_launch")]
        res = {r[1]: r[0] for r in check_known_answer(gl, Records.from_lines(json.dumps(r) for r in recs), 10**12, "gl")}
        expect(res.get("gl:graph:graph-launches") == "FAIL", "missing graph launches fail")

    # 3c. memory: pinned host memory counted as device memory is the H100 bug of issue #12
    if "memory" in answers:
        m = answers["memory"]
        recs = synthesize_records(m)
        for r in recs:
            if r["k"] == "memory" and r["memory_kind"] == "Pinned":
                r["memory_kind"] = "Device"
        res = {r[1]: r[0] for r in check_known_answer(m, Records.from_lines(json.dumps(r) for r in recs), 10**12, "m")}
        expect(res.get("m:memory:memory:device-peak") == "FAIL" and res.get("m:memory:memory:pinned_host") == "FAIL",
               "pinned host memory counted as device memory fails")
        recs = [r for r in synthesize_records(m) if not (r["k"] == "memory" and r["op"] == "release"
                                                         and r["memory_kind"] == "Managed")]
        res = {r[1]: r[0] for r in check_known_answer(m, Records.from_lines(json.dumps(r) for r in recs), 10**12, "m")}
        expect(res.get("m:memory:memory:managed") == "FAIL", "an allocation never freed is counted as live")
    expect(find_nsys() is None or os.access(find_nsys(), os.X_OK), "nsys lookup returns an executable or nothing")

    # 3d. the checks of checks.py (capabilities, issues): each passes a correct synthetic run and fails a planted fault
    sys.path.insert(0, here)
    sys.modules.setdefault("gpu_check", sys.modules[__name__])
    import checks  # noqa: E402 - the same directory
    checks.selftest(expect, answers["kernels"])
    expect(len({c.label for c in checks.registry()}) == len(checks.registry()), "every check has its own label")
    expect(all(c.basis.startswith(("H200 ", "H100 ", "guess")) for c in checks.registry()),
           "every estimate says whether it was measured or guessed")

    # 4. the report adapter on a stored gprof-report JSON document
    with open(os.path.join(fixtures, "report-kern-api.json")) as f:
        doc = json.load(f)
    k = report_kernel_counts(doc)
    expect(k.get("ka_vec_add", {}).get("count") == 10 and k.get("void ka_scale<float>(float*, float, int)", {}).get("count") == 7,
           "report adapter reads cuda_gpu_kern_sum")
    expect(report_api_counts(doc).get("cudaLaunchKernel") == 27, "report adapter reads cuda_api_sum")
    recs = Records.from_lines(json.dumps(r) for r in synthesize_records(answers["kernels"]))
    for r in recs.of("kernel"):  # the fixture's demangled name for the templates
        if r["name"].startswith("_Z8ka_scaleIf"):
            r["demangled"] = "void ka_scale<float>(float*, float, int)"
        elif r["name"].startswith("_Z8ka_scaleId"):
            r["demangled"] = "void ka_scale<double>(double*, double, int)"
    agree = {n: s for s, n, _ in check_report_agrees(doc, recs, "r")}
    expect(agree.get("r:report-kernels") == "PASS", "report and raw kernel counts agree on the fixture")

    # 5. torch.profiler comparison arithmetic
    share, ratio, _ = compare_kernel_tables({"a": {"count": 99, "total_ns": 99.0}, "b": {"count": 1, "total_ns": 1.0}},
                                            {"a": {"count": 100, "total_ns": 100.0}})
    expect(abs(share - 0.99) < 1e-9 and abs(ratio - 1.0) < 1e-9, "kernel table comparison: share and time ratio")
    sys.path.insert(0, here)
    import train  # noqa: E402 - the same directory
    tk = train.kernels_from_chrome_trace(os.path.join(fixtures, "torch-trace.json"))
    expect(tk.get("ampere_sgemm", {}).get("count") == 2 and abs(tk["ampere_sgemm"]["total_ns"] - 3500.0) < 1e-6
           and "Memcpy HtoD (Pageable -> Device)" not in tk, "kernels read from a Kineto Chrome trace")

    # 6. the overhead table and verdicts on synthetic figures (issue 17): ratios to bare, goals, the fastest variant
    variants = overhead_variants("/opt/x/nsys", True)
    expect(variants[0] == "bare" and "nsys" in variants and "torch.profiler" in variants
           and all(name in variants for name, _, _ in GPROF_VARIANTS), "every collector variant is a column")
    orders = [round_order(variants, r) for r in range(len(variants))]
    expect(len({o[0] for o in orders}) == len(variants) and all(sorted(o) == sorted(variants) for o in orders),
           "rounds alternate: each variant leads one round, every round runs all")
    fake = Pack("/pack")
    cmd, env = variant_command(fake, "/opt/x/nsys", "api=callback", "/w/d", ["app", "tiny"])
    expect(cmd[-3:] == ["--", "app", "tiny"] and "--cuda-api=callback" in cmd[:cmd.index("--")] and env == {},
           "a collector variant is gprof-run with its option before the program")
    cmd, env = variant_command(fake, "/opt/x/nsys", "zeroed-buffers", "/w/d", ["app", "tiny"])
    expect(env == {"GPROF_CUPTI_ZEROED_BUFFERS": "1"}, "an environment variant carries its variables")
    cmd, _ = variant_command(fake, "/opt/x/nsys", "nsys", "/w/d", ["app", "tiny"])
    expect(cmd[0] == "/opt/x/nsys" and cmd[-2:] == ["app", "tiny"] and "--trace=cuda,nvtx" in cmd, "nsys command")
    cmd, _ = variant_command(fake, None, "torch.profiler", "/w/d", ["py", "train.py"], ["py", "train.py", "--mode", "torchprof"])
    expect(cmd[-1] == "torchprof", "torch.profiler runs the script's profiled mode")
    synth = {
        "tiny": {"bare": [100, 102, 98], "gprof-run": [166, 170, 160], "api=callback": [118, 119, 121],
                 "api=off": [110, 111, 109], "zeroed-buffers": [165, 163, 168], "device-buffer=32MiBx6": [150, 151, 149],
                 "nsys": [127, 126, 128]},
        "large": {"bare": [1000, 1000, 1000], "gprof-run": [1001, 1002, 1001], "api=callback": [],
                  "api=off": [1000, 1000, 1001], "zeroed-buffers": [1003, 1003, 1003],
                  "device-buffer=32MiBx6": [1002, 1002, 1002], "nsys": [1000, 1000, 1000]},
        "pytorch": {"bare": [2000, 2000, 2000], "gprof-run": [2300, 2340, 2350], "api=callback": [2080, 2090, 2100],
                    "api=off": [2050, 2050, 2060], "zeroed-buffers": [2300, 2300, 2300],
                    "device-buffer=32MiBx6": [2290, 2290, 2290], "nsys": [2480, 2480, 2480],
                    "torch.profiler": [3020, 3020, 3020]},
        "broken": {"gprof-run": [1]},  # no bare figures: no row
    }
    ratios = overhead_ratios(synth)
    expect(set(ratios) == {"tiny", "large", "pytorch"}, "a workload without bare figures has no row")
    expect(abs(ratios["tiny"]["gprof-run"] - 1.66) < 1e-9 and abs(ratios["tiny"]["nsys"] - 1.27) < 1e-9
           and ratios["large"]["api=callback"] is None, "ratios are medians over the bare median; no figure: None")
    table = overhead_table(synth, 3)
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ") and "---" not in line}
    expect("| 1.660x |" in rows.get("100 000 tiny kernels on one stream", "") and "api=off |" in rows.get(
        "100 000 tiny kernels on one stream", "").split("<=")[-1], "table row: the default's ratio and the fastest of ours")
    expect("| - |" in rows.get("few large kernels", "") and "<= 1.002x" in rows.get("few large kernels", ""),
           "table row: a missing figure is '-', the goal is shown")
    expect("1.510x" in rows.get("PyTorch training step with sync", "") and "torch.profiler" in table.splitlines()[0],
           "torch.profiler is a column of the PyTorch row")
    verdicts = {name: status for status, name, _ in overhead_verdicts(synth)}
    expect(verdicts == {"overhead:tiny": "FAIL", "overhead:large": "PASS", "overhead:pytorch": "FAIL"},
           "verdicts judge the default gprof-run against each workload's goal")
    expect(per_iter_figure('KNOWN_ANSWER {"mode": "tiny", "timing": {"per_iter_ns": 1234.5}}') == 1234.5
           and per_iter_figure("garbage") is None and step_figure('TRAIN_RESULT {"step_median_ns": 7}') == 7,
           "figures are read from the programs' result lines")

    # 7. a packed folder, when given
    if args.pack:
        p = Pack(args.pack)
        for exe in (p.gprof_run, p.gprof_report, p.dump, p.app("static"), p.app("shared"), p.train, p.pm_probe,
                    p.cupti_client, p.driver_calls_header, os.path.join(p.root, "tests", "gpu", "checks.py"),
                    os.path.join(p.root, "tests", "gpu", "budget.py")):
            expect(os.path.exists(exe), f"pack holds {os.path.relpath(exe, p.root)}")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p.root) for f in fs)
        expect(size <= 64 * 1024 * 1024, f"pack size {size / 2**20:.1f} MiB <= 64 MiB")

    print(f"SELFTEST {'FAILED: ' + str(len(failures)) if failures else 'passed'}")
    return 1 if failures else 0


def main():
    started = time.monotonic()  # the budget counts from here: the environment lines are part of the run
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", metavar="PACK", help="run the checks with this packed folder (on the GPU machine)")
    ap.add_argument("--plan", action="store_true", help="print the run order and estimates for --budget; no GPU")
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S,
                    help=f"seconds the whole run may take (default {DEFAULT_BUDGET_S:g})")
    ap.add_argument("--out", help="where results.json, summary.txt and trace archives go (default $OUT or PACK/results)")
    ap.add_argument("--only", help="comma list of groups (smoke, capability, issues, overhead, frameworks, rest) or "
                                   "group:check labels, as --plan prints them")
    ap.add_argument("--rounds", type=int, default=None, help="alternating rounds of the CUDA overhead workloads")
    ap.add_argument("--pytorch-rounds", type=int, default=None, help="alternating rounds of the PyTorch overhead row")
    ap.add_argument("--keep", action="store_true", help="keep the work directory with every run's traces")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--apps-dir", help="selftest: the built known-answer apps")
    ap.add_argument("--pack", help="selftest: a packed folder to check")
    ap.add_argument("--registry", help=argparse.SUPPRESS)       # tests: a module file with registry(options)
    ap.add_argument("--archive-bytes", type=int, help=argparse.SUPPRESS)  # tests: a smaller trace archive
    args = ap.parse_args()
    if args.selftest:
        return selftest(args)
    if args.plan:
        for line in budget.plan_lines(select_checks(load_registry(args.registry, args), args.only), args.budget):
            print(line)
        return 0
    if args.run:
        try:
            return run_all(args, started)
        except budget.Terminated as t:  # a second signal while the results were being written
            return 128 + t.signum
    ap.print_help()
    return 2


if __name__ == "__main__":
    # checks.py imports this module by name: let it find this copy rather than load a second one.
    sys.modules.setdefault("gpu_check", sys.modules[__name__])
    sys.exit(main())
