#!/usr/bin/env python3
"""Every gprof-report report of real H100 traces against what the recorded programs are known to have done.

  check_known_answers.py --report GPROF_REPORT FIXTURE_DIR...

A fixture directory (tests/data/h100/<run>/) holds the traces of one gprof-run run and expected.json:
  {"answer": {...},     the program's KNOWN_ANSWER line (gprof-test-ka expect MODE; d-*.out for the d-* runs),
   "fixture": {"source": "...", "why": "...",
               "overrides": {...},       fields of the answer replaced, each said why in "why"
               "graph_trace": "graph",   the trace is graph-level: its graphs are GraphLaunch records
               "traces": "relative/dir"  where the traces are when not here (examples/torch-train)}}
The checks are those gpu-check runs on fresh GPU runs (tests/gpu/gpu_check.py: check_reports): kernels, copies,
memsets, API calls, NVTX, graphs, memory and processes in every report (summary, the nsys-named tables, memory,
analyze, the timeline) and the console rendering of each. Prints "PASS|FAIL name: figures"; exit 1 on any FAIL,
or when a fixture yields fewer checks than it must (an empty result never passes).
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import gpu_check  # noqa: E402 - the shared expectation logic

MIN_CHECKS = 12  # processes, dropped, timeline, analyze, driver calls, memory, 10 tables... a fixture has more


def load_fixture(path):
    with open(os.path.join(path, "expected.json")) as f:
        exp = json.load(f)
    answer = exp["answer"]
    fixture = exp.get("fixture", {})
    answer.update(fixture.get("overrides", {}))
    if fixture.get("graph_trace") == "graph":
        answer = gpu_check.graph_level_answer(answer)
    traces = os.path.normpath(os.path.join(path, fixture.get("traces", ".")))
    return answer, traces


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True, help="the gprof-report binary")
    ap.add_argument("fixtures", nargs="+")
    args = ap.parse_args()
    failed = 0
    total = 0
    with tempfile.TemporaryDirectory(prefix="gprof-ka-") as work:
        for fixture in args.fixtures:
            label = os.path.basename(os.path.normpath(fixture))
            answer, traces = load_fixture(fixture)
            docs, problems = gpu_check.gather_reports(args.report, traces, work)
            results = [("FAIL", f"{label}:gprof-report", p) for p in problems]
            results += gpu_check.check_reports(answer, docs, label)
            if len(results) < MIN_CHECKS:
                results.append(("FAIL", f"{label}:checks", f"only {len(results)} checks (at least {MIN_CHECKS})"))
            for status, name, figures in results:
                print(f"{status} {name}: {figures}")
                failed += status == "FAIL"
            total += len(results)
    print(f"SUMMARY {total - failed} passed, {failed} failed, {len(args.fixtures)} real traces")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
