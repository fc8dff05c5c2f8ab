"""gpu-check's runner: checks in order of value within a time budget, every result on disk as soon as it exists.

A lease of the GPU machine is short: 15 minutes in all, its start (1-2 minutes) and every idle wait included, one
command at most 10 minutes, and at most 8 files of 16 MiB come back from its output folder. So the checks run in the
order of what they are worth, each with an estimate of its seconds; one that no longer fits in the time left is
skipped (SKIP(budget)) and the next smaller one is tried. results.json and summary.txt are rewritten after every
check (a temporary file renamed over the old one), so a command killed at its limit still returns every verdict it
reached; the check that was running is named in results.json ("running"). SIGTERM or SIGINT ends the check in flight
(its processes are killed), marks it interrupted, writes the results and exits 143 (130). The traces of a check that
failed are packed into zip archives beside the results, at most 6 of 16 MiB (with results.json and summary.txt the
8 files the device tool returns).

Only the Python standard library: the GPU machine has no package registry.
"""
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
import zipfile
import zlib
from typing import Callable

MAX_OUT_FILES = 8                  # the device tool returns at most 8 files ...
MAX_FILE_BYTES = 16 * 2**20        # ... of at most 16 MiB each
RESULTS_FILE = "results.json"
SUMMARY_FILE = "summary.txt"
ARCHIVE_SLOTS = MAX_OUT_FILES - 2  # results.json and summary.txt count among the 8
WRITE_MARGIN_S = 8                 # left at the end of the budget for the last results and trace archive
START_ESTIMATE_S = 4               # environment lines (nvidia-smi, nsys --version, ...) and the pack check
# A check is stopped when it runs this far past its estimate (a hang must not eat the lease): max(3 x, + 60 s).
OVERRUN_FACTOR, OVERRUN_SLACK_S = 3, 60


@dataclasses.dataclass(frozen=True)
class Check:
    """One registry entry. `basis` says where `estimate_s` comes from: a measured figure ("H200 2026-11-27: ...")
    or a guess, which must start with "guess" so the plan and the results tell them apart."""
    group: str
    name: str
    estimate_s: float
    basis: str
    run: Callable
    capability: str = ""   # the capability of issue #28's list this check validates, if any

    @property
    def label(self):
        return f"{self.group}:{self.name}"

    @property
    def guessed(self):
        return self.basis.startswith("guess")


# ----- the plan -----------------------------------------------------------------------------------------------------

def plan(checks, budget_s, start_s=START_ESTIMATE_S, margin_s=WRITE_MARGIN_S):
    """[(check, fits)] in run order and the seconds planned (start included), deciding as run() does with every
    estimate exact: a check fits while the seconds planned, its estimate and the write margin stay within budget."""
    used = start_s
    out = []
    for c in checks:
        fits = used + c.estimate_s + margin_s <= budget_s
        if fits:
            used += c.estimate_s
        out.append((c, fits))
    return out, used


def plan_lines(checks, budget_s):
    """`PLAN <seconds> <group>:<check>` per planned check in run order (the run's start first), `SKIP(budget)
    <seconds> <group>:<check>` for the others, and last `PLAN total <seconds> of <budget>`."""
    planned, used = plan(checks, budget_s)
    lines = [f"PLAN {START_ESTIMATE_S:g} start:environment"]
    lines += [f"PLAN {c.estimate_s:g} {c.label}" for c, fits in planned if fits]
    lines += [f"SKIP(budget) {c.estimate_s:g} {c.label}" for c, fits in planned if not fits]
    lines.append(f"PLAN total {used:g} of {budget_s:g}")
    return lines


# ----- processes under the budget -------------------------------------------------------------------------------------

class CheckTimeLimit(BaseException):
    """The running check reached its time limit; its processes were killed. A BaseException, so that a check's own
    `except Exception` cannot swallow it."""


