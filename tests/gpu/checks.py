"""The registry of gpu-check: every check, its group, its estimate and where the estimate comes from, in run order.

Run order is the order of value (issue #28): (1) a smoke test that shows a total failure at once, (2) one check per
capability that has only ever met the CUPTI stand-in, (3) the checks the open issues add, (4) the overhead table with
few rounds, (5) the framework programs, (6) the rest. budget.Runner skips what no longer fits (SKIP(budget)).

Estimates: measured on the H100 run of 2026-11-22 (../shared/gpu-runs/2026-11-22-h100/: the start times of its run
directories, one second apart at best, and the wall times its logs print) where one exists; otherwise a guess, and the
basis then starts with "guess". The first lease replaces the guesses: results.json has every check's seconds.

Adding a check: a function taking the Context (budget.Context: pack, work, verdicts, results) that adds verdicts and
puts its runs under ctx.run_dir(...) (their traces go back when it fails), its judgment as a pure function the
self-test (gpu_check.selftest) proves can fail, and one Check(...) line in registry() below.

This module also holds the checks of the capabilities (group "capability") and of the issues (group "issues").
"""
import csv
import glob
import io
import json
import math
import os
import re
import shutil
import sys

import gpu_check as g
from budget import Check

CUDA_OVERHEAD_ROUNDS = 2     # "few rounds": the H100 machine's rounds vary by up to +-20 %, medians of 2 still rank
PYTORCH_OVERHEAD_ROUNDS = 1  # 8 processes of about 13 s a round: one round, read with its noise
PYTHON_FRAMES_STEPS = 50
CUPTI_MULTIPLE_SUBSCRIBERS = 39  # CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
# How CUPTI names gprof-run to a refused cuptiSubscribe_v2 (its subscriber name: collector/cupti/session.h).
HOLDER_NAME = "CUPTI for gprof-run"
CLIENT_NAME = "gpu-check CUPTI client"  # tests/gpu/cupti_client.cpp
WAY_OUT = "-t nvtx"


def statuses(records):
    return [s.get("message", "") for s in records.of("status")]


def alarms(records, component=None):
    return [s.get("message", "") for s in records.of("status") if s.get("level") in ("warning", "error")
            and (component is None or s.get("component") == component)]


def verdict(ok, name, figures):
    return ("PASS" if ok else "FAIL", name, figures)


# ----- (1) smoke ----------------------------------------------------------------------------------------------------

def check_cupti_started(records, label):
    """The collector's CUPTI session started: its "CUPTI 13.0 (API version 130001) loaded from PATH" line (before
    issue 34: "CUPTI 130001 loaded from PATH"), no CUPTI warning or error."""
    loaded = [m for m in statuses(records) if re.match(r"CUPTI [0-9][^ ]*( .*)? loaded from ", m)]
    bad = alarms(records, "cupti")
    return [verdict(loaded and not bad, f"{label}:cupti-status",
                    (loaded[0] if loaded else "no 'CUPTI ... loaded from' status line")
                    + (f"; CUPTI warnings: {bad[:3]}" if bad else ""))]


def smoke(ctx):
    """The kernels mode end to end (raw records and every report against the answer) and the CUPTI status lines:
    a total failure (no CUPTI, no records, a crash) shows here in seconds."""
    got = g.known_mode(ctx, "static", "kernels", reports=True)
    if got:
        g.add_all(ctx.v, check_cupti_started(got[1], "smoke"))
        ctx.data()["status"] = statuses(got[1])


# ----- (2) capabilities ---------------------------------------------------------------------------------------------

def runtime_driver_call_names(header_path):
    """The driver calls the CUDA runtime makes itself (formats/include/gprof/trace/runtime_driver_calls.h: one id per
    line with its name in a comment), the one list the collector and the reports use."""
    with open(header_path) as f:
        return sorted(set(re.findall(r"^\s*\d+,\s*//\s*(cu\w+)", f.read(), re.M)))


def check_driver_calls(default, nested, hidden, label):
    """Default: none of the runtime's own driver calls recorded (switched off at the source), a status line says so,
    the header does not claim them. --cuda-nested-driver-calls: they are there (one cuKernelGetName per launch on the
    H100) and the header says so (feature bit 17)."""
    def names(records):
        n = {}
        for a in records.of("api_call"):
            n[a["name"]] = n.get(a["name"], 0) + 1
        return n
    bit = 1 << 17  # kFeatureNestedDriverCalls, formats/include/gprof/trace/records.h
    d, n = names(default), names(nested)
    leaked = {k: c for k, c in d.items() if k in hidden}
    said = [m for m in statuses(default) if "driver calls the CUDA runtime makes internally" in m]
    d_bit = any(h.get("features", 0) & bit for h in default.files)
    out = [verdict(not leaked and said and not d_bit, f"{label}:hidden-by-default",
                   f"runtime's own driver calls recorded={leaked or 0}; status line={'yes' if said else 'no'}; "
                   f"header bit={d_bit}")]
    launches = sum(c for k, c in n.items() if g.normalize_api_name(k) == "cudaLaunchKernel")
    got = n.get("cuKernelGetName", 0)
    n_bit = all(h.get("features", 0) & bit for h in nested.files) and bool(nested.files)
    out.append(verdict(got >= launches > 0 and n_bit, f"{label}:kept-on-request",
                       f"cuKernelGetName={got} for cudaLaunchKernel={launches}; header bit={n_bit}; "
                       f"others: { {k: c for k, c in n.items() if k in hidden and k != 'cuKernelGetName'} }"))
    return out


def runtime_driver_calls(ctx):
    """cuptiActivityEnableDriverApi on a real driver: the runtime's own driver calls are not recorded by default and
    are all there with --cuda-nested-driver-calls (the reports' side: the smoke test's api:runtime-driver-calls)."""
    default = g.known_mode(ctx, "static", "kernels", reports=False, run_name="driver-calls-default",
                           label="driver-calls:default")
    nested = default and g.known_mode(ctx, "static", "kernels", reports=False, run_name="driver-calls-nested",
                                      bare=default[0], label="driver-calls:nested", nested_driver_calls=True)
    if default and nested:
        hidden = runtime_driver_call_names(ctx.pack.driver_calls_header)
        g.add_all(ctx.v, check_driver_calls(default[1], nested[1], hidden, "driver-calls"))


def runtime_calls(records):
    n = {}
    for a in records.of("api_call"):
        if a.get("domain") == "runtime":
            k = g.normalize_api_name(a["name"])
            n[k] = n.get(k, 0) + 1
    return n


def check_launch_before_kernel(records, label):
    """Every kernel started after the API call that launched it began, on the trace's one clock (CPU and GPU
    timestamps), and within a second of it."""
    launch = {a["correlation"]: a for a in records.of("api_call") if "Launch" in a["name"]}
    kernels = records.of("kernel")
    matched = [(launch[k["correlation"]], k) for k in kernels if k.get("correlation") in launch]
    bad = [(a["start"], k["start"]) for a, k in matched if not (a["start"] <= k["start"] <= a["start"] + 10**9)]
    return [verdict(kernels and len(matched) == len(kernels) and not bad, f"{label}:launch-before-kernel",
                    f"kernels={len(kernels)} with their launch call={len(matched)}; out of order={len(bad)}"
                    + (f" first (api start, kernel start)={bad[0]}" if bad else ""))]


def check_api_sources(runs, answer, label):
    """runs: {"activity": Records (the default), "callback": ..., "off": ...}. The default records API calls from
    CUPTI activity records, callbacks give the same calls, off gives none and the same GPU work."""
    out = []
    act, cb, off = runs["activity"], runs["callback"], runs["off"]
    want = {a["name"]: a["count"] for a in answer["api"]}

    def as_answered(calls):
        return all(calls.get(a["name"], 0) >= a["count"] if a["at_least"] else calls.get(a["name"], 0) == a["count"]
                   for a in answer["api"])
    a_calls, c_calls = runtime_calls(act), runtime_calls(cb)
    said_cb = [m for m in statuses(act) if "from CUPTI callbacks" in m or "not recorded (GPROF_CUDA_API" in m]
    out.append(verdict(as_answered(a_calls) and not said_cb,
                       f"{label}:activity-by-default",
                       f"runtime calls {dict((k, a_calls.get(k, 0)) for k in want)} expected {want}; "
                       f"other source said={said_cb[:1]}"))
    out += check_launch_before_kernel(act, f"{label}:activity")
    said = [m for m in statuses(cb) if "recorded from CUPTI callbacks" in m]
    out.append(verdict(as_answered(c_calls) and said, f"{label}:callback",
                       f"runtime calls {dict((k, c_calls.get(k, 0)) for k in want)} expected {want}; "
                       f"status line={'yes' if said else 'no'}"))
    out += check_launch_before_kernel(cb, f"{label}:callback")
    kernels = {n: len([k for k in off.of("kernel") if k["name"] == n]) for n in {k["name"] for k in act.of("kernel")}}
    same = kernels == {n: len([k for k in act.of("kernel") if k["name"] == n]) for n in kernels}
    said = [m for m in statuses(off) if "CUDA API calls not recorded" in m]
    out.append(verdict(not off.of("api_call") and same and kernels and said, f"{label}:off",
                       f"API records={len(off.of('api_call'))} (expected 0); kernels the same as by default="
                       f"{same}; status line={'yes' if said else 'no'}"))
    return out


def api_sources(ctx):
    """API calls from CUPTI activity records by default; callbacks and off as the alternatives (issue 17)."""
    runs, answer = {}, None
    for source in ("activity", "callback", "off"):
        got = g.known_mode(ctx, "static", "kernels", reports=False, run_name=f"api-{source}", bare=answer,
                           label=f"api-source:{source}", cuda_api=None if source == "activity" else source,
                           expect=(lambda a: dict(a, api=[])) if source == "off" else None)
        if not got:
            return
        answer, runs[source] = got[0], got[1]
    g.add_all(ctx.v, check_api_sources(runs, answer, "api-source"))


BUFFER_ENV = {"GPROF_CUPTI_ZEROED_BUFFERS": "1", "GPROF_CUPTI_DEVICE_BUFFER_MB": "32", "GPROF_CUPTI_PREALLOCATE": "6"}


def check_buffer_attributes(records, label):
    """All three CUPTI buffer attributes accepted (the Info line names each), none refused."""
    line = next((m for m in statuses(records) if m.startswith("CUPTI buffer attributes:")), "")
    refused = [m for m in alarms(records) if "cuptiActivitySetAttribute" in m]
    ok = all(w in line for w in ("device buffer 32 MiB", "6 device buffers", "zeroed")) and not refused
    return [verdict(ok, f"{label}:attributes-set", (line or "no 'CUPTI buffer attributes' line")
                    + (f"; refused: {refused}" if refused else ""))]


