#!/usr/bin/env python3
"""Every option the docs show on a gprof-run or gprof-report command line exists in that program's --help.

Looks at README.md and docs/*.md: command lines in code blocks and code spans that start with gprof-run or
gprof-report (a code-block line starting with spaces and '[' continues the previous one), and the first column of
the option tables of docs/launcher.md. For gprof-report, the subcommand named right after it (timeline, diff, ...)
decides which --help the option must be in. Prints each missing option with its file and line; exit 1 if any.

Usage: check_doc_options.py SOURCE_DIR GPROF_RUN GPROF_REPORT
"""
import pathlib
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w/.-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")


def help_text(argv):
    return subprocess.run(argv + ["--help"], capture_output=True, text=True, check=False).stdout


def has_option(text, option):
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


def commands(path):
    """(line number, program, subcommand, the rest of the command line) for each command the file shows."""
    out = []
    in_block = False
    last = None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
            last = None
            continue
        pieces = [line] if in_block else re.findall(r"`([^`]*)`", line)
        for piece in pieces:
            if in_block and last and re.match(r"\s+\[", piece):
                out.append((n, last[0], last[1], piece))
                continue
            for m in re.finditer(r"(?:^|[\s$(|&;])(gprof-run|gprof-report)\b([^|#`]*)", piece):
                program, rest = m.group(1), m.group(2)
                # Only what follows gprof-run/gprof-report up to another program on the same line.
                rest = re.split(r"\b(?:nsys|nvprof|srun|mpirun|python3?|cmake|cpack|gprof-run|gprof-report)\b", rest)[0]
                words = rest.split()
                sub = words[0] if words and words[0] in SUBCOMMANDS else ""
                if program == "gprof-run":
                    # Everything after the application belongs to it: stop at the first word that is not ours.
                    rest = gprof_run_options_part(words)
                out.append((n, program, sub, rest))
                last = (program, sub) if in_block else None
    return out


def gprof_run_options_part(words):
    kept = []
    takes_value = {"-o", "--output", "-t", "--trace", "-c", "--capture-range", "-p", "--nvtx-capture",
                   "--capture-range-end", "--cuda-graph-trace", "-y", "--delay", "-d", "--duration",
                   "--kernel-filter", "--summary", "--log-file", "--timeline", "--wait-children", "--log-level",
                   "--export", "--timeunit", "--cuda-api"}
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--" or not w.startswith(("-", "[")):
            break
        kept.append(w)
        if w.split("=")[0] in takes_value and "=" not in w and i + 1 < len(words):
            i += 1
        i += 1
    return " ".join(kept)


SUBCOMMANDS = {"timeline", "diff", "analyze", "export", "ranks", "html"}


def main():
    src, gprof_run, gprof_report = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    helps = {("gprof-run", ""): help_text([gprof_run]), ("gprof-report", ""): help_text([gprof_report])}
    for sub in SUBCOMMANDS:
        helps[("gprof-report", sub)] = help_text([gprof_report, sub])
    missing = []
    checked = 0
    files = [src / "README.md"] + sorted((src / "docs").glob("*.md"))
    for path in files:
        for n, program, sub, rest in commands(path):
            text = helps.get((program, sub)) or ""
            for option in OPTION.findall(rest):
                checked += 1
                if not has_option(text, option):
                    missing.append(f"{path.relative_to(src)}:{n}: {program}{' ' + sub if sub else ''} {option}")
        if path.name == "launcher.md":
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = re.match(r"\|\s*`([^`]*)`\s*\|", line)
                if not m or not m.group(1).startswith("-"):
                    continue
                for option in OPTION.findall(m.group(1)):
                    checked += 1
                    if not has_option(helps[("gprof-run", "")], option):
                        missing.append(f"{path.relative_to(src)}:{n}: gprof-run {option} (option table)")
    for m in missing:
        print("not in --help:", m)
    print(f"{checked} documented options checked, {len(missing)} missing")
    if checked < 50:
        print("too few options found: the docs' layout changed and this check no longer reads it")
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
