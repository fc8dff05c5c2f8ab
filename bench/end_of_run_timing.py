#!/usr/bin/env python3
"""gprof-run's end of run on an NVTX-heavy program, timed from the program's exit to gprof-run's exit.

    bench/end_of_run_timing.py [--build build] [--runs N] [--threads T] [--iterations I] [-- GPROF_RUN_OPTIONS...]

Runs build/bench/apps/nvtx_heavy_app (T threads x I nested push/push/pop/pop; 6 x 800 000 = 9.6 M ranges, the
issue #33 workload) under build/bin/gprof-run with its default outputs (summary, summary.txt, report.html, the
timeline) unless other options are given after --. The program prints its exit time (CLOCK_MONOTONIC) as its last
line; this script reads the same clock when gprof-run has exited. Per run: the program's own wall time, the end of
run, gprof-run's peak RSS (wait4's, which includes the program's: the larger of the two), the run directory's
files and sizes. Figures go to docs/performance.md with the machine, the date and the load.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=800000)
    ap.add_argument("--keep", help="keep the last run directory here")
    ap.add_argument("--app", help="the program (default: BUILD/bench/apps/nvtx_heavy_app; another build's gprof-run "
                                  "can time this build's program)")
    ap.add_argument("gprof_run_options", nargs="*")
    a = ap.parse_args()
    gprof_run = os.path.join(a.build, "bin", "gprof-run")
    app = a.app or os.path.join(a.build, "bench", "apps", "nvtx_heavy_app")
    ends, apps, rss, cpus = [], [], [], []
    for i in range(a.runs):
        tmp = tempfile.mkdtemp(prefix="gprof-eor-")
        run_dir = os.path.join(tmp, "run")
        log = os.path.join(tmp, "stderr.txt")
        start = time.monotonic_ns()
        with open(log, "wb") as err:
            p = subprocess.Popen([gprof_run, "-o", run_dir, *a.gprof_run_options, app, str(a.threads),
                                  str(a.iterations)], stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(p.pid, 0)
        done = time.monotonic_ns()
        text = open(log, encoding="utf-8", errors="replace").read()
        m = re.search(r"nvtx_heavy_app: exit at (\d+)", text)
        if status != 0 or not m:
            sys.stderr.write(text)
            sys.exit(f"run {i}: gprof-run exited with status {status}, or the program's exit line is missing")
        exit_ns = int(m.group(1))
        ends.append((done - exit_ns) / 1e9)
        apps.append((exit_ns - start) / 1e9)
        rss.append(usage.ru_maxrss / 1024)
        cpus.append(usage.ru_utime + usage.ru_stime)  # gprof-run and the program together
        files = ", ".join(f"{f} {os.path.getsize(os.path.join(run_dir, f)) / 1e6:.1f} MB"
                          for f in sorted(os.listdir(run_dir)))
        print(f"run {i}: program {apps[-1]:.2f} s (from the start of gprof-run), end of run {ends[-1]:.2f} s, "
              f"CPU {cpus[-1]:.2f} s (with the program's), peak RSS {rss[-1]:.0f} MB; {files}", flush=True)
        if a.keep and i == a.runs - 1:
            shutil.rmtree(a.keep, ignore_errors=True)
            shutil.move(run_dir, a.keep)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"end of run: median {statistics.median(ends):.2f} s (min {min(ends):.2f}, max {max(ends):.2f}); "
          f"program median {statistics.median(apps):.2f} s; CPU median {statistics.median(cpus):.2f} s; "
          f"peak RSS max {max(rss):.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