def buffer_attributes(ctx):
    """The streams mode (1600 kernels on 16 streams) with every CUPTI buffer attribute set: the answer exact,
    nothing dropped, every attribute accepted."""
    pack = ctx.pack
    app = pack.app("static")
    bare = g.bare_answer(ctx, app, "streams", "buffer-attributes")
    if bare is None:
        return
    run_dir = ctx.run_dir("buffer-attributes-streams")
    rc, wall, out, err = g.timed(g.launcher_cmd(pack, run_dir, [app, "streams"]), env=g.app_env(pack, BUFFER_ENV))
    if rc != 0:
        ctx.v.add("FAIL", "buffer-attributes:exit", f"exit {rc}: {err.strip()[-400:]}")
        return
    records, _ = g.load_run(pack, run_dir)
    g.add_all(ctx.v, g.check_known_answer(g.parse_answer(out) or bare, records, wall, "buffer-attributes"))
    g.add_all(ctx.v, check_buffer_attributes(records, "buffer-attributes"))


def client_result(out):
    return g.result_line(out, "CUPTI_CLIENT")


def check_cupti_clients(bare, traced, traced_status, nvtx_only, label):
    """The program's own CUPTI client bare, under gprof-run and under gprof-run -t nvtx (tests/gpu/cupti_client.cpp).
    Under gprof-run CUPTI either refuses it (one subscriber per process: the v2 call is told the holder, "CUPTI for
    gprof-run", and the trace says so once per client with the way out) or takes both (the trace says both record)."""
    out = [verdict(bare and bare["v2"]["result"] == 0 and bare["v1"]["result"] == 0, f"{label}:bare",
                   f"bare: {bare}")]
    if not traced:
        return out + [("FAIL", f"{label}:under-gprof-run", "no CUPTI_CLIENT line under gprof-run")]
    v2, v1 = traced["v2"]["result"], traced["v1"]["result"]
    told = [m for m in traced_status if WAY_OUT in m and "refused" in m]
    beside = [m for m in traced_status if "beside gprof-run" in m]
    if v2 == CUPTI_MULTIPLE_SUBSCRIBERS:
        named = [m for m in told if m.startswith(CLIENT_NAME)]
        ok = traced["v2"]["holder"] == HOLDER_NAME and len(named) == 1
        out.append(verdict(ok, f"{label}:v2-refused-and-told",
                           f"holder={traced['v2']['holder']!r} (expected {HOLDER_NAME!r}); lines naming the client and "
                           f"'{WAY_OUT}'={len(named)}" + (f": {named[0][:160]}" if named else "")))
    else:
        ok = v2 == 0 and any(m.startswith(CLIENT_NAME) for m in beside)
        out.append(verdict(ok, f"{label}:v2-beside",
                           f"cuptiSubscribe_v2 -> {v2}; 'beside gprof-run' lines={beside[:2]}"))
    if v1 == CUPTI_MULTIPLE_SUBSCRIBERS:
        plain = [m for m in told if not m.startswith(CLIENT_NAME)]
        out.append(verdict(len(plain) == 1, f"{label}:v1-refused-and-told",
                           f"lines naming the unnamed client and '{WAY_OUT}'={len(plain)}"
                           + (f": {plain[0][:160]}" if plain else "")))
    else:
        out.append(verdict(v1 == 0 and len(beside) >= 1, f"{label}:v1-beside",
                           f"cuptiSubscribe -> {v1}; 'beside gprof-run' lines={len(beside)}"))
    out.append(verdict(nvtx_only is not None and nvtx_only["v2"]["result"] == 0 and nvtx_only["v1"]["result"] == 0,
                       f"{label}:way-out", f"under gprof-run {WAY_OUT}: {nvtx_only}"))
    return out


def cupti_subscribe(ctx):
    """cuptiSubscribe_v2 and the coexistence messages on a real CUPTI: a program that is its own CUPTI client."""
    pack, v = ctx.pack, ctx.v
    client = [pack.cupti_client]
    rc, _, out, err = g.timed(client)
    if rc == g.EXIT_NO_DEVICE:
        ctx.skip_rest = g.no_device_reason(err)
        v.add("SKIP", "cupti-subscribe", ctx.skip_rest)
        return
    if rc != 0:
        v.add("FAIL", "cupti-subscribe:bare-run", f"exit {rc}: {err.strip()[-400:]}")
        return
    bare = client_result(out)
    run_dir = ctx.run_dir("cupti-client")
    rc2, _, out2, err2 = g.timed(g.launcher_cmd(pack, run_dir, client))
    traced = client_result(out2) if rc2 == 0 else None
    records, _ = g.load_run(pack, run_dir)
    rc3, _, out3, _ = g.timed(g.launcher_cmd(pack, ctx.run_dir("cupti-client-nvtx"), client, trace="nvtx"))
    nvtx_only = client_result(out3) if rc3 == 0 else None
    g.add_all(v, check_cupti_clients(bare, traced, statuses(records), nvtx_only, "cupti-subscribe"))
    ctx.data().update({"bare": bare, "traced": traced, "nvtx_only": nvtx_only, "status": statuses(records),
                       "stderr": err2.strip()[-1000:]})


CUDA_MODULES = ("libcuda.", "libcupti.", "libcudart.", "libgprof-collector.", "libnvidia-")


def module_of(address, modules):
    for m in modules:
        if m["base"] <= address < m["base"] + m["size"]:
            return m["path"]
    return None


def check_call_sites(records, app, label, static_cudart):
    """--backtrace on a real driver: every runtime call has a call site, each stack's first frame is in the program
    (the collector cut the collector's, CUPTI's and the driver's frames by module ranges), and no frame lies in
    libcuda/libcupti/the collector (nor libcudart, when the program uses the shared one)."""
    modules = records.of("module")
    stacks = {s["id"]: s for s in records.of("stack")}
    sites = {c["correlation"]: c for c in records.of("call_site")}
    calls = [a for a in records.of("api_call") if a.get("domain") == "runtime"]
    without = [a["name"] for a in calls if a["correlation"] not in sites or not sites[a["correlation"]].get("stack")]
    first_out, cuda_frames = [], []
    app_name = os.path.basename(app)
    for s in stacks.values():
        frames = s.get("frames", [])
        where = [module_of(f, modules) for f in frames]
        if not where or os.path.basename(where[0] or "") != app_name:
            first_out.append(os.path.basename(where[0] or "?") if where else "empty")
        for w in where:
            base = os.path.basename(w or "")
            if base.startswith(CUDA_MODULES) and not (static_cudart and base.startswith("libcudart.")):
                cuda_frames.append(base)
    return [verdict(calls and not without, f"{label}:every-call",
                    f"runtime calls={len(calls)} without a call site={len(without)} {sorted(set(without))[:5]}"),
            verdict(stacks and not first_out and not cuda_frames, f"{label}:first-frame-is-the-program",
                    f"stacks={len(stacks)} first frame elsewhere={len(first_out)} {sorted(set(first_out))[:3]}; "
                    f"frames in CUDA or collector modules={len(cuda_frames)} {sorted(set(cuda_frames))[:3]}")]


def check_callsite_report(doc, program, source_file, label):
    """cuda_callsite_sum: every site with API calls starts in the program (the CUDA, CUPTI and collector frames cut,
    a static runtime's frames dropped by symbol) and, given source_file, at its source (file:line from DWARF);
    figures: the top sites."""
    rows = g._rows(doc, "cuda_callsite_sum")
    sites = [r for r in rows if r.get("api_calls")]
    bad = []
    for r in sites:
        first = (r.get("stack") or [{}])[0]
        in_program = os.path.basename(str(first.get("module", ""))) == program
        at_source = source_file is None or (str(first.get("file", "")).endswith(source_file) and first.get("line"))
        cuda = [f for f in r.get("stack", []) if os.path.basename(str(f.get("module", ""))).startswith(CUDA_MODULES)]
        if not (in_program and at_source) or cuda:
            bad.append(r.get("site"))
    where = f"{source_file}:LINE in {program}" if source_file else program
    return [verdict(sites and not bad, f"{label}:report-sites",
                    f"sites={len(sites)} not starting at {where}={len(bad)} {bad[:3]}; top="
                    f"{[(r.get('site'), r.get('api_calls')) for r in sites[:3]]}")]


def call_sites(ctx):
    """Call sites taken at the API exit callback and cut by module ranges, with the real driver's frames: the
    known-answer kernels mode under --backtrace, static and shared cudart."""
    for variant in ("static", "shared"):
        got = g.known_mode(ctx, variant, "kernels", reports=False, run_name=f"call-sites-{variant}",
                           label=f"call-sites:{variant}", backtrace=True)
        if not got:
            continue
        _, records, run_dir = got
        label = f"call-sites:{variant}"
        g.add_all(ctx.v, check_call_sites(records, ctx.pack.app(variant), label, variant == "static"))
        try:
            doc = g.report_json(ctx.pack, run_dir, ["cuda_callsite_sum"])
            g.add_all(ctx.v, check_callsite_report(doc, os.path.basename(ctx.pack.app(variant)), "known_answer.cu",
                                                   label))
        except (RuntimeError, ValueError) as e:
            ctx.v.add("FAIL", f"{label}:report", str(e))


def check_python_frames(records, script, label):
    """The CUDA calls of a PyTorch step carry Python frames: most call sites of the Python thread have a PyStack,
    one frame at least is the script's (file:line), and the trace's summary line names CPython."""
    pid = records.files[0].get("pid") if records.files else None
    sites = records.of("call_site")
    main = [c for c in sites if c.get("tid") == pid] or sites
    with_py = [c for c in main if c.get("py_stack")]
    frames = records.of("py_frame")
    mine = [f for f in frames if str(f.get("file", "")).endswith(os.path.basename(script)) and f.get("line")]
    line = next((m for m in statuses(records) if "Python stacks (CPython" in m), "")
    refused = [m for m in statuses(records) if "no Python stacks" in m]
    share = len(with_py) / len(main) if main else 0
    return [verdict(share >= 0.95 and mine and line and not refused, f"{label}:python-frames",
                    f"call sites of the main thread={len(main)} with Python frames={share * 100:.1f}% (min 95%); "
                    f"frames in {os.path.basename(script)}={len(mine)}; {line or 'no CPython summary line'}"
                    + (f"; {refused[0]}" if refused else ""))]


# NVIDIA's libraries built on the CUDA runtime: a site is never inside them (the program's call into them is). As
# formats/include/gprof/trace/cuda_modules.h.
NVIDIA_LIBRARIES = ("libcublas", "libcudnn", "libnccl", "libcufft", "libcurand", "libcusparse", "libcusolver",
                    "libcutensor", "libnvrtc", "libnvJitLink", "libnvjitlink")


