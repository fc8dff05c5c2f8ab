#!/usr/bin/env python3
"""Runs the commands README.md and docs/*.md show, and compares the output they show with what they print now.

Issue 30: the docs' example output drifted from the binaries (missing lines, a summary layout of long ago). This
check runs, for every fenced block of README.md and docs/*.md:

- a *session*: a block whose first line is `$ COMMAND` (a `# comment` after it is dropped). The command runs and
  the lines the block shows after it must appear, in that order, in what it prints (stdout and stderr together),
  compared by *shape*: numbers, times, sizes, percentages, pids and absolute paths normalised (the machine and the
  moment differ), runs of spaces collapsed. A line that is only `...`, or `... N more rows`, stands for lines left
  out; a line with `...` inside is compared up to it (names cut to the page's width).
- a *command*: a line of another block that starts with gprof-run or gprof-report. It runs and must exit 0 (or the
  status its comment names: `# exit 1`).

Placeholders stand for the bundled real run (examples/torch-train): RUN, RUN_DIR, run/, run_dir, BASE, NEW, ...
`build/` is this build tree. A command that needs what is not here (an application such as ./train or python
train.py, a GPU, a cluster's srun/mpirun/torchrun, a file the docs name but do not make) is skipped, and listed with
the reason, so that the list of what is not checked stays visible. Each command runs in a fresh directory.

Usage: check_doc_examples.py SOURCE_DIR BINARY_DIR
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SRC = pathlib.Path(sys.argv[1]).resolve()
BUILD = pathlib.Path(sys.argv[2]).resolve()
EXAMPLE_RUN = SRC / "examples" / "torch-train"

# Stand-ins for the docs' placeholder inputs: the real H100 run kept in examples/.
PLACEHOLDERS = {"RUN", "RUN_DIR", "RUN_DIR_OR_TRACES", "run", "run/", "run_dir", "run_dir/", "BASE", "NEW", "RUN1",
                "RUN2", "base", "new", "base/", "new/", "DIR", "RUN_DIR...", "RUN...", "RUN_DIR_OR_TRACES...", "RUNS...",
                "RUN_DIRS...", "baseline", "perf"}
# Programs the docs run under gprof-run that are not here: skipped with this reason.
NOT_HERE = re.compile(r"(^|\s)(\./\S+|python3?|torchrun|srun|mpirun|accelerate|deepspeed|nsys|nvprof|cmake|cpack)(\s|$)")


def shape(line):
    line = line.rstrip()
    line = re.sub(r"(?<![\w.])/[^\s:(),'\"]+", "PATH", line)  # absolute paths
    line = re.sub(r"\b[0-9a-f]{32}\b", "HEX", line)
    number = r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
    line = re.sub(number + r"\s?(?:ns|us|µs|ms|s|%|B|KiB|MiB|GiB|kB|MB|GB|Hz)(?![\w])", "Q", line)
    line = re.sub(number, "N", line)
    line = re.sub(r"-{2,}", "-", line)  # table rules follow the column widths
    line = re.sub(r"\s+", " ", line).strip()
    return line


def is_elision(line):
    s = line.strip()
    return s == "..." or s == "…" or re.fullmatch(r"\.\.\. ?\d* more.*", s) is not None


def matches(shown, actual):
    if "..." in shown:
        head = shape(shown.split("...")[0])
        return bool(head) and shape(actual).startswith(head)
    return shape(shown) == shape(actual)


ROW = re.compile(r"^(?:[A-Za-z][A-Za-z ]*: )?Q Q ")  # a summary table row, by shape: a share, then a time


def row_key(line):
    """A table row without its section label (only the first row of a section has one) and without its name's tail."""
    sh = shape(line.split("...")[0]) if "..." in line else shape(line)
    return re.sub(r"^[A-Za-z][A-Za-z ]*: ", "", sh)


def compare(shown_lines, actual):
    """The first shown line not found in order in `actual` (None: all found). Rows of a table may come in any order
    among themselves (the rows of a run's phases swap with their times), so a run of shown rows is matched against
    the run of rows at that point of `actual`."""
    i, k = 0, 0
    shown_lines = [l for l in shown_lines if l.strip() and not is_elision(l)]
    while k < len(shown_lines):
        shown = shown_lines[k]
        if ROW.match(shape(shown)):
            run = []
            while k < len(shown_lines) and ROW.match(shape(shown_lines[k])):
                run.append(shown_lines[k])
                k += 1
            while i < len(actual) and not ROW.match(shape(actual[i])):
                i += 1
            rows = []
            while i < len(actual) and (ROW.match(shape(actual[i])) or is_elision(actual[i])):
                if not is_elision(actual[i]):
                    rows.append(row_key(actual[i]))
                i += 1
            for r in run:
                key = row_key(r)
                hit = next((j for j, a in enumerate(rows) if a == key or ("..." in r and a.startswith(key))), None)
                if hit is None:
                    return r
                rows.pop(hit)
            continue
        while i < len(actual) and not matches(shown, actual[i]):
            i += 1
        if i == len(actual):
            return shown
        i += 1
        k += 1
    return None


def blocks(path):
    """(first line number, lines) of every fenced block."""
    out, cur, start = [], None, 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            if cur is None:
                cur, start = [], n + 1
            else:
                out.append((start, cur))
                cur = None
            continue
        if cur is not None:
            cur.append(line)
    return out


