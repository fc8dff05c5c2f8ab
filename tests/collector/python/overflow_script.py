# Run by test_python_stacks: fills the Python stack tables (collector/python/python_stack.h) past their bounds,
# with more code locations than they hold (mode "locations") or more distinct stacks (mode "stacks"), and prints
# the counts as JSON:  overflow_script.py <trace> locations|stacks
import json
import sys

import gprof_pystack_probe as probe

probe.start(sys.argv[1])



def many_lines():
    # 17000 lines, each a capture: 17000 distinct (code, line) locations > 16384.
    namespace = {"probe": probe}
    exec("def many_lines():\n" + "    probe.capture()\n" * 17000, namespace)
    namespace["many_lines"]()
    return []


# 2^15 distinct stacks over a handful of locations (a and b in every order, 15 deep).
def walk(bits, n):
    if n == 0:
        return probe.capture()
    return a(bits, n) if bits & 1 else b(bits, n)


def a(bits, n):
    return walk(bits >> 1, n - 1)


def b(bits, n):
    return walk(bits >> 1, n - 1)


def many_stacks():
    return [walk(bits, 15) for bits in range(1 << 15)]


ids = many_lines() if sys.argv[2] == "locations" else many_stacks()
counts = probe.counts()
probe.finish()
print(json.dumps({"counts": counts, "zero_ids": sum(1 for i in ids if i == 0)}))