class Terminated(BaseException):
    """SIGTERM or SIGINT arrived."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_limit = None  # time.monotonic() by which the running check must be done; None outside checks


def set_limit(deadline):
    global _limit
    _limit = deadline


def _kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(cmd, env=None, timeout=300, cwd=None):
    """(exit status, wall ns, stdout, stderr) of cmd; exit 124 after `timeout` s, 127 when it cannot start.
    Each command is a process group of its own, killed whole on a timeout (gprof-run's program, Python's workers).
    Past the running check's limit: kills the group and raises CheckTimeLimit."""
    left = None if _limit is None else _limit - time.monotonic()
    if left is not None and left <= 0:
        raise CheckTimeLimit()
    wait = timeout if left is None else min(timeout, left)
    t0 = time.perf_counter_ns()
    try:
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", start_new_session=True)
    except OSError as e:
        return 127, time.perf_counter_ns() - t0, "", str(e)
    try:
        out, err = p.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        out, err = _drain(p)
        if left is not None and left <= timeout:
            raise CheckTimeLimit()
        return 124, time.perf_counter_ns() - t0, out, (err or "") + f"\ntimeout after {wait:.0f} s"
    except BaseException:
        _kill_group(p)
        _drain(p)
        raise
    return p.returncode, time.perf_counter_ns() - t0, out, err


def _drain(p):
    try:
        return p.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a process that left the group still holds the pipes
        for f in (p.stdout, p.stderr):
            f.close()
        p.wait()
        return "", ""


# ----- what goes back: results, summary, trace archives -------------------------------------------------------------

def write_atomically(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Outbox:
    """The output folder: results.json, summary.txt and at most `slots` zip archives of `max_bytes` each."""

    def __init__(self, out_dir, slots=ARCHIVE_SLOTS, max_bytes=MAX_FILE_BYTES):
        self.out_dir = out_dir
        self.slots = slots
        self.max_bytes = max_bytes
        self.archives = []   # [{"file", "bytes", "checks"}]
        self.left_out = []   # "path: why"
        os.makedirs(out_dir, exist_ok=True)

    def write(self, results, summary):
        text = json.dumps(results, indent=1, default=str)
        if len(text) > self.max_bytes:
            text = json.dumps(trimmed(results, self.max_bytes), indent=1, default=str)
        # The summary first: a kill between the two leaves results.json behind it, never ahead of it.
        write_atomically(os.path.join(self.out_dir, SUMMARY_FILE), summary)
        write_atomically(os.path.join(self.out_dir, RESULTS_FILE), text)

    def pack(self, label, paths):
        """Every regular file under `paths` into the archives, under `label/`; returns the archive names used.
        A file that fits in no archive (too large, or no slot left) is listed in left_out with its size."""
        files = []
        for top in paths:
            if os.path.isfile(top):
                files.append((top, os.path.basename(top)))
                continue
            for d, _, names in os.walk(top):
                for n in sorted(names):
                    path = os.path.join(d, n)
                    if os.path.isfile(path) and not os.path.islink(path):
                        files.append((path, os.path.join(os.path.basename(top), os.path.relpath(path, top))))
        used = []
        pending = {}  # archive index -> [(path, arcname)]
        for path, rel in files:
            arcname = f"{safe_name(label)}/{rel}"
            size = compressed_size(path) + 512 + 2 * len(arcname)
            if size > self.max_bytes:
                self.left_out.append(f"{arcname}: {os.path.getsize(path)} B, larger than one archive")
                continue
            index = next((i for i, a in enumerate(self.archives) if a["bytes"] + size <= self.max_bytes), None)
            if index is None:
                if len(self.archives) >= self.slots:
                    self.left_out.append(f"{arcname}: {os.path.getsize(path)} B, no archive slot left")
                    continue
                self.archives.append({"file": f"traces-{len(self.archives) + 1}.zip", "bytes": 0, "checks": []})
                index = len(self.archives) - 1
            self.archives[index]["bytes"] += size
            pending.setdefault(index, []).append((path, arcname))
        for index, members in pending.items():
            a = self.archives[index]
            target = os.path.join(self.out_dir, a["file"])
            tmp = target + ".tmp"
            if os.path.exists(target):
                shutil.copyfile(target, tmp)
            with zipfile.ZipFile(tmp, "a", compression=zipfile.ZIP_DEFLATED) as z:
                for path, arcname in members:
                    z.write(path, arcname)
            os.replace(tmp, target)
            a["bytes"] = os.path.getsize(target)
            if label not in a["checks"]:
                a["checks"].append(label)
            used.append(a["file"])
        return sorted(set(used))


def safe_name(label):
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in label)


def compressed_size(path):
    z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    n = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            n += len(z.compress(block))
    return n + len(z.flush())


