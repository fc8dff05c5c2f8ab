#!/usr/bin/env python3
"""CPU-only tests of gpu-check's runner and plan (ctest: gpu_check_*; seconds each, no GPU).

  test_gpu_check.py --case NAME [--build DIR]

Cases:
  plan        scripts/gpu-check --plan --budget 540: every capability of issue #28 planned, total within 540 s
  sigterm     a --run with the fake registry gets SIGTERM midway: the finished checks' verdicts are in results.json,
              the check in flight is marked interrupted and its process killed, exit 143
  sigkill     the same killed with SIGKILL (how the device tool ends a command at its limit): results.json as written
              after the last finished check, naming the one that was running
  budget      --budget 20: a check that does not fit is SKIP(budget), a later one that fits runs, one that runs into
              the end of the budget is stopped there, and nothing runs past the budget
  hang        a check far past its estimate is stopped as a failure (its process killed) and the run goes on
  archives    failed checks' traces: at most 6 archives of at most --archive-bytes, the rest named as left out
  no-gpu      (--build) the real registry against the build tree: the smoke check finds no CUDA device and every later
              check is skipped at once (on a machine with a GPU: the smoke check alone must pass)
  callsite-report-h100  (--build) check_callsite_report on the stored H100 trace recorded with --backtrace (its
              binary is not here: the sites start in the program, CUPTI's and the driver's frames cut)
  pm-probe-h200  check_pm_probe on the PM-sampling probe's documents from the H200 (tests/data/h200, shortened):
              every verdict passes bare and under gprof-run, and fails with the samples 5 ms off the phases' clock,
              moved as the first check moved them (by the first sample), or with the tensor and copy columns swapped
  callsite-report-h200  (--build) check_callsite_report, gpu-check's own judge, on the traces the H200 run of
              2026-11-27 failed (tests/data/h200: static and shared cudart, symbolised from the debug files of the
              binaries that ran)
  probes      (--build) the PM-sampling probe's host half for GH100 (the H100 and H200 chip, no GPU needed): the
              metrics the check judges by are valid and configured in one pass; without a GPU both probes exit 77
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
DRIVER = os.path.join(HERE, "gpu_check.py")
FAKE = os.path.join(HERE, "fake_checks.py")
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def results_of(out):
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def verdicts(results):
    return {v["name"]: v["status"] for v in results["verdicts"]}


def outcomes(results):
    return {c["label"]: c["outcome"] for c in results["checks"]}


def start_fake(scenario, out, *extra, env=None):
    marker = f"gpu-check-fake-{os.getpid()}-{scenario}"
    e = dict(os.environ, GPU_CHECK_FAKE_SCENARIO=scenario, GPU_CHECK_FAKE_MARKER=marker, **(env or {}))
    cmd = [sys.executable, DRIVER, "--run", out, "--out", out, "--registry", FAKE] + list(extra)
    return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), marker


def wait_running(out, label, proc, timeout=30):
    """Until results.json says `label` is running (the runner writes that before it starts a check)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and proc.poll() is None:
        try:
            r = results_of(out)
            if (r.get("running") or {}).get("label") == label:
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return False