def check_python_report(doc, script, label):
    """cuda_callsite_sum of a PyTorch run: the top site of the calls with Python frames is a Python frame (the
    innermost, as torch.profiler's stacks and nsys's Python backtraces show it: torch's own linear.py:134 for a
    Linear layer) whose stack reaches the script; no site starts in CUDA's modules or NVIDIA's libraries (the
    backward pass runs on PyTorch's autograd thread, which has no Python frames: its GEMMs' site is libtorch_cuda's
    call into cuBLAS, not a cuBLASLt frame). The H200 run of 2026-11-27 asked for the overall top site to be a
    train.py line: that top site was the autograd thread's (300 GEMM calls), which no Python frame can name."""
    rows = [r for r in g._rows(doc, "cuda_callsite_sum") if r.get("api_calls")]
    with_python = [r for r in rows if any(f.get("python") for f in r.get("stack", []))]
    top = with_python[0] if with_python else {}
    stack = top.get("stack") or [{}]
    reaches = any(f.get("python") and str(f.get("file", "")).endswith(os.path.basename(script)) for f in stack)
    inside = [r.get("site") for r in rows
              if os.path.basename(str((r.get("stack") or [{}])[0].get("module", ""))).startswith(
                  CUDA_MODULES + NVIDIA_LIBRARIES)]
    ok = bool(stack[0].get("python")) and reaches and not inside
    return [verdict(ok, f"{label}:report-top-site-is-python",
                    f"top site with Python frames={top.get('site')!r} ({top.get('api_calls')} calls), first frame="
                    f"{stack[0]}, reaches {os.path.basename(script)}={reaches}; sites in CUDA or NVIDIA libraries="
                    f"{len(inside)} {inside[:3]}; top site={rows[0].get('site') if rows else None!r}")]


def python_frames(ctx):
    """Python frames on a PyTorch step: train.py under --backtrace."""
    if not g.have_torch():
        ctx.v.add("SKIP", "python-frames", "PyTorch with CUDA not importable by " + sys.executable)
        return
    run_dir = ctx.run_dir("python-frames")
    cmd = [sys.executable, ctx.pack.train, "--steps", str(PYTHON_FRAMES_STEPS)]
    rc, _, _, err = g.timed(g.launcher_cmd(ctx.pack, run_dir, cmd, backtrace=True), timeout=600)
    if rc != 0:
        ctx.v.add("FAIL", "python-frames:exit", f"exit {rc}: {err.strip()[-400:]}")
        return
    records, _ = g.load_run(ctx.pack, run_dir)
    g.add_all(ctx.v, check_python_frames(records, ctx.pack.train, "python-frames"))
    try:
        doc = g.report_json(ctx.pack, run_dir, ["cuda_callsite_sum"])
        g.add_all(ctx.v, check_python_report(doc, ctx.pack.train, "python-frames"))
    except (RuntimeError, ValueError) as e:
        ctx.v.add("FAIL", "python-frames:report", str(e))


# ----- (3) the open issues ------------------------------------------------------------------------------------------

PM_CALLS_THAT_MUST_WORK = ("cuptiPmSamplingEnable", "cuptiPmSamplingSetConfig", "cuptiPmSamplingStart",
                           "cuptiPmSamplingStop", "cuptiPmSamplingDecodeData")


# What the H200 showed (2026-11-27, docs/validation.md "PM sampling on an H200"): every sample's start and end are
# cuptiGetTimestamp's clock in ns (under gprof-run that clock is the collector's, CLOCK_MONOTONIC), the samples tile
# the time from cuptiPmSamplingStart to Stop without a gap, decoding between the phases included, so most samples
# lie outside the phases; and the first sample begins long before Start (763 ms there): it is not an interval.
PM_EDGE_NS = 2_000_000   # a busy phase's first and last busy samples lie this close to its marks
PM_BUSY_PCT = 50.0       # a sample is busy when SM active % reaches this


def pm_column(doc, prefix):
    cols = doc.get("samples", {}).get("columns", [])
    return next((i for i, c in enumerate(cols) if c.startswith(prefix)), None)


def pm_steady_rows(doc):
    """The samples that span one sampling interval or less: not the first one, which begins before Start."""
    interval = doc.get("sampling", {}).get("interval_ns", 0)
    rows = doc.get("samples", {}).get("rows", [])
    return [r for r in rows if not interval or r[1] - r[0] <= 2 * interval]


def pm_phase_means(doc):
    """{phase name: {metric: mean}} of the steady samples whose middle falls in a phase on cuptiGetTimestamp's
    clock."""
    cols = doc.get("samples", {}).get("columns", [])
    sums, counts = {}, {}
    for r in pm_steady_rows(doc):
        mid = (r[0] + r[1]) / 2
        ph = next((p for p in doc.get("phases", []) if p["cupti_start"] <= mid < p["cupti_end"]), None)
        if ph is None:
            continue
        key = ph["name"]
        counts[key] = counts.get(key, 0) + 1
        s = sums.setdefault(key, [0.0] * (len(cols) - 2))
        for i, val in enumerate(r[2:]):
            s[i] += val if val is not None else 0.0
    return {k: {cols[i + 2]: s[i] / counts[k] for i in range(len(s))} for k, s in sums.items()}


def pm_phase_edges(doc):
    """For each phase with launches: (name, first busy sample's start - phase start, last busy sample's end - phase
    end, share of the phase's samples that are busy), the busy samples looked for within PM_EDGE_NS of the phase; and
    the number of busy samples in the idle phases. None where no column says SM activity."""
    sm = pm_column(doc, "sm__cycles_active.avg.pct")
    if sm is None:
        return None
    rows = pm_steady_rows(doc)
    busy = [r for r in rows if (r[sm] or 0) >= PM_BUSY_PCT]
    edges, idle_busy = [], 0
    for ph in doc.get("phases", []):
        lo, hi = ph["cupti_start"], ph["cupti_end"]
        if not ph.get("launches"):
            idle_busy += sum(1 for r in busy if lo <= (r[0] + r[1]) / 2 < hi)
            continue
        near = [r for r in busy if lo - PM_EDGE_NS <= r[0] and r[1] <= hi + PM_EDGE_NS]
        inside = [r for r in rows if lo <= (r[0] + r[1]) / 2 < hi]
        share = sum(1 for r in inside if (r[sm] or 0) >= PM_BUSY_PCT) / len(inside) if inside else 0.0
        edges.append((ph["name"], near[0][0] - lo if near else None, near[-1][1] - hi if near else None, share))
    return edges, idle_busy


def check_pm_probe(doc, label):
    """The raw PM-sampling probe (tests/gpu/pm_sampling_probe.cu): the calls a sampler needs all succeed, samples are
    decoded and evaluated, in time order; on cuptiGetTimestamp's clock, where the busy phases' marks are the edges
    of the busy samples; and they tell the phases apart: SM and tensor activity highest in the tensor phase, DRAM
    throughput highest in the copy phase."""
    out = []
    calls = doc.get("calls", [])
    failed = [c for c in calls if c["call"] in PM_CALLS_THAT_MUST_WORK and c["result"] != 0]
    missing = [n for n in PM_CALLS_THAT_MUST_WORK if not any(c["call"] == n for c in calls)]
    out.append(verdict(not failed and not missing and doc.get("exit") == 0, f"{label}:calls",
                       f"chip={doc.get('chip')} failed={[(c['call'], c['name']) for c in failed][:3]} never made="
                       f"{missing}; error={doc.get('error')}"))
    rows = doc.get("samples", {}).get("rows", [])
    ordered = all(a[0] <= a[1] <= b[0] + 1 for a, b in zip(rows, rows[1:])) and all(r[0] < r[1] for r in rows)
    gaps = sum(1 for a, b in zip(rows, rows[1:]) if b[0] != a[1])
    first_ms = (rows[0][1] - rows[0][0]) / 1e6 if rows else 0.0
    # Which call the first sample dates from (the probe marks its calls since the H200 run): the stand-in's question.
    since = ", ".join(f"{(rows[0][0] - c['cupti_before']) / 1e6:+.1f} ms from {c['call'][len('cuptiPmSampling'):]}"
                      for c in doc.get("call_times", []) if rows and c["call"] != "cuptiPmSamplingStop")
    out.append(verdict(rows and ordered and not doc.get("evaluate_failures") and not doc.get("overflow"),
                       f"{label}:samples",
                       f"samples={len(rows)} in order={ordered} gaps between samples={gaps} first sample "
                       f"{first_ms:.1f} ms (longer than an interval: begins before Start{'; ' + since if since else ''})"
                       f" evaluate failures="
                       f"{doc.get('evaluate_failures')} overflow={doc.get('overflow')} "
                       f"metrics={len(doc.get('metrics_used', []))}"))
    found = pm_phase_edges(doc)
    busy_phases = [p for p in doc.get("phases", []) if p.get("launches")]
    if found is None:
        out.append(verdict(False, f"{label}:clock", "no SM active % column to find the busy phases by"))
    else:
        edges, idle_busy = found
        fine = all(s is not None and abs(s) <= PM_EDGE_NS and abs(e) <= PM_EDGE_NS and share >= 0.9
                   for _, s, e, share in edges)
        us = lambda x: "-" if x is None else f"{x / 1e3:+.0f} us"  # noqa: E731
        out.append(verdict(busy_phases and fine and idle_busy == 0, f"{label}:clock",
                           "on cuptiGetTimestamp's clock, the busy samples against the busy phases' marks: "
                           + "; ".join(f"{n} start {us(s)} end {us(e)}, {share * 100:.0f}% busy"
                                       for n, s, e, share in edges)
                           + f" (within {PM_EDGE_NS / 1e6:.0f} ms, 90% busy); busy samples in idle phases="
                           f"{idle_busy}"))
    out.append(check_phase_means(doc, f"{label}:phases"))
    return out


def check_phase_means(doc, name):
    """The samples tell the probe's phases apart: SM and tensor activity highest in the tensor phase, DRAM
    throughput highest in the copy phase, SM activity in both busy phases above the idle one."""
    means = pm_phase_means(doc)
    t, c, idle = means.get("tensor", {}), means.get("copy", {}), means.get("idle", {})

    def pick(d, prefix):
        return next((val for k, val in d.items() if k.startswith(prefix)), None)
    sm = [pick(d, "sm__cycles_active.avg.pct") for d in (t, c, idle)]
    tensor = [pick(d, "sm__pipe_tensor_cycles_active") for d in (t, c, idle)]
    dram = [pick(d, "dram__throughput.avg.pct") for d in (t, c, idle)]
    ok = (None not in sm + tensor + dram and tensor[0] > max(tensor[1], tensor[2]) and dram[1] > max(dram[0], dram[2])
          and min(sm[0], sm[1]) > sm[2])
    fmt = lambda xs: "/".join("-" if x is None else f"{x:.1f}" for x in xs)  # noqa: E731
    return verdict(ok, name, f"tensor/copy/idle means on cuptiGetTimestamp's clock: SM active % {fmt(sm)}, tensor "
                             f"active % {fmt(tensor)}, DRAM throughput % {fmt(dram)}")


def gpu_metrics_doc(records, phases_doc):
    """gprof-run's GPU-metric records of device 0 shaped as the probe's document (columns, rows, interval), with the
    probe's phase marks, so the probe's checks judge the collector's samples."""
    sets = [s for s in records.of("gpu_metric_set") if s.get("device") == 0]
    metrics = sets[-1].get("metrics", "").split() if sets else []
    rows = [[x["start"], x["end"]] + list(x.get("values", [])) for x in records.of("gpu_metric_sample")
            if x.get("device") == 0]
    return {"samples": {"columns": ["start", "end"] + metrics, "rows": rows},
            "sampling": {"interval_ns": sets[-1].get("interval_ns", 0) if sets else 0},
            "phases": phases_doc.get("phases", []), "chip": sets[-1].get("chip") if sets else None,
            "set": sets[-1].get("name") if sets else None}


