#!/usr/bin/env python3
"""Every job-level report of gprof-report on a generated job, for peak RSS and CPU (issue 31).

    bench/ranks_job_reports.py [--build build] [--ranks 1024] [--records 100000] [--dir /tmp/gprof-ranks-job]
                               [--only REGEX] [--timeline-ranks N]

Makes the job once with build/bench/apps/report_ranks_job (N run directories of one rank, R records each, the traces
alone and the same traces beside their rank-figures.json), then runs each report of the job directory, one at a time
under nice, as a user would, output to a file under the job's directory: ranks, summary, analyze (each as table and
--format json), html; timeline (which holds every record it draws) on the first --timeline-ranks run directories only.
Per report: peak RSS and CPU (user + sys) from wait4, wall time, the output's size, and the 1-minute load average
before it. A Markdown table on stdout; figures go to docs/performance.md with the machine and the date.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def measure(cmd, out_path):
    load = os.getloadavg()[0]
    start = time.monotonic()
    with open(os.devnull, "wb") as null, open(out_path + ".stderr", "wb") as err:
        p = subprocess.Popen(["nice", "-n", "10", *cmd], stdout=null, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        sys.stderr.write(open(out_path + ".stderr", encoding="utf-8", errors="replace").read())
        sys.exit(f"{' '.join(cmd)}: exit status {status}")
    return {"rss_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall,
            "load": load, "out_bytes": os.path.getsize(out_path) if os.path.exists(out_path) else 0}


def size(n):
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--dir", default="/tmp/gprof-ranks-job")
    ap.add_argument("--only", default="", help="run only the reports whose label matches this regex")
    ap.add_argument("--timeline-ranks", type=int, default=32,
                    help="run directories the timeline is made of (it holds every record it draws)")
    a = ap.parse_args()
    report = os.path.join(a.build, "bin", "gprof-report")
    gen = os.path.join(a.build, "bench", "apps", "report_ranks_job")
    job = subprocess.run(["nice", "-n", "10", gen, str(a.ranks), str(a.records), a.dir], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    out_dir = tempfile.mkdtemp(prefix="outputs-", dir=job)
    traces, figures = os.path.join(job, "traces"), os.path.join(job, "figures")
    some = [os.path.join(traces, name) for name in sorted(os.listdir(traces))[: a.timeline_ranks]]

    runs = []
    for source, where in (("traces", traces), ("figures", figures)):
        for label, args, ext in (
            ("ranks", ["ranks"], "txt"),
            ("ranks --format json", ["ranks", "--format", "json"], "json"),
            ("summary", ["summary"], "txt"),
            ("summary --format json", ["summary", "--format", "json"], "json"),
            ("analyze", ["analyze"], "txt"),
            ("analyze --format json", ["analyze", "--format", "json"], "json"),
            ("html", ["html"], "html"),
        ):
            runs.append((source, label, args, ext, [where]))
    runs.append((f"traces, {a.timeline_ranks} run dirs", "timeline", ["timeline"], "json", some))
    print(f"| input | report | peak RSS | CPU (user+sys) | wall | output | load (1 min) |")
    print(f"|---|---|---|---|---|---|---|")
    for source, label, args, ext, where in runs:
        if a.only and not re.search(a.only, f"{source} {label}"):
            continue
        out = os.path.join(out_dir, f"{source.split(',')[0]}-{label.replace(' ', '_').replace('-', '')}.{ext}")
        m = measure([report, *args, "-o", out, "--force", *where], out)
        print(f"| {source} | `{label}` | {m['rss_mb']:.0f} MB | {m['cpu_s']:.1f} s | {m['wall_s']:.1f} s | "
              f"{size(m['out_bytes'])} | {m['load']:.1f} |", flush=True)
    shutil.rmtree(out_dir)


if __name__ == "__main__":
    main()
