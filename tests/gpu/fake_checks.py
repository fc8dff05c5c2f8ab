"""A test double of checks.py's registry, for the CPU-only tests of gpu-check's runner (test_gpu_check.py).

Its checks take known times and give known verdicts through the same runner, verdicts and process handling as the
real ones (gpu_check.timed, budget.Runner), so --run's budget, the results written after every check, SIGTERM, a
kill and the trace archives can be tested on a machine without a GPU. The scenario comes from GPU_CHECK_FAKE_SCENARIO.
Never packed.
"""
import os

import budget
import gpu_check as g
from budget import Check

MARKER = os.environ.get("GPU_CHECK_FAKE_MARKER", "gpu-check-fake")


def quick(name):
    def run(ctx):
        ctx.v.add("PASS", f"fake:{name}", "done at once")
    return run


def failing(name, payload_bytes=1000):
    """Fails after writing a 'trace' of payload_bytes (incompressible) into a run directory of its own."""
    def run(ctx):
        d = ctx.run_dir(f"fake-{name}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "fake.gprof"), "wb") as f:
            f.write(os.urandom(payload_bytes))
        ctx.v.add("FAIL", f"fake:{name}", f"planted failure with a {payload_bytes} B trace")
    return run


def sleeper(name, seconds):
    """A child process (a shell that sleeps; the marker names it) that the runner must kill with its check."""
    def run(ctx):
        rc, _, _, _ = g.timed(["sh", "-c", f"sleep {seconds}; : {MARKER}"], timeout=600)
        ctx.v.add("PASS" if rc == 0 else "FAIL", f"fake:{name}", f"slept {seconds} s, exit {rc}")
    return run


def registry(options=None):
    scenario = os.environ.get("GPU_CHECK_FAKE_SCENARIO", "kill")
    if scenario == "kill":  # SIGTERM or SIGKILL while the third check sleeps
        return [Check("fake", "first", 1, "guess: test", quick("first")),
                Check("fake", "second", 1, "guess: test", failing("second")),
                Check("fake", "sleeper", 40, "guess: test", sleeper("sleeper", 30)),
                Check("fake", "after", 1, "guess: test", quick("after"))]
    if scenario == "budget":  # run with --budget 20: the write margin leaves 12 s
        return [Check("fake", "first", 1, "guess: test", quick("first")),
                Check("fake", "too-big", 100, "guess: test", quick("too-big")),
                Check("fake", "fits", 2, "guess: test", sleeper("fits", 1)),
                Check("fake", "overrun", 2, "guess: test", sleeper("overrun", 60)),
                Check("fake", "late", 1, "guess: test", quick("late"))]
    if scenario == "hang":  # a check far past its estimate is stopped as a failure, the run goes on
        budget.OVERRUN_SLACK_S = 2
        return [Check("fake", "hangs", 0.5, "guess: test", sleeper("hangs", 60)),
                Check("fake", "after", 1, "guess: test", quick("after"))]
    if scenario == "archives":  # more failed traces than 6 archives hold (run with --archive-bytes)
        return [Check("fake", f"fails-{i}", 1, "guess: test", failing(f"fails-{i}", 3 * 2**20)) for i in range(14)]
    raise SystemExit(f"fake_checks: unknown scenario {scenario}")