def check_gpu_metrics_run(doc, rc, err, summary_text, label):
    """`gprof-run --gpu-metrics-devices all` on the phases-only probe: the run is untouched, device 0 sampled with
    its chip's set, samples contiguous one interval each, no refusal or loss said, the phases told apart as the
    probe's own sampler tells them, and the summary's GPU metrics section present."""
    out = []
    rows = doc["samples"]["rows"]
    interval = doc["sampling"]["interval_ns"]
    contiguous = all(b[0] == a[1] for a, b in zip(rows, rows[1:]))
    one_interval = all(r[1] - r[0] <= 2 * interval for r in rows) if interval else False
    said = [ln for ln in err.splitlines() if "GPU metrics" in ln and ("not sampled" in ln or "lost" in ln)]
    out.append(verdict(rc == 0 and doc["set"] == "gh100" and doc["chip"] == "GH100" and len(rows) > 100
                       and contiguous and one_interval and not said, f"{label}:samples",
                       f"exit {rc}; chip={doc['chip']} set={doc['set']} samples={len(rows)} contiguous={contiguous} "
                       f"one interval each={one_interval}; refusals/losses said: {said[:2]}"))
    out.append(check_phase_means(doc, f"{label}:phases"))
    out.append(verdict("GPU metrics:" in summary_text and "SM active" in summary_text, f"{label}:summary",
                       "the summary's GPU metrics section " + ("present" if "GPU metrics:" in summary_text
                                                               else "missing")))
    return out


NCU_METRICS = ("sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
               "dram__throughput.avg.pct_of_peak_sustained_elapsed")
NCU_TOLERANCE_PCT = 20.0  # ncu replays one launch alone; the samples average a phase of back-to-back launches


def ncu_kernel_means(csv_text):
    """{(kernel, metric): mean value} from `ncu --csv --metrics ...` output."""
    sums, counts = {}, {}
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            key = (row["Kernel Name"].split("(")[0], row["Metric Name"])
            val = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        sums[key] = sums.get(key, 0.0) + val
        counts[key] = counts.get(key, 0) + 1
    return {k: sums[k] / counts[k] for k in sums}


def check_against_ncu(doc, ncu, label):
    """The phase means of gprof-run's samples within NCU_TOLERANCE_PCT points of ncu's figures for the same kernels:
    SM active in the tensor phase (pm_tensor_kernel), DRAM throughput in the copy phase (pm_copy_kernel)."""
    means = pm_phase_means(doc)
    pairs = [("tensor", "pm_tensor_kernel", NCU_METRICS[0]), ("copy", "pm_copy_kernel", NCU_METRICS[1])]
    figures, ok = [], bool(ncu)
    for phase, kernel, metric in pairs:
        ours = means.get(phase, {}).get(metric)
        theirs = ncu.get((kernel, metric))
        fine = ours is not None and theirs is not None and abs(ours - theirs) <= NCU_TOLERANCE_PCT
        ok = ok and fine
        figures.append(f"{phase} {metric.split('.')[0]}: ours {'-' if ours is None else f'{ours:.1f}'} ncu "
                       f"{'-' if theirs is None else f'{theirs:.1f}'}")
    return verdict(ok, f"{label}:ncu", "; ".join(figures) + f" (within {NCU_TOLERANCE_PCT:.0f} points)")


def gpu_metrics(ctx):
    """Issue #37 end to end on the GPU: gprof-run's own PM sampler (--gpu-metrics-devices all) on the probe's phases
    without the probe's sampler, judged as the raw probe is; then ncu's figures for the same two kernels where ncu is
    installed."""
    pack, v = ctx.pack, ctx.v
    run_dir = ctx.run_dir("gpu-metrics")
    phases_file = os.path.join(ctx.work, "gpu-metrics-phases.json")
    rc, _, _, err = g.timed(g.launcher_cmd(pack, run_dir, [pack.pm_probe, "--phases-only", "--out", phases_file],
                                           gpu_metrics="all"), timeout=120)
    if rc == g.EXIT_NO_DEVICE:
        v.add("SKIP", "gpu-metrics", g.no_device_reason(err))
        return
    phases = load_json(phases_file, rc, err)
    records, _ = g.load_run(pack, run_dir)
    doc = gpu_metrics_doc(records, phases)
    ctx.data()["phases"] = phases
    ctx.data()["samples"] = len(doc["samples"]["rows"])
    _, _, summary, serr = g.timed([pack.gprof_report, "summary", run_dir], timeout=300)
    g.add_all(v, check_gpu_metrics_run(doc, rc, err, summary + serr, "gpu-metrics"))
    ncu_path = shutil.which("ncu") or next(iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")
                                                       + glob.glob("/usr/local/cuda*/bin/ncu"))), None)
    if not ncu_path:
        v.add("SKIP", "gpu-metrics:ncu", "no ncu on PATH, under /opt/nvidia/nsight-compute or /usr/local/cuda*/bin")
        return
    # The probe launches each kernel once or twice to warm up and calibrate before its phases: skipped.
    rc, _, out, nerr = g.timed([ncu_path, "--csv", "--metrics", ",".join(NCU_METRICS),
                                "-k", "regex:pm_(tensor|copy)_kernel", "--launch-skip", "3", "-c", "8",
                                pack.pm_probe, "--phases-only", "--phase-ms", "20"], timeout=240)
    if rc != 0:
        v.add("FAIL", "gpu-metrics:ncu", f"ncu exit {rc}: {nerr.strip()[-300:]}")
        return
    g.add_all(v, [check_against_ncu(doc, ncu_kernel_means(out), "gpu-metrics")])


def pm_sampling_probe(ctx):
    """What PM sampling gives on this GPU (issue #37's stand-in is built from it): the probe bare, then under
    gprof-run (PM sampling beside the collector's activity tracing, as the feature will run). The raw documents go
    into results.json (data)."""
    pack, v = ctx.pack, ctx.v
    out_file = os.path.join(ctx.work, "pm-sampling.json")
    rc, _, _, err = g.timed([pack.pm_probe, "--out", out_file], timeout=120)
    if rc == g.EXIT_NO_DEVICE:
        ctx.skip_rest = g.no_device_reason(err)
        v.add("SKIP", "pm-sampling", ctx.skip_rest)
        return
    doc = load_json(out_file, rc, err)
    ctx.data()["bare"] = doc
    g.add_all(v, check_pm_probe(doc, "pm-sampling"))
    run_dir = ctx.run_dir("pm-sampling-beside-gprof-run")
    beside_file = os.path.join(ctx.work, "pm-sampling-beside.json")
    rc, _, _, err = g.timed(g.launcher_cmd(pack, run_dir, [pack.pm_probe, "--out", beside_file]), timeout=120)
    beside = load_json(beside_file, rc, err)
    ctx.data()["beside_gprof_run"] = beside
    records, _ = g.load_run(pack, run_dir)
    kernels = {n for n in ("pm_tensor_kernel", "pm_copy_kernel")
               if any(n in k.get("demangled", k["name"]) for k in records.of("kernel"))}
    ok = rc == 0 and beside.get("sample_count", 0) > 0 and len(kernels) == 2
    v.add("PASS" if ok else "FAIL", "pm-sampling:beside-gprof-run",
          f"exit {rc}; samples={beside.get('sample_count')} error={beside.get('error')}; kernels recorded="
          f"{sorted(kernels)[:4]}")


CPU_SAMPLING_STEPS = 100
CPU_SAMPLING_MAX_SLOWDOWN = 1.25  # default sampling against -s none, one round: only a gross regression fails


def check_cpu_samples(records, script, label):
    """CPU samples of a PyTorch step (issue #35): the main thread was sampled, most of its samples carry Python
    frames, some of them the script's own lines; the collector said sampling was on and lost nothing."""
    pid = records.files[0].get("pid") if records.files else None
    samples = records.of("cpu_sample")
    main = [s for s in samples if s.get("tid") == pid] or samples
    with_py = [s for s in main if s.get("py_stack")]
    frames = records.of("py_frame")
    mine = [f for f in frames if str(f.get("file", "")).endswith(os.path.basename(script)) and f.get("line")]
    on = [m for m in statuses(records) if m.startswith("CPU sampling on")]
    lost = [m for m in statuses(records) if "CPU sampling" in m and ("lost" in m or "off" in m)]
    share = len(with_py) / len(main) if main else 0
    return [verdict(len(main) >= 20 and share >= 0.5 and mine and on and not lost, f"{label}:samples",
                    f"samples of the main thread={len(main)} (min 20), with Python frames={share * 100:.0f}% (min 50%); "
                    f"frames in {os.path.basename(script)}={len(mine)}; {on[0] if on else 'no CPU sampling line'}"
                    + (f"; {lost[0]}" if lost else ""))]


def check_cpu_report(doc, analysis, script, label):
    """cpu_sample_sum --by line names the script's lines among its top rows (by total), and analyze's host profile
    has the samples; a CPU/launch-bound verdict names where the CPU time went."""
    rows = g._rows(doc, "cpu_sample_sum")
    top = sorted(rows, key=lambda r: -r.get("total_samples", 0))[:25]
    mine = [r for r in top if os.path.basename(script) + ":" in str(r.get("location", ""))]
    host = analysis.get("host", {})
    verdict_id = analysis.get("verdict", {}).get("id")
    named = verdict_id != "cpu_launch_bound" or "CPU time went to" in analysis.get("verdict", {}).get("reason", "")
    return [verdict(bool(mine) and host.get("samples", 0) > 0 and host.get("functions") and named,
                    f"{label}:reports",
                    f"script lines among the top 25 rows={[r.get('location') for r in mine][:3]}; analyze host samples="
                    f"{host.get('samples')} functions={[f.get('name') for f in host.get('functions', [])][:3]}; "
                    f"verdict {verdict_id} names the CPU time: {named}")]


def check_sampling_overhead(wall_sampled, wall_unsampled, label):
    ratio = wall_sampled / wall_unsampled if wall_unsampled else float("inf")
    return [verdict(ratio <= CPU_SAMPLING_MAX_SLOWDOWN, f"{label}:overhead",
                    f"train.py {CPU_SAMPLING_STEPS} steps under gprof-run: {wall_sampled:.2f} s sampled at 1 kHz, "
                    f"{wall_unsampled:.2f} s with -s none ({(ratio - 1) * 100:+.1f} %; one round, fails only past "
                    f"{(CPU_SAMPLING_MAX_SLOWDOWN - 1) * 100:.0f} %)")]