def marker_processes(marker):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def case_plan(_):
    p = subprocess.run([os.path.join(SOURCE, "scripts", "gpu-check"), "--plan", "--budget", "540"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHON=sys.executable))
    expect(p.returncode == 0, f"--plan exits 0 ({p.returncode}: {p.stderr.strip()[-200:]})")
    lines = p.stdout.splitlines()
    planned = [l.split() for l in lines if l.startswith("PLAN ") and not l.startswith("PLAN total")]
    expect(all(len(x) == 3 and float(x[1]) > 0 and ":" in x[2] for x in planned),
           "each planned check is 'PLAN <seconds> <group>:<check>'")
    expect(lines and lines[-1].startswith("PLAN total ") and lines[-1].endswith(" of 540"),
           f"the last line is 'PLAN total <seconds> of 540': {lines[-1] if lines else None!r}")
    if not lines or not lines[-1].startswith("PLAN total "):
        return
    total = float(lines[-1].split()[2])
    expect(abs(total - sum(float(x[1]) for x in planned)) < 1e-6, "the total is the sum of the planned checks")
    expect(total <= 540, f"the plan fits in 540 s ({total:g})")
    sys.path.insert(0, HERE)
    import checks  # noqa: E402
    by_label = {c.label: c for c in checks.registry()}
    planned_labels = {x[2] for x in planned}
    covered = {by_label[l].capability for l in planned_labels if l in by_label}
    missing = [c for c in checks.CAPABILITIES if c not in covered]
    expect(not missing, f"every capability of issue #28 is planned within 540 s (missing: {missing})")
    order = [x[2] for x in planned if x[2] in by_label]
    groups = [by_label[l].group for l in order]
    rank = {g: i for i, g in enumerate(["smoke", "capability", "issues", "overhead", "frameworks", "rest"])}
    expect(groups == sorted(groups, key=rank.get), "planned in the order of value: smoke, capability, issues, "
                                                   "overhead, frameworks, rest")
    expect(order and order[0] == "smoke:kernels", "the smoke test runs first")
    p = subprocess.run([sys.executable, DRIVER, "--plan", "--budget", "60"], capture_output=True, text=True)
    skipped = [l for l in p.stdout.splitlines() if l.startswith("SKIP(budget) ")]
    expect(skipped and p.stdout.splitlines()[-1].startswith("PLAN total "),
           f"with 60 s what does not fit is SKIP(budget) ({len(skipped)} checks)")


def case_sigterm(_):
    with tempfile.TemporaryDirectory() as out:
        proc, marker = start_fake("kill", out)
        expect(wait_running(out, "fake:sleeper", proc), "results.json names the check in flight before it ends")
        t0 = time.monotonic()
        while not marker_processes(marker) and time.monotonic() - t0 < 20:
            time.sleep(0.05)
        expect(bool(marker_processes(marker)), "the check's child process runs")
        proc.send_signal(signal.SIGTERM)
        try:
            stdout, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
        expect(proc.returncode == 143, f"exit 143 after SIGTERM ({proc.returncode})")
        r = results_of(out)
        v, o = verdicts(r), outcomes(r)
        expect(v.get("fake:first") == "PASS" and v.get("fake:second") == "FAIL",
               f"the finished checks' verdicts are in results.json ({v})")
        expect(o.get("fake:sleeper", "").startswith("interrupted by SIGTERM"),
               f"the check in flight is marked interrupted ({o.get('fake:sleeper')})")
        expect(o.get("fake:after") == "not reached" and "fake:after" not in v, "the later check did not run")
        expect(r["state"] == "interrupted by SIGTERM" and r["running"] is None, f"state: {r['state']}")
        expect(not marker_processes(marker), "the interrupted check's process group was killed")
        with open(os.path.join(out, "summary.txt")) as f:
            summary = f.read()
        expect("FAIL fake:second" in summary and "interrupted" in summary, "summary.txt says what failed and stopped")
        expect(r["checks"][1].get("traces") == ["traces-1.zip"] and os.path.exists(os.path.join(out, "traces-1.zip")),
               "the failed check's trace went into traces-1.zip")
        with zipfile.ZipFile(os.path.join(out, "traces-1.zip")) as z:
            expect(z.namelist() == ["fake_second/fake-second/fake.gprof"], f"archive members: {z.namelist()}")
        expect(not [f for f in os.listdir(out) if f.endswith(".tmp")], "no temporary file left")
        expect("CHECK fake:sleeper" in stdout, "CHECK lines on stdout")


def case_sigkill(_):
    with tempfile.TemporaryDirectory() as out:
        proc, marker = start_fake("kill", out)
        expect(wait_running(out, "fake:sleeper", proc), "results.json names the check in flight")
        proc.kill()
        proc.communicate()
        r = results_of(out)  # valid JSON: written whole or not at all
        v = verdicts(r)
        expect(v.get("fake:first") == "PASS" and v.get("fake:second") == "FAIL",
               f"after SIGKILL the finished checks' verdicts are in results.json ({v})")
        expect((r.get("running") or {}).get("label") == "fake:sleeper" and r["state"] == "running",
               f"results.json names the check that was running ({r.get('running')})")
        with open(os.path.join(out, "summary.txt")) as f:
            expect("running when this was written: fake:sleeper" in f.read(), "so does summary.txt")
        # A SIGKILL leaves the check's process group behind (nothing can stop that); end it here.
        for pid in marker_processes(marker):
            os.kill(pid, signal.SIGKILL)