def strip_comment(command):
    """The command without a trailing `# ...` (outside quotes), and the comment."""
    m = re.search(r"\s#\s?(.*)$", command)
    if m and command.count("'", 0, m.start()) % 2 == 0 and command.count('"', 0, m.start()) % 2 == 0:
        return command[:m.start()].rstrip(), m.group(1)
    return command.rstrip(), ""


def prepare(command, cwd):
    """The argv to run, or (None, reason) when it cannot run here."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        return None, f"cannot parse: {e}"
    if not words or words[0] not in ("gprof-run", "gprof-report"):
        return None, "not a gprof-run/gprof-report command"
    program = words[0]
    if any(w in ("|", ">", "<", "&&", ";") for w in words):
        return None, "a shell pipeline"
    if program == "gprof-run":
        rest = " ".join(words[1:])
        if "build/examples/" not in rest:
            m = NOT_HERE.search(" " + rest)
            what = m.group(2) if m else "its application"
            return None, f"runs {what}, which is not here"
    argv = [str(BUILD / "bin" / program)]
    for w in words[1:]:
        if w in PLACEHOLDERS:
            argv.append(str(EXAMPLE_RUN))
        elif re.fullmatch(r"[A-Z][A-Z_]*(\.\.\.)?", w) or re.fullmatch(r"<[^>]+>", w) or "[" in w or "…" in w:
            return None, f"placeholder {w!r} with no stand-in"
        else:
            argv.append(w)
    # Inputs the docs name that are not here (the stand-ins are; what the command writes need not be).
    writes = {"-o", "--output", "--write-json", "--write-markdown", "--write-html", "--timeline", "--log-file"}
    for prev, w in zip(argv[:-1], argv[1:]):
        if w.startswith("-") or prev in writes:
            continue
        if "*" in w or "?" in w:
            return None, f"a glob of files the docs do not make ({w})"
        looks_like_file = "/" in w or re.search(r"\.(json|gprof|sqlite|csv|md|html|txt)$", w)
        if looks_like_file and not (cwd / w).exists():
            return None, f"input {w!r} is not here"
    return argv, None


def workdir():
    """A fresh directory with build/ (bin and examples of this build tree), examples/ and tests/data/ of the source."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="gprof-doc-"))
    (d / "build").mkdir()
    for sub in ("bin", "lib", "examples"):
        if (BUILD / sub).exists():
            (d / "build" / sub).symlink_to(BUILD / sub)
    (d / "examples").symlink_to(SRC / "examples")
    (d / "tests").mkdir()
    (d / "tests" / "data").symlink_to(SRC / "tests" / "data")
    return d


def run(argv, cwd):
    env = dict(os.environ, CI="1")
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=120)
    return r.returncode, r.stdout


def main():
    files = [SRC / "README.md"] + sorted((SRC / "docs").glob("*.md"))
    failures, skipped, checked = [], [], 0
    for path in files:
        rel = path.relative_to(SRC)
        for start, lines in blocks(path):
            if not lines:
                continue
            if lines[0].startswith("$ "):
                command, _ = strip_comment(lines[0][2:])
                cwd = workdir()
                try:
                    argv, why = prepare(command, cwd)
                    if argv is None:
                        skipped.append(f"{rel}:{start}: {command}  -- {why}")
                        continue
                    status, out = run(argv, cwd)
                    checked += 1
                    actual = out.splitlines()
                    missing = compare(lines[1:], actual)
                    if missing is not None:
                        failures.append(f"{rel}:{start}: `{command}` no longer prints (in this order):\n"
                                        f"    {missing}\n  it printed (exit {status}):\n" +
                                        "\n".join("    " + a for a in actual[:80]))
                finally:
                    shutil.rmtree(cwd, ignore_errors=True)
                continue
            # Lines continued with a backslash are one command.
            joined, offsets, cur, cur_offset = [], [], "", 0
            for offset, line in enumerate(lines):
                if not cur:
                    cur_offset = offset
                if line.rstrip().endswith("\\"):
                    cur += line.rstrip()[:-1] + " "
                    continue
                joined.append(cur + line)
                offsets.append(cur_offset)
                cur = ""
            for offset, line in zip(offsets, joined):
                text = line.strip()
                if not text.startswith(("gprof-run ", "gprof-report ")) or text.split()[1].endswith(":"):
                    continue  # not a command: an output line ("gprof-run profile: ...", "gprof-run: ...")
                command, comment = strip_comment(text)
                expected = 0
                m = re.search(r"(?:^|\()exit (\d+)\b", comment)
                if m:
                    expected = int(m.group(1))
                cwd = workdir()
                try:
                    argv, why = prepare(command, cwd)
                    if argv is None:
                        skipped.append(f"{rel}:{start + offset}: {command}  -- {why}")
                        continue
                    status, out = run(argv, cwd)
                    checked += 1
                    if status != expected:
                        failures.append(f"{rel}:{start + offset}: `{command}` exited {status} (the docs expect "
                                        f"{expected}):\n" + "\n".join("    " + a for a in out.splitlines()[-15:]))
                finally:
                    shutil.rmtree(cwd, ignore_errors=True)
    print(f"{checked} commands of the docs run, {len(failures)} failed, {len(skipped)} skipped:")
    for s in skipped:
        print("  skipped", s)
    for f in failures:
        print("FAILED", f)
    if checked < 10:
        print("too few commands found: the docs' layout changed and this check no longer reads it")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