def cpu_sampling(ctx):
    """CPU sampling on a PyTorch program (issue #35): train.py under gprof-run's defaults (samples, Python frames, the
    reports and analyze's host profile, exit status as bare) and with sampling off (-s none), for the
    overhead at the default 1 kHz."""
    if not g.have_torch():
        ctx.v.add("SKIP", "cpu-sampling", "PyTorch with CUDA not importable by " + sys.executable)
        return
    cmd = [sys.executable, ctx.pack.train, "--steps", str(CPU_SAMPLING_STEPS)]
    run_dir = ctx.run_dir("cpu-sampling")
    rc, wall_on, _, err = g.timed(g.launcher_cmd(ctx.pack, run_dir, cmd), timeout=600)
    if rc != 0:
        ctx.v.add("FAIL", "cpu-sampling:exit", f"exit {rc}: {err.strip()[-400:]}")
        return
    records, _ = g.load_run(ctx.pack, run_dir)
    g.add_all(ctx.v, check_cpu_samples(records, ctx.pack.train, "cpu-sampling"))
    try:
        doc = g.report_json(ctx.pack, run_dir, ["cpu_sample_sum"], ["--by", "line"])
        rc_a, _, out_a, err_a = g.timed([ctx.pack.gprof_report, "analyze", "--format", "json", run_dir], timeout=600)
        analysis = json.loads(out_a) if rc_a == 0 else {}
        g.add_all(ctx.v, check_cpu_report(doc, analysis, ctx.pack.train, "cpu-sampling"))
    except (RuntimeError, ValueError) as e:
        ctx.v.add("FAIL", "cpu-sampling:reports", str(e))
    off_dir = ctx.run_dir("cpu-sampling-off")
    rc, wall_off, _, err = g.timed(g.launcher_cmd(ctx.pack, off_dir, cmd, sample="none"), timeout=600)
    if rc != 0:
        ctx.v.add("FAIL", "cpu-sampling:exit-unsampled", f"exit {rc}: {err.strip()[-400:]}")
        return
    g.add_all(ctx.v, check_sampling_overhead(wall_on / 1e9, wall_off / 1e9, "cpu-sampling"))


def load_json(path, rc, err):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"exit": rc, "error": f"no JSON document ({e}); stderr: {err.strip()[-300:]}"}


# Checks the open issues add, each the day its issue lands (before that there is nothing to check, and a placeholder
# could only fail or lie):
#   #34 CUDA 12 drivers: "issues:cupti-12" - the kernels mode and a PyTorch step with the CUPTI 12.9 wheel's
#       libcupti.so.12 (carried as a wheel, named by GPROF_CUPTI_LIB) on the lent r580 driver: every record kind
#       read at 12.x's struct sizes, the same answers as with CUPTI 13. Estimate: the smoke test's, twice.


# ----- the registry -------------------------------------------------------------------------------------------------

H100 = "H100 2026-11-22: "
H200 = "H200 2026-11-27: "

# Seconds each check took on the H200 lease of 2026-11-27 (results.json of ../shared/gpu-runs/2026-11-27-h200/run1,
# and run2 for the 13 `rest:` checks run 1's budget skipped). overhead:cuda ran 2 rounds, overhead:pytorch 1.
H200_SECONDS = {
    "smoke:kernels": 1.0,
    "capability:graph-node": 0.9,
    "capability:graph-level": 0.8,
    "capability:nvtx-capture": 1.1,
    "capability:memory": 0.9,
    "capability:runtime-driver-calls": 1.1,
    "capability:api-sources": 1.5,
    "capability:buffer-attributes": 0.9,
    "capability:cupti-subscribe": 1.1,
    "capability:call-sites": 1.7,
    "capability:python-frames": 26.2,
    "capability:torch-profiler-told": 23.3,
    "issues:pm-sampling-probe": 7.2,
    "issues:cupti12.9": 29.3,
    "overhead:cuda": 94.5,
    "overhead:pytorch": 82.0,
    "frameworks:jax": 10.3,
    "frameworks:cupy": 3.4,
    "frameworks:triton": 12.0,
    "frameworks:compile": 42.8,
    "frameworks:dataloader": 8.9,
    "frameworks:spawn": 22.7,
    "rest:pytorch-vs-torch.profiler": 37.8,
    "rest:torch.compile-replays": 45.7,
    "rest:overhead-call-sites": 49.4,
    "rest:ka-static-memcpy": 0.8,
    "rest:ka-static-memset": 0.8,
    "rest:ka-static-streams": 0.9,
    "rest:ka-static-tiny": 4.4,
    "rest:ka-static-latency": 4.3,
    "rest:ka-static-api": 3.1,
    "rest:ka-static-memcpy-loop": 2.6,
    "rest:ka-static-large": 1.8,
    "rest:ka-static-range": 0.8,
    "rest:ka-static-threads": 1.6,
    "rest:ka-static-nvtx": 0.8,
    "rest:ka-static-fork": 1.4,
    "rest:ka-static-abort": 1.8,
    "rest:ka-shared-kernels": 0.7,
    "rest:ka-shared-memcpy": 0.8,
    "rest:ka-shared-tiny": 4.3,
    "rest:ka-shared-nvtx": 0.8,
    "rest:ka-shared-fork": 1.4,
    "rest:example": 0.4,
}


def measured(label, what="", rounds_run=1, rounds=1):
    """(estimate_s, basis) of a check from its H200 seconds: rounded up, + 1 s (a cold driver, a busier machine),
    scaled from the rounds that ran to the rounds asked for."""
    seconds = H200_SECONDS[label] / rounds_run * rounds
    return math.ceil(seconds) + 1, H200 + f"{seconds:.1f} s" + (f" ({what})" if what else "")


# ----- issue 34: CUPTI 12.9 on the r580 driver ------------------------------------------------------------------------

CUPTI12_MODES = ("kernels", "memcpy", "memset", "streams", "graph", "memory")  # raw records only, no reports
CUPTI12_STEPS = 50


def api_key(name):
    """An API call's name across CUPTI 12 and 13: 19 runtime ids lost a _v2/_v3 in 13.0 (cudaGetDeviceProperties_v2 is
    cudaGetDeviceProperties there, same id), so they are compared without it."""
    return re.sub(r"_v[23]$", "", g.normalize_api_name(name))


def record_profile(records):
    """What two CUPTIs recording the same deterministic program must agree on, timing aside: kernels by name and
    launch shape, copies by kind and bytes, memsets, memory operations, pool operations, graph launches, API calls by
    name and domain. {kind: {key: count}}."""
    def tally(items):
        out = {}
        for key in items:
            out[key] = out.get(key, 0) + 1
        return out
    return {
        "kernel": tally((k["name"], tuple(g.dims(k, "grid")), tuple(g.dims(k, "block"))) for k in records.of("kernel")),
        "memcpy": tally((m.get("copy_kind"), m.get("bytes")) for m in records.of("memcpy")),
        "memset": tally((m.get("bytes"), m.get("value")) for m in records.of("memset")),
        "memory": tally((m.get("op"), m.get("memory_kind"), m.get("bytes")) for m in records.of("memory")),
        "memory_pool": tally((p.get("op"), p.get("pool_type")) for p in records.of("memory_pool")),
        "graph_launch": tally(x.get("graph_id") for x in records.of("graph_launch")),
        "api_call": tally((a.get("domain"), api_key(a["name"])) for a in records.of("api_call")),
    }


def profile_differences(a, b, limit=6):
    """The keys whose counts differ between two record_profile()s: [(kind, key, count in a, count in b)]."""
    out = []
    for kind in sorted(set(a) | set(b)):
        x, y = a.get(kind, {}), b.get(kind, {})
        for key in sorted(set(x) | set(y), key=repr):
            if x.get(key, 0) != y.get(key, 0):
                out.append((kind, key, x.get(key, 0), y.get(key, 0)))
    return out[:limit], len(out)


def check_cupti12_run(records12, records13, label):
    """One program recorded with CUPTI 12.9 (GPROF_CUPTI_LIB) and with the default CUPTI 13: the 12.9 run loaded it,
    said what its records lack, warned of nothing, and holds the same records as the 13 run."""
    lines = statuses(records12)
    loaded = [m for m in lines if re.match(r"CUPTI 12\.9 .*loaded from ", m)]
    lacks = [m for m in lines if "records lack" in m and "isDeviceLaunched" in m]
    bad = alarms(records12, "cupti")
    out = [verdict(bool(loaded) and bool(lacks) and not bad, f"{label}:cupti12.9-loaded",
                   (loaded[0] if loaded else "no 'CUPTI 12.9 ... loaded from' line")
                   + ("" if lacks else "; no 'records lack' line") + (f"; CUPTI warnings: {bad[:3]}" if bad else ""))]
    first, n = profile_differences(record_profile(records12), record_profile(records13))
    counts = {k: len(records12.of(k)) for k in ("kernel", "memcpy", "memset", "memory", "api_call")}
    out.append(verdict(n == 0 and counts["kernel"] + counts["memcpy"] + counts["memset"] > 0, f"{label}:same-as-cupti13",
                       f"CUPTI 12.9 records {counts}; differences from CUPTI 13: {n}"
                       + (f", first (kind, key, 12.9, 13): {first}" if n else "")))
    return out


def check_pytorch_refused(rc, out, err, records12, label):
    """PyTorch loaded its own CUPTI 13 at import: GPROF_CUPTI_LIB naming CUPTI 12.9 is refused (never two CUPTIs in
    one process) in one line, and the program runs unharmed to its result."""
    said = [l for l in err.splitlines() if "CUPTI unavailable" in l]
    res = g.train_result(out)
    ok = rc == 0 and res is not None and len(said) == 1 and "already loaded" in said[0] and not records12.of("kernel")
    return [verdict(ok, f"{label}:refused-beside-pytorch's-cupti",
                    f"exit={rc} result={'yes' if res else 'no'} lines={said[:2]} kernels={len(records12.of('kernel'))}")]