def case_budget(_):
    with tempfile.TemporaryDirectory() as out:
        t0 = time.monotonic()
        proc, marker = start_fake("budget", out, "--budget", "20")
        stdout, _ = proc.communicate(timeout=60)
        took = time.monotonic() - t0
        r = results_of(out)
        o, v = outcomes(r), verdicts(r)
        expect(o.get("fake:first") == "done" and v.get("fake:first") == "PASS", "a check that fits runs")
        expect(o.get("fake:too-big") == "SKIP(budget)" and v.get("fake:too-big") == "SKIP",
               f"a check that does not fit is SKIP(budget) ({o.get('fake:too-big')})")
        expect(o.get("fake:fits") == "done" and v.get("fake:fits") == "PASS", "a later check that fits still runs")
        expect(o.get("fake:overrun") == "stopped at the end of the budget"
               and v.get("fake:overrun:unfinished") == "SKIP",
               f"a check running into the end of the budget is stopped there ({o.get('fake:overrun')})")
        expect(o.get("fake:late") == "SKIP(budget)", f"nothing starts after the budget's end ({o.get('fake:late')})")
        expect(took < 20, f"the run ended within its budget ({took:.1f} s of 20)")
        expect(proc.returncode == 0, f"exit 0: nothing failed ({proc.returncode})")
        expect("SKIP fake:too-big: SKIP(budget): estimate 100 s" in stdout, "SKIP(budget) says the estimate")
        expect(not marker_processes(marker), "the stopped check's process was killed")


def case_hang(_):
    with tempfile.TemporaryDirectory() as out:
        proc, marker = start_fake("hang", out)
        proc.communicate(timeout=60)
        r = results_of(out)
        o, v = outcomes(r), verdicts(r)
        expect(o.get("fake:hangs") == "over its time limit" and v.get("fake:hangs:time-limit") == "FAIL",
               f"a check far past its estimate fails at its limit ({o.get('fake:hangs')})")
        expect(v.get("fake:after") == "PASS", "the run goes on after it")
        expect(proc.returncode == 1, f"exit 1: a verdict failed ({proc.returncode})")
        expect(not marker_processes(marker), "the hung check's process was killed")


def case_archives(_):
    with tempfile.TemporaryDirectory() as out:
        limit = 8 * 2**20
        proc, _ = start_fake("archives", out, "--archive-bytes", str(limit))
        proc.communicate(timeout=120)
        r = results_of(out)
        files = sorted(os.listdir(out))
        archives = [f for f in files if f.endswith(".zip")]
        expect(len(files) <= 8 and len(archives) == 6, f"at most 8 files, 6 archives: {files}")
        expect(all(os.path.getsize(os.path.join(out, a)) <= limit for a in archives),
               f"each archive within {limit} B: {[os.path.getsize(os.path.join(out, a)) for a in archives]}")
        held = sum(len(zipfile.ZipFile(os.path.join(out, a)).namelist()) for a in archives)
        left = r["traces"]["left_out"]
        expect(held + len(left) == 14 and left and all("no archive slot left" in x for x in left),
               f"every failed trace is in an archive or named as left out ({held} + {len(left)})")
        expect(all(c.get("traces") for c in r["checks"][:held]), "each packed check names its archive")


