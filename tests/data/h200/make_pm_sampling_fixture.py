#!/usr/bin/env python3
"""Makes pm-sampling-probe.json from a gpu-check results.json: the PM-sampling probe's two documents (bare and under
gprof-run) with their samples shortened so the file stays small and the checks read what the GPU gave.

  make_pm_sampling_fixture.py RESULTS.json > pm-sampling-probe.json

Every sample within KEEP rows of a phase's mark or of a change between busy and not busy (SM active % crossing 50)
is kept as it was, and the first and last sample; each stretch between kept samples becomes one run
[start, end, count, mean of each column], which expand_runs() (tests/gpu/test_gpu_check.py) turns back into `count`
contiguous samples of equal length holding the means. The samples still tile Start..Stop, the marks and edges are
exact, and a phase's mean is the real one (runs never straddle a mark). Values are rounded to 6 significant digits.
"""
import json
import sys

KEEP = 5


def short(x):
    return x if isinstance(x, int) else float(f"{x:.6g}")


def shorten(doc):
    cols = doc["samples"]["columns"]
    rows = doc["samples"]["rows"]
    sm = next(i for i, c in enumerate(cols) if c.startswith("sm__cycles_active.avg.pct"))
    marks = [t for p in doc["phases"] for t in (p["cupti_start"], p["cupti_end"])]
    keep = {0, len(rows) - 1}
    for i, r in enumerate(rows):
        edge = i and (rows[i - 1][sm] >= 50) != (r[sm] >= 50)
        if edge or any(r[0] <= t < r[1] for t in marks):
            keep.update(range(max(0, i - KEEP), min(len(rows), i + KEEP + 1)))
    out, i = [], 0
    while i < len(rows):
        if i in keep:
            out.append([short(v) for v in rows[i]])
            i += 1
            continue
        j = i
        while j < len(rows) and j not in keep:
            j += 1
        run = rows[i:j]
        means = [short(sum(r[k] for r in run) / len(run)) for k in range(2, len(cols))]
        out.append({"run": [run[0][0], run[-1][1], len(run)] + means})
        i = j
    doc = dict(doc)
    doc["samples"] = {"columns": cols, "rows": out}
    return doc


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)["data"]["issues:pm-sampling-probe"]
    fixture = {"source": "gpu-check run 1, NVIDIA H200, 2026-11-27 (../shared/gpu-runs/2026-11-27-h200/run1), "
                         "shortened by tests/data/h200/make_pm_sampling_fixture.py",
               "bare": shorten(data["bare"]), "beside_gprof_run": shorten(data["beside_gprof_run"])}
    json.dump(fixture, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