def cupti12(ctx):
    """CUPTI 12.9 (nvidia-cuda-cupti-cu12 12.9.79, carried in the pack) on this machine's r580 driver (issue 34):
    `gprof-run --check` names it; the known-answer modes recorded with it against their answers and against the
    default CUPTI 13 run of the same modes; the PyTorch step recorded with it against the CUPTI 13 run -- or, where
    PyTorch loaded its own CUPTI 13 at import, refused in one line with the program unharmed."""
    pack, v = ctx.pack, ctx.v
    if not os.path.exists(pack.cupti12):
        v.add("SKIP", "cupti12.9", f"{pack.cupti12} not in the pack (scripts/setup fetches the wheel)")
        return
    forced = {"GPROF_CUPTI_LIB": pack.cupti12}
    rc, _, out, err = g.timed([pack.gprof_run, "--check"], env=g.app_env(pack, forced))
    ctx.data()["check"] = out[-4000:]
    v.add("PASS" if rc == 0 and "* CUPTI 12.9 Update 1" in out else "FAIL", "cupti12.9:--check",
          f"exit {rc}; " + "; ".join(l.strip() for l in out.splitlines() if l.startswith(("* ", "not ready")))[:300])
    for mode in CUPTI12_MODES:
        thirteen = g.known_mode(ctx, "static", mode, reports=False, run_name=f"cupti13-{mode}",
                                label="cupti13:ka-static")
        if not thirteen:
            return
        twelve = g.known_mode(ctx, "static", mode, reports=False, run_name=f"cupti12.9-{mode}", bare=thirteen[0],
                              label="cupti12.9:ka-static", env=forced)
        if twelve:
            g.add_all(v, check_cupti12_run(twelve[1], thirteen[1], f"cupti12.9:ka-static:{mode}"))
    if not g.have_torch():
        v.add("SKIP", "cupti12.9:pytorch", "PyTorch with CUDA not importable by " + sys.executable)
        return
    train = [sys.executable, pack.train, "--steps", str(CUPTI12_STEPS), "--mode", "bare"]
    runs = {}
    for name, env in (("13", None), ("12.9", forced)):
        run_dir = ctx.run_dir(f"cupti{name}-pytorch")
        rc, _, out, err = g.timed(g.launcher_cmd(pack, run_dir, train), env=g.app_env(pack, env), timeout=600)
        runs[name] = (rc, out, err, g.load_run(pack, run_dir)[0])
    rc13, _, err13, rec13 = runs["13"]
    if rc13 != 0:
        v.add("FAIL", "cupti12.9:pytorch:cupti13-run", f"exit {rc13}: {err13.strip()[-300:]}")
        return
    rc, out, err, rec12 = runs["12.9"]
    if "already loaded" in err:
        g.add_all(v, check_pytorch_refused(rc, out, err, rec12, "cupti12.9:pytorch"))
        v.add("SKIP", "cupti12.9:pytorch:vs-cupti13", "this PyTorch loads its own CUPTI 13 at import: a CUPTI 12.9 "
              "cannot join it (a PyTorch cu12 build would record with its own libcupti.so.12)")
        return
    share, ratio, worst = g.compare_kernel_tables(g.kernel_table_from_records(rec12), g.kernel_table_from_records(rec13))
    ok = rc == 0 and share >= g.PYTORCH_MATCH_MIN and abs(ratio - 1) <= g.PYTORCH_TIME_TOL
    v.add("PASS" if ok else "FAIL", "cupti12.9:pytorch:vs-cupti13",
          f"exit={rc} matched={share * 100:.2f}% kernel time ratio={ratio:.4f}" + (f" worst={worst}" if worst else ""))


def registry(options=None):
    """Every check in run order. options: the command line (--rounds, --pytorch-rounds), or None for the defaults."""
    rounds = getattr(options, "rounds", None) or CUDA_OVERHEAD_ROUNDS
    py_rounds = getattr(options, "pytorch_rounds", None) or PYTORCH_OVERHEAD_ROUNDS
    checks = [
        # (1) smoke
        Check("smoke", "kernels", *measured("smoke:kernels", "ka-static-kernels bare, gprof-run, dump; every report"),
              smoke, "cupti-session"),
        # (2) one per capability that has met only the stand-in
        Check("capability", "graph-node", *measured("capability:graph-node", "ka-static-graph; every report"),
              lambda ctx: g.known_mode(ctx, "static", "graph"), "graph-node"),
        Check("capability", "graph-level", *measured("capability:graph-level", "graph mode; every report"),
              g.graph_level, "graph-level"),
        Check("capability", "nvtx-capture", *measured("capability:nvtx-capture", "ka-static-nvtx-capture, bare run"),
              g.nvtx_capture, "nvtx-capture"),
        Check("capability", "memory", *measured("capability:memory", "ka-static-memory; every report"),
              lambda ctx: g.known_mode(ctx, "static", "memory"), "memory"),
        Check("capability", "runtime-driver-calls", *measured("capability:runtime-driver-calls",
                                                              "ka-static-kernels twice + the bare runs"),
              runtime_driver_calls, "runtime-driver-calls"),
        Check("capability", "api-sources", *measured("capability:api-sources", "ka-static-kernels three times"),
              api_sources, "api-from-activity"),
        Check("capability", "buffer-attributes", *measured("capability:buffer-attributes", "ka-static-streams"),
              buffer_attributes, "buffer-attributes"),
        Check("capability", "cupti-subscribe", *measured("capability:cupti-subscribe", "three runs of the client"),
              cupti_subscribe, "cupti-subscribe"),
        Check("capability", "call-sites", *measured("capability:call-sites", "ka-kernels-backtrace static and shared; "
                                                    "cuda_callsite_sum"), call_sites, "call-sites"),
        Check("capability", "python-frames", *measured("capability:python-frames", "train.py 50 steps under "
                                                       "--backtrace, dump and report"), python_frames, "python-frames"),
        Check("capability", "torch-profiler-told", *measured("capability:torch-profiler-told",
                                                             "three PyTorch processes with torch.profiler"),
              g.torch_profiler_told, "torch-profiler-told"),
        # (3) the open issues
        Check("issues", "pm-sampling-probe", *measured("issues:pm-sampling-probe", "bare and under gprof-run"),
              pm_sampling_probe, "pm-sampling-raw"),
        Check("issues", "gpu-metrics", 25, "guess: the probe's phases (0.55 s) under gprof-run with PM sampling, "
              "summary; ncu on 8 launches where installed (issues:pm-sampling-probe took 7.2 s on the H200)",
              gpu_metrics, "gpu-metrics"),
        Check("issues", "cupti12.9", *measured("issues:cupti12.9", "--check; 6 known-answer modes with CUPTI 13 and "
                                               "12.9; train.py 50 steps twice"), cupti12),
        Check("issues", "cpu-sampling", 55, "guess: train.py 100 steps twice, sampled and -s none, + cpu_sample_sum "
              "and analyze (H200 2026-11-27: python-frames, train.py 50 steps under --backtrace with dump and report, "
              "took 26.2 s)", cpu_sampling, "cpu-sampling"),
        # (4) the overhead table, few rounds
        Check("overhead", "cuda", *measured("overhead:cuda", f"2 rounds measured, {rounds} asked", 2, rounds),
              lambda ctx: g.overhead_cuda(ctx, rounds)),
        Check("overhead", "pytorch", *measured("overhead:pytorch", f"1 round measured, {py_rounds} asked", 1,
                                               py_rounds),
              lambda ctx: g.overhead_pytorch(ctx, py_rounds)),
    ]
    # (5) framework programs, bare and under gprof-run
    for program in g.FRAMEWORK_PROGRAMS:
        checks.append(Check("frameworks", program, *measured(f"frameworks:{program}", "bare and under gprof-run"),
                            lambda ctx, p=program: g.framework(ctx, p)))
    # (6) the rest
    checks += [
        Check("rest", "pytorch-vs-torch.profiler", *measured("rest:pytorch-vs-torch.profiler"),
              g.pytorch_vs_torch_profiler),
        Check("rest", "torch.compile-replays", *measured("rest:torch.compile-replays"), g.torch_compiled),
        Check("rest", "overhead-call-sites", *measured("rest:overhead-call-sites", "one round"),
              lambda ctx: g.overhead_call_sites(ctx, 1)),
    ]
    # Known-answer modes not run above.
    for mode in [m for m in g.KNOWN_MODES if m not in ("kernels", "graph", "memory")]:
        checks.append(Check("rest", f"ka-static-{mode}", *measured(f"rest:ka-static-{mode}"),
                            lambda ctx, m=mode: g.known_mode(ctx, "static", m)))
    for mode in g.SHARED_MODES:
        checks.append(Check("rest", f"ka-shared-{mode}", *measured(f"rest:ka-shared-{mode}"),
                            lambda ctx, m=mode: g.known_mode(ctx, "shared", m)))
    checks.append(Check("rest", "example", *measured("rest:example", "gprof-example-nvtx 50 steps"),
                        lambda ctx: g.example(ctx, ctx.outbox)))
    return checks


# The capabilities issue #28 lists, each of which some check above must validate (the CPU test of --plan holds the
# plan to it: every one planned within 540 s).
CAPABILITIES = ("cupti-session", "graph-node", "graph-level", "nvtx-capture", "memory", "runtime-driver-calls",
                "api-from-activity", "buffer-attributes", "cupti-subscribe", "call-sites", "python-frames",
                "torch-profiler-told", "pm-sampling-raw")


# ----- self-test of the checks above: each passes what a correct run gives and fails a planted fault ----------------

