"""The wheel as a user gets it: installed offline into a fresh venv, then used the way the docs say.

Usage: python check_wheel.py --wheel-dir build/dist --build build --floor 2.34 [--base-python PYTHON]
                             [--pandas-python PYTHON] RUN...
The wheel is the one gprof_run-*.whl in --wheel-dir (scripts/wheel makes it), which must be newer than the build's
executables. --base-python (default: the interpreter this venv was made from) makes the fresh venv.

1. Its contents: the two commands, the collector and the reader module under gprof_run/; nothing of CUDA (no
   libcupti, no libcuda), no test double; a manylinux tag at the glibc floor, and no binary above it.
2. `pip install --no-index WHEEL` into a fresh venv of PYTHON.
3. The installed commands (console scripts and python -m gprof_run) against the installed executable
   (check_commands.py), and the venv's site-packages handed to the collector's CUPTI search.
4. The NVTX example profiled with the installed gprof-run, then that run and RUN... read through the installed
   Python API and compared with the installed gprof-report (check_reader.py): without numpy/pandas (the fresh venv),
   and with them (--pandas-python: an interpreter that has pandas, importing the installed package).
5. The venv copied elsewhere and the original removed: python -m gprof_run and the package's own gprof-run still
   profile from the copy.
Prints the wheel's size and the import times (docs/install.md quotes them).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL, **kw)


def highest_glibc(path):
    out = run(["objdump", "-T", path]).stdout
    versions = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([0-9]+\.[0-9]+)", out)]
    return max(versions) if versions else (0, 0)


def check_contents(wheel, floor):
    names = zipfile.ZipFile(wheel).namelist()
    for want in ("gprof_run/bin/gprof-run", "gprof_run/bin/gprof-report", "gprof_run/lib/gprof-run/libgprof-collector.so",
                 "gprof_run/__init__.py", "gprof_run/__main__.py"):
        check(want in names, f"the wheel lacks {want}")
    check(any(re.fullmatch(r"gprof_run/_reader\.cpython-.*\.so", n) for n in names), "the wheel lacks _reader")
    for n in names:
        base = os.path.basename(n)
        check(not re.match(r"lib(cupti|cuda|nvidia-|cudart)", base), f"CUDA library in the wheel: {n}")
        check("standin" not in n and "/tests/" not in n and "double" not in base, f"test file in the wheel: {n}")
        check(not n.startswith("gprof_run/share/"), f"documentation in the wheel: {n}")
    tag = re.search(r"-(manylinux_[0-9]+_[0-9]+_x86_64)\.whl$", wheel)
    check(tag and tag.group(1) == f"manylinux_{floor.replace('.', '_')}_x86_64",
          f"wheel tag {wheel}: expected manylinux_{floor.replace('.', '_')}_x86_64")
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel-dir", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--base-python", default=getattr(sys, "_base_executable", sys.executable))
    ap.add_argument("--floor", required=True)
    ap.add_argument("--pandas-python")
    ap.add_argument("runs", nargs="*")
    args = ap.parse_args()
    floor = tuple(int(x) for x in args.floor.split("."))
    args.nvtx_example = os.path.join(args.build, "examples", "gprof-example-nvtx")

    wheels = [os.path.join(args.wheel_dir, f) for f in os.listdir(args.wheel_dir)] \
        if os.path.isdir(args.wheel_dir) else []
    wheels = [w for w in wheels if re.match(r"gprof_run-.*\.whl$", os.path.basename(w))]
    if not check(len(wheels) == 1, f"expected one gprof_run wheel in {args.wheel_dir}, found {wheels}: "
                                   "scripts/build makes it (scripts/wheel)"):
        return report()
    args.wheel = wheels[0]
    newest = max(os.path.getmtime(os.path.join(args.build, p)) for p in
                 ("bin/gprof-run", "bin/gprof-report", "lib/gprof-run/libgprof-collector.so"))
    if not check(os.path.getmtime(args.wheel) >= newest,
                 f"{args.wheel} is older than the build's executables: run scripts/wheel"):
        return report()

    check_contents(args.wheel, args.floor)
    tmp = tempfile.mkdtemp(prefix="gprof-wheel-")
    try:
        venv = os.path.join(tmp, "venv")
        r = run([args.base_python, "-m", "venv", venv])
        if not check(r.returncode == 0, f"python -m venv: {r.stderr}"):
            return report()
        py = os.path.join(venv, "bin", "python")
        r = run([py, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--quiet", args.wheel])
        if not check(r.returncode == 0, f"pip install --no-index: {r.stdout}{r.stderr}"):
            return report()
        site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"]).stdout.strip()
        pkg = os.path.join(site, "gprof_run")
        exe = os.path.join(pkg, "bin", "gprof-run")
        for root, _, files in os.walk(pkg):
            for f in files:
                p = os.path.join(root, f)
                with open(p, "rb") as fh:
                    if fh.read(4) != b"\x7fELF":
                        continue
                check(highest_glibc(p) <= floor, f"{p} needs GLIBC_{highest_glibc(p)} > floor {args.floor}")
                needed = run(["readelf", "-d", p]).stdout
                check(not re.search(r"NEEDED.*lib(cupti|cuda)\.so", needed), f"{p} links CUDA: {needed}")

        # The commands, console scripts and python -m.
        r = run([py, os.path.join(HERE, "check_commands.py"), "--gprof-run", exe, "--nvtx-example", args.nvtx_example,
                 "--command", os.path.join(venv, "bin", "gprof-run")])
        check(r.returncode == 0, f"installed commands:\n{r.stdout}{r.stderr}")
        r = run([os.path.join(venv, "bin", "gprof-report"), "--version"])
        check(r.returncode == 0 and r.stdout.startswith("gprof-report "), f"gprof-report --version: {r.stdout}")

        # gprof-run tells the collector where this venv's packages are (its CUPTI search looks there first).
        r = run([os.path.join(venv, "bin", "gprof-run"), "--force", "--no-timeline", "-o", os.path.join(tmp, "env"),
                 py, "-c", "import os; print(os.environ.get('GPROF_PYTHON_SITE_PACKAGES'))"])
        check(r.returncode == 0 and r.stdout.split("\n")[0].split(":")[0] == os.path.realpath(site),
              f"GPROF_PYTHON_SITE_PACKAGES in a venv's python: {r.stdout!r} (site-packages {site})")

        # Profile the NVTX example with the installed command, read it and the real runs through the API.
        run_dir = os.path.join(tmp, "nvtx-run")
        r = run([os.path.join(venv, "bin", "gprof-run"), "-o", run_dir, args.nvtx_example])
        check(r.returncode == 0 and "20 steps done" in r.stdout, f"profiling the NVTX example: {r.stderr}")
        runs = [run_dir, *args.runs]
        report_exe = os.path.join(pkg, "bin", "gprof-report")
        r = run([py, os.path.join(HERE, "check_reader.py"), "--gprof-report", report_exe, *runs])
        check(r.returncode == 0, f"reader (no numpy/pandas):\n{r.stdout}{r.stderr}")
        print(r.stdout.strip())
        if args.pandas_python:
            env = dict(os.environ, PYTHONPATH=site)
            r = run([args.pandas_python, os.path.join(HERE, "check_reader.py"), "--gprof-report", report_exe, *runs],
                    env=env)
            check(r.returncode == 0 and "pandas" in r.stdout, f"reader (pandas):\n{r.stdout}{r.stderr}")
            print(r.stdout.strip())

        # Figures for docs/install.md: the import of the package, and of the reader module on first use.
        imp = run([py, "-X", "importtime", "-c", "import gprof_run"]).stderr
        total = [int(m.group(1)) for m in re.finditer(r"\|\s*(\d+) \| gprof_run$", imp, re.M)]
        ext = run([py, "-X", "importtime", "-c", "import gprof_run._reader"]).stderr
        ext_us = [int(m.group(1)) for m in re.finditer(r"\|\s*(\d+) \|\s+gprof_run\._reader$", ext, re.M)]
        print(f"check_wheel: {os.path.basename(args.wheel)}: {os.path.getsize(args.wheel) // 1024} KiB; "
              f"installed {sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(pkg) for f in fs) // 1024}"
              f" KiB; import gprof_run {total[0] / 1000 if total else '?'} ms, its reader module "
              f"{ext_us[0] / 1000 if ext_us else '?'} ms")

        # A copy of the venv, the original gone: the package finds its commands and collector relative to itself.
        moved = os.path.join(tmp, "moved")
        shutil.copytree(venv, moved, symlinks=True)
        shutil.rmtree(venv)
        moved_py = os.path.join(moved, "bin", "python")
        moved_site = site.replace(venv, moved)
        for tag, cmd in (("python -m gprof_run", [moved_py, "-m", "gprof_run"]),
                         ("the package's gprof-run", [os.path.join(moved_site, "gprof_run", "bin", "gprof-run")])):
            out_dir = os.path.join(tmp, "moved-run-" + str(len(tag)))
            r = run([*cmd, "-o", out_dir, args.nvtx_example])
            check(r.returncode == 0 and "20 steps done" in r.stdout and
                  any(f.endswith(".gprof") for f in os.listdir(out_dir)), f"moved venv, {tag}: {r.stderr}")
        r = run([moved_py, "-c", f"import gprof_run; print(len(gprof_run.events({run_dir!r}, 'nvtx')['start']))"])
        check(r.returncode == 0 and int(r.stdout or 0) > 0, f"moved venv, events(): {r.stdout}{r.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report()


def report():
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
