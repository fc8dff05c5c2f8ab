"""`python -m gprof_run` and the console scripts behave as the executables do.

Usage: python check_commands.py --gprof-run PATH --nvtx-example PATH [--command CMD...]
Compares the package's entry points (python -m gprof_run, and each --command given, e.g. a venv's bin/gprof-run)
with the gprof-run executable itself: same --version, same exit status, and the profiled program starts with the
signal dispositions it would have had without Python in between (Python ignores SIGPIPE and SIGXFSZ for itself).
"""

import argparse
import os
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def sig_ignored(launcher, tmp, tag):
    """The SigIgn mask of a program started by `launcher` (a list: the command that stands for gprof-run)."""
    out = subprocess.run([*launcher, "--force", "--no-timeline", "-o", os.path.join(tmp, tag), "sh", "-c",
                          "grep '^SigIgn' /proc/self/status"], capture_output=True, text=True, check=False,
                         stdin=subprocess.DEVNULL)
    return out.returncode, out.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-run", required=True)
    ap.add_argument("--nvtx-example", required=True)
    ap.add_argument("--command", action="append", default=[])
    args = ap.parse_args()
    direct = [args.gprof_run]
    launchers = {"python -m gprof_run": [sys.executable, "-m", "gprof_run"]}
    for c in args.command:
        launchers[c] = [c]

    version = subprocess.run(direct + ["--version"], capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        want = sig_ignored(direct, tmp, "direct")
        check(want[0] == 0 and want[1].startswith("SigIgn"), f"direct gprof-run: {want}")
        for name, launcher in launchers.items():
            got = subprocess.run(launcher + ["--version"], capture_output=True, text=True, check=False)
            check(got.returncode == 0 and got.stdout == version, f"{name} --version: {got.stdout!r} != {version!r}")
            check(sig_ignored(launcher, tmp, "via") == want,
                  f"{name}: the program's ignored signals {sig_ignored(launcher, tmp, 'via')} != direct {want}")
            rc = subprocess.run(launcher + ["--force", "--no-timeline", "-o", os.path.join(tmp, "rc"), "sh", "-c",
                                            "exit 7"], capture_output=True, check=False).returncode
            check(rc == 7, f"{name}: exit status {rc}, the program's was 7")
            run_dir = os.path.join(tmp, "nvtx-" + name.replace("/", "_").replace(" ", "_"))
            out = subprocess.run(launcher + ["-o", run_dir, args.nvtx_example], capture_output=True, text=True,
                                 check=False)
            traces = [f for f in os.listdir(run_dir) if f.endswith(".gprof")] if os.path.isdir(run_dir) else []
            check(out.returncode == 0 and len(traces) == 1 and "20 steps done" in out.stdout,
                  f"{name}: profiling the NVTX example: rc {out.returncode}, traces {traces}, {out.stderr[-400:]}")
    print(f"check_commands: {len(launchers)} entry points against {args.gprof_run}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