def selftest(expect, kernels_answer):
    """expect(condition, what) records one self-test result; kernels_answer: the kernels mode's known answer."""
    def records(recs):
        return g.Records.from_lines(json.dumps(r) for r in recs)

    def statuses_of(*lines, level="info", component="cupti"):
        return [{"k": "status", "level": level, "component": component, "code": 0, "message": m} for m in lines]

    def by_name(results):
        return {name: status for status, name, _ in results}

    def passes(results):
        return bool(results) and all(s == "PASS" for s, _, _ in results)

    base = g.synthesize_records(kernels_answer)
    loaded = "CUPTI 13.0 (API version 130001) loaded from /usr/local/cuda/lib64/libcupti.so.13 (/usr/local/cuda)"

    # smoke: the CUPTI status lines
    expect(passes(check_cupti_started(records(base + statuses_of(loaded)), "s")), "smoke: CUPTI started passes")
    expect(passes(check_cupti_started(records(base + statuses_of(
        "CUPTI 130001 loaded from /usr/local/cuda/lib64/libcupti.so.13 (/usr/local/cuda)")), "s")),
        "smoke: the line of a collector before issue 34 passes")

    # issue 34: CUPTI 12.9 against CUPTI 13 on the same program
    loaded12 = statuses_of(
        "CUPTI 12.9 Update 1 (API version 28) loaded from /p/cupti12/libcupti.so.12 (GPROF_CUPTI_LIB)",
        "CUPTI 12.9 Update 1 (API version 28) records lack a kernel's isDeviceLaunched (Kernel9), a memory pool's "
        "isManagedPool (MemoryPool2): unknown in this trace (they read 0)")
    # CUPTI 12's names of the 19 renamed runtime calls: cudaGetDeviceProperties_v2_v12000 where 13 says
    # cudaGetDeviceProperties_v12000 (the collector drops the _vNNNN; the dump may hold either form).
    renamed = [dict(r, name=re.sub(r"(_v\d+)?$", lambda m: "_v2" + m.group(0), r["name"], count=1))
               if r["k"] == "api_call" and r.get("domain") == "runtime" else r for r in base]
    expect(passes(check_cupti12_run(records(base + loaded12), records(base + statuses_of(loaded)), "c12")),
           "cupti12.9: the same records as CUPTI 13 passes")
    expect(passes(check_cupti12_run(records(renamed + loaded12), records(base), "c12")),
           "cupti12.9: runtime names with CUPTI 12's _v2 pass")
    res = by_name(check_cupti12_run(records(base + loaded12), records(base + [r for r in base if r["k"] == "kernel"][:1]),
                                    "c12"))
    expect(res.get("c12:same-as-cupti13") == "FAIL", "cupti12.9: a kernel fewer than CUPTI 13 fails")
    res = by_name(check_cupti12_run(records(base + statuses_of(loaded)), records(base), "c12"))
    expect(res.get("c12:cupti12.9-loaded") == "FAIL", "cupti12.9: a run that loaded CUPTI 13 instead fails")
    refused = "gprof-run: CUDA activity not recorded: CUPTI unavailable: GPROF_CUPTI_LIB names /p/libcupti.so.12, " \
              "but the program already loaded /v/nvidia/cu13/lib/libcupti.so.13: a second CUPTI is never loaded"
    train_out = 'TRAIN_RESULT {"steps": 50}\n'
    no_kernels = records([r for r in base if r["k"] != "kernel"])
    expect(passes(check_pytorch_refused(0, train_out, refused, no_kernels, "p")),
           "cupti12.9: refused beside PyTorch's CUPTI, program unharmed passes")
    expect(not passes(check_pytorch_refused(1, "", refused, no_kernels, "p")),
           "cupti12.9: the program failing when refused fails")
    expect(not passes(check_cupti_started(records(base), "s")), "smoke: no 'CUPTI loaded' line fails")
    expect(not passes(check_cupti_started(records(base + statuses_of(loaded) + statuses_of(
        "cannot enable CUPTI activity kind MEMCPY (CUPTI_ERROR_NOT_SUPPORTED): those records are missing",
        level="warning")), "s")), "smoke: a CUPTI warning fails")

    # the runtime's own driver calls
    hidden = ["cuKernelGetName", "cuLibraryGetKernel"]
    said = statuses_of("driver calls the CUDA runtime makes internally (cuKernelGetName, ...) are not recorded")
    launches = [r for r in base if r["k"] == "api_call" and "Launch" in r["name"]]
    nested = [dict(r, features=1 << 17) if r["k"] == "header" else r for r in base]
    nested += [{"k": "api_call", "name": "cuKernelGetName", "domain": "driver", "start": r["start"] - 2,
                "end": r["start"] - 1, "tid": 1, "correlation": 90000 + i} for i, r in enumerate(launches)]
    expect(passes(check_driver_calls(records(base + said), records(nested), hidden, "d")),
           "driver calls: hidden by default, kept on request passes")
    res = by_name(check_driver_calls(records(nested + said), records(nested), hidden, "d"))
    expect(res.get("d:hidden-by-default") == "FAIL", "driver calls: a cuKernelGetName recorded by default fails")
    res = by_name(check_driver_calls(records(base + said), records(base), hidden, "d"))
    expect(res.get("d:kept-on-request") == "FAIL", "driver calls: none with --cuda-nested-driver-calls fails")

    # API call sources
    cb = base + statuses_of("CUDA API calls recorded from CUPTI callbacks (GPROF_CUDA_API=callback)")
    off = [r for r in base if r["k"] != "api_call"] + statuses_of(
        "CUDA API calls not recorded (GPROF_CUDA_API=off): GPU activity only")
    runs = {"activity": records(base), "callback": records(cb), "off": records(off)}
    expect(passes(check_api_sources(runs, kernels_answer, "a")), "API sources: activity, callback, off pass")
    res = by_name(check_api_sources(dict(runs, off=records(base)), kernels_answer, "a"))
    expect(res.get("a:off") == "FAIL", "API sources: API records under --cuda-api=off fail")
    short = list(cb)
    del short[next(i for i, r in enumerate(short) if r["k"] == "api_call" and "Launch" in r["name"])]
    res = by_name(check_api_sources(dict(runs, callback=records(short)), kernels_answer, "a"))
    expect(res.get("a:callback") == "FAIL", "API sources: a launch missing from the callbacks fails")
    early = [dict(r) for r in base]
    k = next(r for r in early if r["k"] == "kernel")
    k["start"], k["end"] = 10, 20  # before its launch call began
    res = by_name(check_api_sources(dict(runs, activity=records(early)), kernels_answer, "a"))
    expect(res.get("a:activity:launch-before-kernel") == "FAIL", "API sources: a kernel before its launch fails")

    # CUPTI buffer attributes
    attrs = statuses_of("CUPTI buffer attributes: device buffer 32 MiB; 6 device buffers pre-allocated per context; "
                        "activity buffers zeroed by the collector off the app's threads")
    expect(passes(check_buffer_attributes(records(base + attrs), "b")), "buffer attributes: all accepted passes")
    refused = statuses_of("CUPTI buffer attributes: device buffer 32 MiB; 6 device buffers pre-allocated per context") \
        + statuses_of("cuptiActivitySetAttribute(ZEROED_OUT_ACTIVITY_BUFFER) failed (CUPTI_ERROR_INVALID_PARAMETER): "
                      "CUPTI's default is used", level="warning")
    expect(not passes(check_buffer_attributes(records(base + refused), "b")), "buffer attributes: one refused fails")

    # cuptiSubscribe_v2 and the coexistence messages
    ok_client = {"v2": {"result": 0, "holder": ""}, "v1": {"result": 0}}
    refused_client = {"v2": {"result": 39, "holder": HOLDER_NAME}, "v1": {"result": 39}}
    told = [f"{CLIENT_NAME} (in gprof-test-cupti-client) asked CUPTI for a subscription while gprof-run held it; CUPTI "
            f"refused it (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), so ... run gprof-run with {WAY_OUT}: ...",
            f"a CUPTI client in gprof-test-cupti-client asked CUPTI for a subscription while gprof-run held it; CUPTI "
            f"refused it (...), so ... run gprof-run with {WAY_OUT}: ..."]
    expect(passes(check_cupti_clients(ok_client, refused_client, told, ok_client, "c")),
           "CUPTI clients: refused, named and told once each passes")
    beside = [f"{CLIENT_NAME} (in x) subscribed to CUPTI beside gprof-run: both record GPU activity",
              "a CUPTI client in x subscribed to CUPTI beside gprof-run: both record GPU activity"]
    expect(passes(check_cupti_clients(ok_client, ok_client, beside, ok_client, "c")),
           "CUPTI clients: accepted beside gprof-run and said passes")
    res = by_name(check_cupti_clients(ok_client, dict(refused_client, v2={"result": 39, "holder": ""}), told,
                                      ok_client, "c"))
    expect(res.get("c:v2-refused-and-told") == "FAIL", "CUPTI clients: a refusal without the holder's name fails")
    res = by_name(check_cupti_clients(ok_client, refused_client, told[1:], ok_client, "c"))
    expect(res.get("c:v2-refused-and-told") == "FAIL", "CUPTI clients: a refusal nobody is told of fails")
    res = by_name(check_cupti_clients(ok_client, refused_client, told + told[1:], ok_client, "c"))
    expect(res.get("c:v1-refused-and-told") == "FAIL", "CUPTI clients: the same refusal told twice fails")
    res = by_name(check_cupti_clients(ok_client, refused_client, told, refused_client, "c"))
    expect(res.get("c:way-out") == "FAIL", "CUPTI clients: still refused under -t nvtx fails")

    # call sites
    app = "/pack/apps/gprof-test-ka-shared"
    mods = [{"k": "module", "base": 0x400000, "size": 0x100000, "path": app},
            {"k": "module", "base": 0x7f0000000000, "size": 0x1000000,
             "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}]
    calls = [r for r in base if r["k"] == "api_call"]
    stack = [{"k": "stack", "id": 1, "frame_count": 3, "frames": [0x401000, 0x402000, 0x403000]}]
    sites = [{"k": "call_site", "tid": 1, "correlation": r["correlation"], "stack": 1, "py_stack": 0} for r in calls]
    expect(passes(check_call_sites(records(base + mods + stack + sites), app, "cs", False)),
           "call sites: every call, first frame the program's passes")
    inner = [{"k": "stack", "id": 1, "frame_count": 3, "frames": [0x7f0000001000, 0x401000, 0x402000]}]
    res = by_name(check_call_sites(records(base + mods + inner + sites), app, "cs", False))
    expect(res.get("cs:first-frame-is-the-program") == "FAIL", "call sites: a libcuda frame first fails")
    res = by_name(check_call_sites(records(base + mods + stack + sites[1:]), app, "cs", False))
    expect(res.get("cs:every-call") == "FAIL", "call sites: a call without its call site fails")
    def row(f, line, module=app):
        return {"site": f"{os.path.basename(f)}:{line}", "function": "launch", "api_calls": 27,
                "stack": [{"function": "launch", "file": f, "line": line, "module": module, "python": False}]}

    def doc(rows):
        return {"reports": {"cuda_callsite_sum": {"rows": rows}}}
    ka = os.path.basename(app)
    expect(passes(check_callsite_report(doc([row("/src/tests/apps/known_answer.cu", 120)]), ka, "known_answer.cu",
                                        "r")), "call-site report: sites at the program's source pass")
    expect(not passes(check_callsite_report(doc([row("/src/tests/apps/known_answer.cu", 120),
                                                 row("cuda_runtime.h", 0)]), ka, "known_answer.cu", "r")),
           "call-site report: a site in the runtime's header fails")
    expect(not passes(check_callsite_report(doc([row("", 0, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")]), ka, None,
                                            "r")), "call-site report: a site in libcuda fails, symbols or not")

    # Python frames
    py = [{"k": "header", "pid": 7, "features": 1 << 16},
          {"k": "py_frame", "id": 1, "file": "/pack/tests/gpu/train.py", "function": "step", "line": 88},
          {"k": "py_stack", "id": 1, "frame_count": 1, "frames": [1]}]
    py_sites = [{"k": "call_site", "tid": 7, "correlation": i, "stack": 1, "py_stack": 1} for i in range(100)]
    py_line = statuses_of("call sites: Python stacks (CPython 3.12.3): 100 calls with a Python stack, ...",
                          component="collector")
    expect(passes(check_python_frames(records(py + py_sites + py_line), "/pack/tests/gpu/train.py", "p")),
           "Python frames: the script's frames on the main thread's calls pass")
    half = [dict(s, py_stack=0) if s["correlation"] % 2 else s for s in py_sites]
    expect(not passes(check_python_frames(records(py + half + py_line), "/pack/tests/gpu/train.py", "p")),
           "Python frames: half the calls without Python frames fails")
    pyrow = {"site": "train.py:88", "api_calls": 100,
             "stack": [{"function": "step", "file": "/pack/tests/gpu/train.py", "line": 88, "python": True}]}
    expect(passes(check_python_report(doc([pyrow]), "/pack/tests/gpu/train.py", "p")),
           "Python frames: the report's top site in the script passes")
    expect(not passes(check_python_report(doc([row("/usr/lib/libtorch_cuda.so", 0)]), "/pack/tests/gpu/train.py",
                                          "p")), "Python frames: no site with Python frames fails")
    torch_row = dict(pyrow, site="linear.py:134", stack=[
        {"function": "Linear.forward", "file": "/venv/torch/nn/modules/linear.py", "line": 134, "python": True},
        {"function": "main", "file": "/pack/tests/gpu/train.py", "line": 92, "python": True}])
    autograd = row("", 0, "/venv/torch/lib/libtorch_cuda.so")
    expect(passes(check_python_report(doc([autograd, torch_row]), "/pack/tests/gpu/train.py", "p")),
           "Python frames: torch's own Python frame first, the script below it, the autograd thread's site in libtorch "
           "passes")
    expect(not passes(check_python_report(doc([row("", 0, "/venv/nvidia/cu13/lib/libcublasLt.so.13"), torch_row]),
                                          "/pack/tests/gpu/train.py", "p")), "Python frames: a site in cuBLASLt fails")
    native_first = dict(torch_row, stack=[row("", 0, "/venv/torch/lib/libtorch_cuda.so")["stack"][0]]
                        + torch_row["stack"])
    expect(not passes(check_python_report(doc([native_first]), "/pack/tests/gpu/train.py", "p")),
           "Python frames: a native frame before the Python ones fails")

    # CPU sampling (issue #35)
    smp = [{"k": "cpu_sample", "tid": 7, "ip": 0x401000, "stack": 0, "py_stack": 1 if i % 4 else 0, "periods": 4,
            "period_ns": 1000000} for i in range(40)]
    on = statuses_of("CPU sampling on: every thread at 1000 Hz of its CPU time (SIGPROF, ...)", component="collector")
    expect(passes(check_cpu_samples(records(py + smp + on), "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: the main thread's samples with the script's Python frames pass")
    expect(not passes(check_cpu_samples(records(py + smp), "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: no 'CPU sampling on' line fails")
    no_py = [dict(x, py_stack=0) for x in smp]
    expect(not passes(check_cpu_samples(records(py + no_py + on), "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: samples without Python frames fail")
    lost = statuses_of("CPU sampling: 40 samples ...; 12 samples lost (a thread's ring was full)", component="collector")
    expect(not passes(check_cpu_samples(records(py + smp + on + lost), "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: lost samples fail")
    cdoc = {"reports": {"cpu_sample_sum": {"rows": [
        {"name": "step", "location": "/pack/tests/gpu/train.py:88", "total_samples": 30}]}}}
    host = {"verdict": {"id": "cpu_launch_bound", "reason": "... The host's CPU time went to step (train.py:88) 40%"},
            "host": {"samples": 40, "functions": [{"name": "step"}]}}
    expect(passes(check_cpu_report(cdoc, host, "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: the script's line in the report and a named verdict pass")
    expect(not passes(check_cpu_report(cdoc, dict(host, verdict={"id": "cpu_launch_bound", "reason": "GPU busy 1%"}),
                                       "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: a CPU/launch-bound verdict that names no code fails")
    native = {"reports": {"cpu_sample_sum": {"rows": [{"name": "f", "location": "libtorch_cpu.so", "total_samples": 30}]}}}
    expect(not passes(check_cpu_report(native, host, "/pack/tests/gpu/train.py", "c")),
           "CPU sampling: no line of the script in the report fails")
    expect(passes(check_sampling_overhead(10.2, 10.0, "c")) and not passes(check_sampling_overhead(13.0, 10.0, "c")),
           "CPU sampling: 2 % passes, 30 % fails")

    # torch.profiler inside gprof-run, told in one line
    bare, traced = {"profiler_kernels": 120}, {"profiler_kernels": 0}
    line = ["warning: torch.profiler (kineto, in libtorch_cpu.so) asked CUPTI ...; run gprof-run with -t nvtx: ..."]
    expect(passes(g.check_profiler_told(bare, traced, line, bare)), "torch.profiler: told in one line passes")
    expect(not passes(g.check_profiler_told(bare, traced, [], bare)), "torch.profiler: not told fails")
    expect(not passes(g.check_profiler_told(bare, traced, line * 2, bare)), "torch.profiler: told twice fails")
    expect(not passes(g.check_profiler_told(bare, traced, line, traced)),
           "torch.profiler: -t nvtx not the way out fails")

    # the raw PM-sampling probe
    def pm_doc(tensor_pct=(80.0, 1.0), dram_pct=(5.0, 85.0), clock_shift=0, fail=None, order_ok=True):
        # Shaped as the H200's: 100 us samples tiling Start..Stop, 20 ms phases with 15 ms of decoding between them
        # (sampled too), and a first sample that begins 300 ms before Start.
        interval, phase_ns, gap_ns, start = 100_000, 20_000_000, 15_000_000, 10**9
        idle = [1e3, 2e6, 0.5, 0.0, 0.1]
        values, phases, t = {}, [], start
        for name, tp, dp in (("idle", 0.0, 0.1), ("tensor", tensor_pct[0], dram_pct[0]), ("idle", 0.0, 0.1),
                             ("copy", tensor_pct[1], dram_pct[1]), ("idle", 0.0, 0.1)):
            busy = name != "idle"
            phases.append({"name": name, "launches": 40 if busy else 0, "cupti_start": t, "cupti_end": t + phase_ns})
            values[name] = [2e6, 2e6, 95.0, tp, dp] if busy else [1e3, 2e6, 0.5, tp, dp]
            t += phase_ns + gap_ns
        rows = [[start - 300_000_000 + clock_shift, start + interval + clock_shift] + idle]
        s = start + interval
        while s < t:
            ph = next((p for p in phases if p["cupti_start"] <= s + interval // 2 < p["cupti_end"]), None)
            rows.append([s + clock_shift, s + interval + clock_shift] + (values[ph["name"]] if ph else idle))
            s += interval
        if not order_ok:
            rows[3], rows[4] = rows[4], rows[3]
        calls = [{"call": c, "result": 0, "name": "CUPTI_SUCCESS"} for c in PM_CALLS_THAT_MUST_WORK]
        if fail:
            calls.append({"call": fail, "result": 1, "name": "CUPTI_ERROR_INVALID_PARAMETER"})
            calls = [c for c in calls if not (c["call"] == fail and c["result"] == 0)]
        cols = ["start", "end", "gr__cycles_active.sum", "gr__cycles_elapsed.max",
                "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                "dram__throughput.avg.pct_of_peak_sustained_elapsed"]
        return {"chip": "GH100", "calls": calls, "exit": 0, "error": None, "phases": phases, "overflow": False,
                "evaluate_failures": 0, "metrics_used": cols[2:], "samples": {"columns": cols, "rows": rows},
                "sampling": {"interval_ns": interval}}
    expect(passes(check_pm_probe(pm_doc(), "pm")), "PM sampling: calls, samples, clock and phases as expected pass")
    expect(by_name(check_pm_probe(pm_doc(fail="cuptiPmSamplingSetConfig"), "pm")).get("pm:calls") == "FAIL",
           "PM sampling: a refused cuptiPmSamplingSetConfig fails")
    expect(by_name(check_pm_probe(pm_doc(tensor_pct=(1.0, 1.0)), "pm")).get("pm:phases") == "FAIL",
           "PM sampling: tensor activity no higher in the tensor phase fails")
    expect(by_name(check_pm_probe(pm_doc(dram_pct=(90.0, 85.0)), "pm")).get("pm:phases") == "FAIL",
           "PM sampling: DRAM throughput no higher in the copy phase fails")
    shifted = by_name(check_pm_probe(pm_doc(clock_shift=10**12), "pm"))
    expect(shifted.get("pm:clock") == "FAIL" and shifted.get("pm:phases") == "FAIL",
           "PM sampling: samples on another clock fail the clock and the phases checks")

    # gprof-run's own sampler judged as the probe: the probe's synthetic samples as the collector's records.
    def metric_records(pm, chip="GH100", set_name="gh100", drop=None):
        cols = pm["samples"]["columns"][2:]
        recs = [{"k": "gpu_metric_set", "device": 0, "name": set_name, "chip": chip, "metrics": " ".join(cols),
                 "interval_ns": pm["sampling"]["interval_ns"]}]
        rows = pm["samples"]["rows"][1:]  # the collector leaves out the first sample (it begins before Start)
        recs += [{"k": "gpu_metric_sample", "device": 0, "start": r[0], "end": r[1], "values": r[2:]}
                 for i, r in enumerate(rows) if i != drop]
        return records(recs)
    pm = pm_doc()
    summary_ok = "GPU metrics:\n  GPU 0 (GH100, set gh100): ...\n             SM active  45.0 %"
    run = gpu_metrics_doc(metric_records(pm), pm)
    expect(passes(check_gpu_metrics_run(run, 0, "", summary_ok, "gm")),
           "GPU metrics run: the probe's phases told apart by the collector's samples pass")
    expect(by_name(check_gpu_metrics_run(gpu_metrics_doc(metric_records(pm, drop=40), pm), 0, "", summary_ok,
                                         "gm")).get("gm:samples") == "FAIL",
           "GPU metrics run: a gap between samples fails")
    refused = "gprof-run: GPU metrics not sampled on device 0: profiling not permitted (...)"
    expect(by_name(check_gpu_metrics_run(run, 0, refused, summary_ok, "gm")).get("gm:samples") == "FAIL",
           "GPU metrics run: a refusal said on stderr fails")
    expect(by_name(check_gpu_metrics_run(gpu_metrics_doc(records([]), pm), 0, "", "", "gm")).get("gm:samples")
           == "FAIL", "GPU metrics run: no records fails")
    expect(by_name(check_gpu_metrics_run(run, 0, "", "Profiling result:", "gm")).get("gm:summary") == "FAIL",
           "GPU metrics run: a summary without the section fails")
    flat = pm_doc(tensor_pct=(1.0, 1.0))
    expect(by_name(check_gpu_metrics_run(gpu_metrics_doc(metric_records(flat), flat), 0, "", summary_ok, "gm"))
           .get("gm:phases") == "FAIL", "GPU metrics run: tensor activity no higher in the tensor phase fails")
    # ncu's CSV: two launches of each kernel, the first line of ncu's own chatter left out.
    ncu_csv = "==PROF== Connected to process\n" + "\n".join(
        ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
        + [f'"{i}","{k}(float*, int)","{m}","%","{val}"' for i, (k, m, val) in enumerate([
            ("pm_tensor_kernel", NCU_METRICS[0], "94.0"), ("pm_tensor_kernel", NCU_METRICS[0], "96.0"),
            ("pm_copy_kernel", NCU_METRICS[1], "84.0"), ("pm_copy_kernel", NCU_METRICS[1], "86.0")])])
    ncu = ncu_kernel_means(ncu_csv)
    expect(ncu.get(("pm_tensor_kernel", NCU_METRICS[0])) == 95.0 and ncu.get(("pm_copy_kernel", NCU_METRICS[1]))
           == 85.0, "ncu CSV: the mean per kernel and metric")
    expect(passes([check_against_ncu(run, ncu, "gm")]), "ncu: the samples' phase means within the tolerance pass")
    far = dict(ncu)
    far[("pm_copy_kernel", NCU_METRICS[1])] = 30.0
    expect(by_name([check_against_ncu(run, far, "gm")]).get("gm:ncu") == "FAIL",
           "ncu: DRAM throughput 55 points from ncu's fails")
    expect(by_name([check_against_ncu(run, {}, "gm")]).get("gm:ncu") == "FAIL", "ncu: no ncu figures fails")
    late = by_name(check_pm_probe(pm_doc(clock_shift=5_000_000), "pm"))
    expect(late.get("pm:clock") == "FAIL", "PM sampling: samples 5 ms late fail the clock check")
    expect(by_name(check_pm_probe(pm_doc(order_ok=False), "pm")).get("pm:samples") == "FAIL",
           "PM sampling: samples out of time order fail")