def trimmed(results, max_bytes):
    """results without its largest "data" entries until it fits: what was dropped is named."""
    r = dict(results)
    data = dict(r.get("data", {}))
    dropped = []
    while data and len(json.dumps(dict(r, data=data), default=str)) > max_bytes * 0.95:
        biggest = max(data, key=lambda k: len(json.dumps(data[k], default=str)))
        dropped.append(biggest)
        del data[biggest]
    r["data"] = data
    r["data_dropped_to_fit"] = dropped
    return r


# ----- the run ------------------------------------------------------------------------------------------------------

class Context:
    """What a check gets: the pack, a work folder, the options, the verdicts, the results document (extra figures
    go under results["data"][label]), and run_dir() for folders whose traces go back if the check fails."""

    def __init__(self, pack, work, options, verdicts, results, outbox=None):
        self.pack = pack
        self.work = work
        self.options = options
        self.v = verdicts
        self.results = results
        self.outbox = outbox    # for a check whose files go back whatever its verdict (the example trace)
        self.skip_rest = None   # why nothing more can run (no CUDA device, an incomplete pack): later checks skip
        self.check = None
        self.run_dirs = []

    def run_dir(self, name):
        path = os.path.join(self.work, safe_name(name))
        self.run_dirs.append(path)
        return path

    def data(self):
        return self.results.setdefault("data", {}).setdefault(self.check.label, {})


