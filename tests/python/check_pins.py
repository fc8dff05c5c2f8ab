"""pyproject.toml's build requirements are pinned, and at the versions scripts/python-requirements.txt installs
into build/venv (the venv scripts/wheel builds with, build isolation off): one set of versions, whichever way the
wheel is built. Usage: python check_pins.py SOURCE_DIR"""

import os
import re
import sys
import tomllib

source = sys.argv[1]
with open(os.path.join(source, "pyproject.toml"), "rb") as f:
    requires = tomllib.load(f)["build-system"]["requires"]
pins = {}
with open(os.path.join(source, "scripts", "python-requirements.txt")) as f:
    for line in f:
        m = re.match(r"([A-Za-z0-9_.-]+)==([^ ]+) --hash=sha256:[0-9a-f]{64}$", line.strip())
        if m:
            pins[m.group(1).lower()] = m.group(2)
        elif line.strip() and not line.startswith("#"):
            sys.exit(f"python-requirements.txt: not an exact version with its hash: {line.strip()}")
bad = []
for r in requires:
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^ ;]+)", r)
    if not m:
        bad.append(f"{r}: not pinned to an exact version")
    elif pins.get(m.group(1).lower()) != m.group(2):
        bad.append(f"{r}: python-requirements.txt has {pins.get(m.group(1).lower())}")
for b in bad:
    print("FAIL: pyproject.toml build-system.requires", b)
print(f"check_pins: {len(requires)} build requirements, {len(pins)} pinned packages")
sys.exit(1 if bad else 0)
