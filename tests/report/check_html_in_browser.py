#!/usr/bin/env python3
"""report.html and the HTML diff rendered in a real browser (headless Chromium), as a user opens them.

For each page: Chromium loads it from a file:// URL with logging on; any console message (a script error, a
request the page's Content-Security-Policy refused) fails the check, since the page logs nothing when all is well.
Then the rendered DOM (--dump-dom, after the page's script ran) must show that the script ran (data-ready="1",
tooltips attached), hold the charts, and hold the run's own names. Last, a harness page (a test double, beside this
file) loads one report in an iframe, clicks a table header and checks that the rows are sorted.

    check_html_in_browser.py --report gprof-report --gprof-run gprof-run --nvtx-example gprof-example-nvtx \
        --torch-train examples/torch-train --memcpy-run tests/data/h100/ka-static-memcpy \
        --memcpy-other tests/data/h100/ka-shared-memcpy --cpu-app test_cpu_split_app \
        --gpu-metrics-run gprof-test-gpu-metrics-run [--screenshot out.png]

Exit 0 when every page passed, 1 with the reasons otherwise; no Chromium installed is a failure too (scripts/setup installs it).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

BROWSERS = ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"]


def find_browser():
    for b in BROWSERS:
        path = shutil.which(b)
        if path:
            return path
    return None


def chromium(browser, url, extra, timeout=60):
    """Runs the browser once; returns (stdout, console lines, stderr)."""
    profile = tempfile.mkdtemp(prefix="gprof-chromium-")
    try:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
               "--virtual-time-budget=5000"] + extra + [url]
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
        # Chromium prints the page's console as "...:INFO:CONSOLE(12)] "message", source: file://... (12)" (the
        # form differs between versions: CONSOLE:12 or CONSOLE(12)).
        console = [l for l in r.stderr.splitlines() if re.search(r":CONSOLE[:(]", l)]
        return r.stdout, console, r.stderr
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def check_page(browser, path, must_contain, failures, label):
    dom, console, stderr = chromium(browser, "file://" + os.path.abspath(path), ["--dump-dom"])
    problems = []
    if console:
        problems.append("console messages:\n    " + "\n    ".join(console))
    if not dom.strip():
        problems.append("no DOM dumped; browser stderr tail:\n" + stderr[-2000:])
    if 'data-ready="1"' not in dom:
        problems.append("the page's script did not finish (no data-ready=\"1\" on <html>)")
    if "data-tip=" not in dom:
        problems.append("no tooltip attached (data-tip) by the script")
    for text in must_contain:
        if text not in dom:
            problems.append("not in the rendered page: " + repr(text))
    size = os.path.getsize(path)
    print(f"{label}: {path} ({size / 1e3:.1f} kB): {'ok' if not problems else 'FAILED'}")
    for p in problems:
        failures.append(f"{label}: {p}")


def check_sorting(browser, report_path, failures):
    """The harness iframes the report, clicks the kernels table's Count header twice and reads the order back."""
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="gprof-html-sort-")
    try:
        shutil.copy(report_path, os.path.join(tmp, "report.html"))
        shutil.copy(os.path.join(here, "html_sort_harness.html"), os.path.join(tmp, "harness.html"))
        dom, console, stderr = chromium(browser, "file://" + os.path.join(tmp, "harness.html"),
                                        ["--allow-file-access-from-files", "--dump-dom"])
        m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
        result = m.group(1).strip() if m else "(no result: " + stderr[-500:] + ")"
        print(f"sorting: {result}")
        if console:
            failures.append("sorting: console messages:\n    " + "\n    ".join(console))
        if not result.startswith("PASS"):
            failures.append("sorting: " + result)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(cmd, ok=(0,)):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--gprof-run", required=True)
    ap.add_argument("--nvtx-example", required=True)
    ap.add_argument("--torch-train", required=True)
    ap.add_argument("--memcpy-run", required=True)
    ap.add_argument("--memcpy-other", required=True)
    ap.add_argument("--cpu-app", required=True, help="a CPU-bound program (work_a/work_b 70/30): its CPU flame graph")
    ap.add_argument("--gpu-metrics-run", required=True,
                    help="a test double that writes a generated run with GPU metrics into a directory")
    ap.add_argument("--screenshot", help="also save a screenshot of the torch-train report here")
    args = ap.parse_args()
    browser = find_browser()
    if not browser:
        print("no Chromium found (" + ", ".join(BROWSERS) + "): scripts/setup installs chromium-headless-shell")
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="gprof-html-") as tmp:
        # A real GPU run: 300 PyTorch steps on an H100.
        torch = os.path.join(tmp, "torch-train.html")
        run([args.report, "html", args.torch_train, "-o", torch])
        check_page(browser, torch, ['class="chart time-chart"', "NVIDIA H100 80GB HBM3", "sm80_xmma_gemm",
                                    "multi_tensor_apply_kernel", "CPU/launch-bound", "cudaLaunchKernel",
                                    "[CUDA memcpy HtoD]", "python3"], failures, "torch-train")
        # The known-answer app's copies on an H100: memcpy rows with bandwidth, device memory over time.
        memcpy = os.path.join(tmp, "memcpy.html")
        run([args.report, "html", args.memcpy_run, "-o", memcpy])
        check_page(browser, memcpy, ['class="chart time-chart"', "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]",
                                     "GB/s", "gprof-test-ka"], failures, "ka-static-memcpy")
        # An NVTX-only run, recorded here by gprof-run itself (no GPU needed): its own report.html.
        nvtx_run = os.path.join(tmp, "nvtx-run")
        run([args.gprof_run, "--summary", "none", "--no-timeline", "-o", nvtx_run, args.nvtx_example])
        nvtx = os.path.join(nvtx_run, "report.html")
        if not os.path.exists(nvtx):
            failures.append("gprof-run wrote no report.html into " + nvtx_run)
        else:
            check_page(browser, nvtx, ['class="chart bar-chart"', ":train", ":step", ":load",
                                       "No kernel was recorded", "gprof-example-nvtx"], failures, "nvtx-only")
        # CPU samples (issue 35): a CPU-bound program recorded here by gprof-run, its flame graph (an icicle per
        # process) and the functions by CPU time in its report.html.
        cpu_run = os.path.join(tmp, "cpu-run")
        run([args.gprof_run, "--summary", "none", "--no-timeline", "-o", cpu_run, args.cpu_app, "1"])
        cpu = os.path.join(cpu_run, "report.html")
        if not os.path.exists(cpu):
            failures.append("gprof-run wrote no report.html into " + cpu_run)
        else:
            check_page(browser, cpu, ['id="cpu"', 'class="chart flame"', "CPU flame graph of", "work_a", "work_b",
                                      "Functions by CPU time", "fl-native"], failures, "cpu-samples")
        # A job of two ranks, recorded here by gprof-run (each rank from RANK, as torchrun sets it): the Ranks
        # section, its chart of work per rank and its step x rank heat map.
        job = os.path.join(tmp, "job")
        for rank in (0, 1):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2")
            r = subprocess.run([args.gprof_run, "--summary", "none", "--no-timeline", "-o",
                                os.path.join(job, f"run.{rank}"), args.nvtx_example],
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"gprof-run of rank {rank} exited {r.returncode}: {r.stderr[-500:]}")
        ranks_page = os.path.join(tmp, "ranks.html")
        run([args.report, "html", job, "-o", ranks_page])
        check_page(browser, ranks_page, ['id="ranks"', 'class="chart heat"', 'class="chart bar-chart"', "rank 0 @",
                                         "rank 1 @", "Work per step of each rank", "straggler"], failures, "ranks")
        # GPU metrics (issue 37): a generated run (no GPU here), its chart of the shares and the figures per metric.
        metrics_run = os.path.join(tmp, "gpu-metrics-run")
        run([args.gpu_metrics_run, metrics_run])
        metrics = os.path.join(tmp, "gpu-metrics.html")
        run([args.report, "html", metrics_run, "-o", metrics])
        check_page(browser, metrics, ['id="gpumetrics"', "GPU metrics over time", 'class="series m0 line"',
                                      "Tensor pipe active", "While kernels ran", "45.0 %"], failures, "gpu-metrics")
        # The CI view: one H100 run against another.
        diff = os.path.join(tmp, "diff.html")
        run([args.report, "diff", args.memcpy_run, args.memcpy_other, "--format", "html", "-o", diff], ok=(0, 1))
        check_page(browser, diff, ["Base vs new", "memcpy:HtoD", 'class="diffbars"'], failures, "diff")
        check_sorting(browser, torch, failures)
        if args.screenshot:
            chromium(browser, "file://" + torch, ["--screenshot=" + args.screenshot, "--window-size=1280,1760",
                                                  "--hide-scrollbars"])
            print("screenshot: " + args.screenshot)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