def case_no_gpu(args):
    if not args.build:
        raise SystemExit("--build DIR needed")
    gpu = os.path.exists("/dev/nvidia0")
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, DRIVER, "--run", args.build, "--out", out, "--budget", "120"]
        if gpu:
            cmd += ["--only", "smoke"]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        took = time.monotonic() - t0
        r = results_of(out)
        o, v = outcomes(r), verdicts(r)
        if gpu:
            expect(p.returncode == 0 and o.get("smoke:kernels") == "done", f"with a GPU the smoke test passes: {o}")
            return
        expect(p.returncode == 0, f"exit 0: SKIP is no failure ({p.returncode}: {p.stdout[-500:]})")
        expect(v.get("ka-static:kernels") == "SKIP" and o.get("smoke:kernels") == "done",
               f"the smoke check finds no CUDA device ({v.get('ka-static:kernels')})")
        rest = [c for c in r["checks"] if c["label"] != "smoke:kernels"]
        expect(rest and all(c["outcome"] == "skipped: nothing can run" for c in rest),
               f"every later check is skipped ({sorted({c['outcome'] for c in rest})})")
        expect(all(v.get(c["label"]) == "SKIP" for c in rest), "each with a SKIP verdict saying why")
        expect(took < 60, f"in seconds ({took:.1f} s)")
        expect(r["environment"].get("gprof_run", "").startswith("gprof-run"), "the ENV lines ran gprof-run --version")


def case_callsite_report_h100(args):
    if not args.build:
        raise SystemExit("--build DIR needed")
    sys.path.insert(0, HERE)
    import checks  # noqa: E402
    run = os.path.join(SOURCE, "tests", "data", "h100", "ka-kernels-backtrace")
    p = subprocess.run([os.path.join(args.build, "bin", "gprof-report"), "cuda_callsite_sum", "--format", "json", run],
                       capture_output=True, text=True, timeout=120)
    expect(p.returncode in (0, 2), f"gprof-report cuda_callsite_sum exits 0 ({p.returncode}: {p.stderr[-300:]})")
    # The H100 binary is not here, so no file:line: the sites must still start in the program, the CUPTI and driver
    # frames of this 1.3 trace (innermost libcupti/libcuda) cut by the report.
    res = checks.check_callsite_report(json.loads(p.stdout), "gprof-test-ka", None, "h100")
    for status, name, figures in res:
        expect(status == "PASS", f"{name} on the real H100 trace: {figures}")