class Runner:
    """Runs checks in order within budget_s seconds counted from `started` (time.monotonic())."""

    def __init__(self, outbox, verdicts, results, budget_s, started, margin_s=WRITE_MARGIN_S, stream=sys.stdout):
        self.outbox = outbox
        self.v = verdicts
        self.results = results
        self.budget_s = budget_s
        self.started = started
        self.margin_s = margin_s
        self.stream = stream

    def elapsed(self):
        return time.monotonic() - self.started

    def say(self, line):
        say(self, line)

    def write(self):
        self.results["elapsed_s"] = round(self.elapsed(), 1)
        self.results["verdicts"] = self.v.items
        self.results["traces"] = {"archives": self.outbox.archives, "left_out": self.outbox.left_out}
        self.outbox.write(self.results, summary_text(self.results))

    def run(self, checks, ctx):
        """Exit status: 0 nothing failed, 1 a verdict failed, 143/130 interrupted by SIGTERM/SIGINT."""
        def on_signal(signum, _frame):
            raise Terminated(signum)
        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        r = self.results
        r["budget_s"] = self.budget_s
        r["state"] = "running"
        r["checks"] = [{"label": c.label, "estimate_s": c.estimate_s, "basis": c.basis, "outcome": "not reached"}
                       for c in checks]
        r["running"] = None
        try:
            self.write()
            for check, entry in zip(checks, r["checks"]):
                self.run_one(check, entry, ctx)
            r["state"] = "finished"
            code = 1 if self.v.failed() else 0
        except Terminated as t:
            r["state"] = f"interrupted by {t}"
            code = 128 + t.signum
        finally:
            for s in (signal.SIGTERM, signal.SIGINT):
                signal.signal(s, signal.SIG_IGN)  # the last write must not be cut short
            set_limit(None)
            r["running"] = None
            self.write()
            self.say(self.v.summary() + f" in {self.elapsed():.0f} s of {self.budget_s:g}")
            for s, h in previous.items():
                signal.signal(s, h)
        return code

    def run_one(self, check, entry, ctx):
        label = check.label
        left = self.budget_s - self.elapsed()
        if ctx.skip_rest:
            entry["outcome"] = "skipped: nothing can run"
            self.v.add("SKIP", label, ctx.skip_rest, check=label)
            return
        if check.estimate_s + self.margin_s > left:
            entry["outcome"] = "SKIP(budget)"
            self.v.add("SKIP", label, f"SKIP(budget): estimate {check.estimate_s:g} s, {left:.0f} s left", check=label)
            self.write()
            return
        budget_end = self.started + self.budget_s - self.margin_s
        own_end = time.monotonic() + max(OVERRUN_FACTOR * check.estimate_s, check.estimate_s + OVERRUN_SLACK_S)
        self.say(f"CHECK {label}: estimate {check.estimate_s:g} s ({'guess' if check.guessed else 'measured'}), "
                 f"{left:.0f} s left")
        self.results["running"] = {"label": label, "started_s": round(self.elapsed(), 1)}
        self.write()
        ctx.check, ctx.run_dirs = check, []
        self.v.current = label
        t0 = time.monotonic()
        set_limit(min(budget_end, own_end))
        try:
            check.run(ctx)
            entry["outcome"] = "done"
        except CheckTimeLimit:
            took = time.monotonic() - t0
            if own_end <= budget_end:
                entry["outcome"] = "over its time limit"
                self.v.add("FAIL", f"{label}:time-limit",
                           f"stopped after {took:.0f} s (estimate {check.estimate_s:g} s): a hang?")
            else:
                entry["outcome"] = "stopped at the end of the budget"
                self.v.add("SKIP", f"{label}:unfinished", f"stopped at the end of the budget after {took:.0f} s "
                           f"(estimate {check.estimate_s:g} s)")
        except Terminated as t:
            entry["outcome"] = f"interrupted by {t}"
            self.v.add("SKIP", f"{label}:interrupted", f"interrupted by {t} after {time.monotonic() - t0:.0f} s")
            raise
        except Exception as e:  # noqa: BLE001 - a bug in one check must not end the lease's run
            entry["outcome"] = "error in the check"
            self.v.add("FAIL", f"{label}:error", f"{type(e).__name__}: {e}",
                       {"traceback": traceback.format_exc()[-4000:]})
        finally:
            set_limit(None)
            self.v.current = None
            entry["seconds"] = round(time.monotonic() - t0, 1)
            mine = [i for i in self.v.items if i.get("check") == label]
            entry["verdicts"] = {s: sum(1 for i in mine if i["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
            if entry["verdicts"]["FAIL"] and ctx.run_dirs:
                existing = [d for d in ctx.run_dirs if os.path.exists(d)]
                entry["traces"] = self.outbox.pack(label, existing) if existing else []
            self.results["running"] = None
            self.say(f"CHECK {label}: {entry['outcome']} in {entry['seconds']:g} s, "
                     f"{entry['verdicts']['PASS']} passed, {entry['verdicts']['FAIL']} failed, "
                     f"{entry['verdicts']['SKIP']} skipped")
            self.write()


def say(holder, line):
    """Prints a line on holder.stream; a stream that is gone (a closed pipe) is dropped, never the run: the results
    on disk are what counts."""
    if holder.stream:
        try:
            print(line, file=holder.stream, flush=True)
        except OSError:
            stream, holder.stream = holder.stream, None
            try:  # later writes (and Python's own flush at exit) go nowhere rather than fail
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass


CONSOLE = type("Console", (), {"stream": sys.stdout})()  # where the driver's own lines go (ENV, tables)


def show(line):
    say(CONSOLE, line)


def summary_text(results):
    """The short text that goes back beside results.json: where, the counts, every failure, what did not run."""
    env = results.get("environment", {})
    v = results.get("verdicts", [])
    n = {s: sum(1 for i in v if i["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
    checks = results.get("checks", [])
    lines = [f"gpu-check {env.get('date', '?')} on {env.get('nvidia_smi', '?')}",
             f"state: {results.get('state')}; {results.get('elapsed_s', 0):g} s of a {results.get('budget_s', 0):g} s "
             f"budget",
             f"SUMMARY {n['PASS']} passed, {n['FAIL']} failed, {n['SKIP']} skipped; checks: "
             + ", ".join(f"{sum(1 for c in checks if c['outcome'] == o)} {o}"
                         for o in dict.fromkeys(c["outcome"] for c in checks))]
    if results.get("running"):
        lines.append(f"running when this was written: {results['running']['label']} (since "
                     f"{results['running']['started_s']:g} s)")
    lines += [f"FAIL {i['name']}: {i['figures']}" for i in v if i["status"] == "FAIL"]
    for outcome in dict.fromkeys(c["outcome"] for c in checks if c["outcome"] != "done"):
        lines.append(f"{outcome}: " + ", ".join(f"{c['label']} ({c['estimate_s']:g} s)" for c in checks
                                                if c["outcome"] == outcome))
    traces = results.get("traces", {})
    lines += [f"traces {a['file']}: {', '.join(a['checks'])}" for a in traces.get("archives", [])]
    lines += [f"trace left out: {x}" for x in traces.get("left_out", [])]
    return "\n".join(lines) + "\n"
