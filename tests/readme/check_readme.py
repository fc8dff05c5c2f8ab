#!/usr/bin/env python3
"""Checks README.md's two set-up commands the way CI runs them.

- README holds exactly two commands in its "Set-up" section (one fenced block each).
- .ci/run runs the second one verbatim.
- The first one (set up, build, profile the bundled example) runs and succeeds, when the build tree it builds is
  the one this test belongs to (otherwise it would start a second full build: skipped, exit 77).
"""
import os
import re
import subprocess
import sys

source_dir, binary_dir = sys.argv[1], sys.argv[2]
readme = open(os.path.join(source_dir, "README.md"), encoding="utf-8").read()
section = re.search(r"^## Set-up\n(.*?)(?=^## )", readme, re.S | re.M)
if not section:
    sys.exit("README.md has no '## Set-up' section")
blocks = re.findall(r"```(?:sh|bash)?\n(.*?)```", section.group(1), re.S)
commands = [b.strip() for b in blocks]
if len(commands) != 2:
    sys.exit(f"README.md's Set-up section must hold exactly two commands, found {len(commands)}")
for c in commands:
    if "\n" in c:
        sys.exit(f"each set-up command must be one line: {c!r}")

# Example output is copied from real runs: it must not show where one developer keeps the checkout. That is the
# checkout itself and the home folder, and the folder holding the checkout when it lies in the home folder. A shared
# folder above a clone says nothing about anyone (a clone at /tmp/x must pass although README's example run was
# recorded in /tmp/w, and one at /opt/x although it shows /opt/torch).
checkout = os.path.realpath(source_dir)
home = os.path.realpath(os.path.expanduser("~"))
mine = {checkout}
if home != "/":
    mine.add(home)
    parent = os.path.dirname(checkout)
    if parent == home or parent.startswith(home + "/"):
        mine.add(parent)
for where in sorted(mine):
    if where + "/" in readme:
        sys.exit(f"README.md shows a path of this machine ({where}/...): example output must not")

ci = open(os.path.join(source_dir, ".ci", "run"), encoding="utf-8").read()
if commands[1] not in ci.splitlines():
    sys.exit(f".ci/run does not run README's test command verbatim: {commands[1]!r}")

if os.path.realpath(binary_dir) != os.path.realpath(os.path.join(source_dir, "build")):
    print(f"skipped running command (1): this test belongs to {binary_dir}, command (1) builds build/")
    sys.exit(77)
env = dict(os.environ, CI=os.environ.get("CI", ""))
result = subprocess.run(["bash", "-c", commands[0]], cwd=source_dir, env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
print(result.stdout[-4000:])
if result.returncode != 0:
    sys.exit(f"README command (1) failed with exit status {result.returncode}")
# Command (1) shows the NVTX example and a real GPU run (examples/torch-train, recorded on an H100).
for shown in ("NVTX ranges:", "NVIDIA H100", "GPU activities:", "cudaLaunchKernel"):
    if shown not in result.stdout:
        sys.exit(f"README command (1) does not show {shown!r}")
print("README commands: OK")
