# Cost of current_python_stack per capture at several Python depths (GIL released, as in PyTorch), for
# docs/performance.md:  PYTHONPATH=<module dir> python3 bench_stacks.py <trace path> [captures]
import sys

import gprof_pystack_probe as probe


def at_depth(k, n):
    if k <= 1:
        return probe.bench(n)
    return at_depth(k - 1, n)


probe.start(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
print(probe.support())
for depth in (1, 5, 10, 20, 40, 64, 100):
    at_depth(depth, 1000)  # the first captures intern the frames and the stack
    best = min(at_depth(depth, n) for _ in range(5))
    print(f"depth {depth:3d}: {best:7.1f} ns per captured stack")
print(probe.counts())
probe.finish()