def expand_runs(doc):
    """The fixture's runs [start, end, count, means...] back into `count` contiguous samples holding the means
    (tests/data/h200/make_pm_sampling_fixture.py)."""
    rows = []
    for r in doc["samples"]["rows"]:
        if isinstance(r, list):
            rows.append(r)
            continue
        start, end, n, *means = r["run"]
        rows.extend([start + (end - start) * k // n, start + (end - start) * (k + 1) // n] + means for k in range(n))
    return dict(doc, samples=dict(doc["samples"], rows=rows))


def case_pm_probe_h200(_):
    sys.path.insert(0, HERE)
    import checks  # noqa: E402
    with open(os.path.join(SOURCE, "tests", "data", "h200", "pm-sampling-probe.json")) as f:
        fixture = json.load(f)
    for key in ("bare", "beside_gprof_run"):
        doc = expand_runs(fixture[key])
        rows = doc["samples"]["rows"]
        expect(len(rows) == doc["sample_count"] and all(a[1] == b[0] for a, b in zip(rows, rows[1:])),
               f"{key}: the fixture expands to the {doc['sample_count']} samples the probe decoded, without a gap "
               f"({len(rows)})")
        for status, name, figures in checks.check_pm_probe(doc, key):
            expect(status == "PASS", f"{name} on the H200's samples: {figures}")

        def moved(by):
            return dict(doc, samples=dict(doc["samples"], rows=[[r[0] + by, r[1] + by] + r[2:] for r in rows]))
        late = {n: s for s, n, _ in checks.check_pm_probe(moved(5_000_000), key)}
        expect(late[f"{key}:clock"] == "FAIL", f"{key}: samples 5 ms late fail :clock")
        aligned = {n: s for s, n, _ in checks.check_pm_probe(moved(doc["phases"][0]["cupti_start"] - rows[0][0]), key)}
        expect(aligned[f"{key}:clock"] == "FAIL" and aligned[f"{key}:phases"] == "FAIL",
               f"{key}: samples aligned by the first one (the first check's mistake) fail :clock and :phases")
        cols = doc["samples"]["columns"]
        t = next(i for i, c in enumerate(cols) if c.startswith("sm__pipe_tensor"))
        d = next(i for i, c in enumerate(cols) if c.startswith("dram__throughput"))
        swapped = [r[:t] + [r[d]] + r[t + 1:d] + [r[t]] + r[d + 1:] if t < d else None for r in rows]
        bad = {n: s for s, n, _ in checks.check_pm_probe(dict(doc, samples=dict(doc["samples"], rows=swapped)), key)}
        expect(t < d and bad[f"{key}:phases"] == "FAIL", f"{key}: tensor and DRAM columns swapped fail :phases")
def case_callsite_report_h200(args):
    if not args.build:
        raise SystemExit("--build DIR needed")
    sys.path.insert(0, HERE)
    import checks  # noqa: E402
    data = os.path.join(SOURCE, "tests", "data", "h200")

    def report(run, debug=None):
        cmd = [os.path.join(args.build, "bin", "gprof-report"), "-r", "cuda_callsite_sum"]
        if debug:  # before another option: it takes every value up to the next one
            cmd += ["--debug-file-directory", debug]
        p = subprocess.run(cmd + ["--format", "json", run], capture_output=True, text=True, timeout=120)
        expect(p.returncode in (0, 2), f"gprof-report cuda_callsite_sum {run} exits 0 ({p.returncode}: "
                                       f"{p.stderr[-300:]})")
        return json.loads(p.stdout)
    for variant, program in (("static", "gprof-test-ka"), ("shared", "gprof-test-ka-shared")):
        run = os.path.join(data, f"call-sites-{variant}")
        res = checks.check_callsite_report(report(run, os.path.join(run, "debug")), program, "known_answer.cu",
                                           f"h200:{variant}")
        for status, name, figures in res:
            expect(status == "PASS", f"{name} on the real H200 trace: {figures}")
    # The PyTorch trace is not judged here: its collector kept cuBLAS's frames, and some autograd-thread stacks hold
    # nothing past them (report_callsite_tests [h200] pins what the report makes of it).


def case_probes(args):
    if not args.build:
        raise SystemExit("--build DIR needed")
    apps = os.path.join(args.build, "tests", "apps")
    probe = os.path.join(apps, "gprof-test-pm-sampling-probe")
    p = subprocess.run([probe, "--host-only", "GH100"], capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, f"--host-only GH100 exits 0 ({p.returncode}: {p.stderr.strip()[-300:]})")
    doc = json.loads(p.stdout)
    used = doc.get("metrics_used", [])
    for prefix in ("sm__cycles_active.avg.pct", "sm__pipe_tensor_cycles_active", "dram__throughput.avg.pct"):
        expect(any(m.startswith(prefix) for m in used), f"GH100: a {prefix}... metric is configured ({used})")
    expect(doc.get("passes") == 1 and doc.get("config_image_bytes", 0) > 0, f"in one pass ({doc.get('passes')})")
    expect(all(m["accepted"] and m.get("dim_unit") for m in doc["metrics"]),
           "every default metric is a GH100 metric with a unit")
    expect(doc["calls"] and all(c["result"] == 0 for c in doc["calls"]), "every host call succeeded")
    if os.path.exists("/dev/nvidia0"):
        return
    for exe in (probe, os.path.join(apps, "gprof-test-cupti-client")):
        p = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        expect(p.returncode == 77 and "no CUDA device" in p.stderr,
               f"{os.path.basename(exe)} without a GPU: exit 77, 'no CUDA device' ({p.returncode}: {p.stderr[-200:]})")


CASES = {"probes": case_probes, "plan": case_plan, "sigterm": case_sigterm, "sigkill": case_sigkill,
         "budget": case_budget, "hang": case_hang, "archives": case_archives, "no-gpu": case_no_gpu,
         "callsite-report-h100": case_callsite_report_h100, "pm-probe-h200": case_pm_probe_h200,
         "callsite-report-h200": case_callsite_report_h200}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), required=True)
    ap.add_argument("--build", help="the build tree (no-gpu, callsite-report-h100)")
    args = ap.parse_args()
    CASES[args.case](args)
    print(f"{args.case}: {'FAILED ' + str(len(failures)) if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
