# Cost of a traced CUDA call from Python in a real process: N kernel launches through the stand-ins from a C
# extension that releases the GIL (as PyTorch), at several Python depths. Run under gprof-run with and without
# --backtrace (docs/performance.md):
#   GPROF_CUPTI_LIB=... GPROF_TEST_CUDA_STANDIN=... PYTHONPATH=build/tests/python3.X \
#     gprof-run [--backtrace] -o DIR python3.X tests/collector/python/bench_launch.py [N]
import sys
import time

import gprof_cuda_caller


def at_depth(k, n):
    if k > 1:
        return at_depth(k - 1, n)
    t0 = time.perf_counter_ns()
    for _ in range(n):
        gprof_cuda_caller.launch("_Z6kernelv")
    return (time.perf_counter_ns() - t0) / n


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
gprof_cuda_caller.launch("_Z6kernelv")
for depth in (1, 10, 40):
    best = min(at_depth(depth, n) for _ in range(3))
    print(f"depth {depth:3d}: {best:7.0f} ns per launch", file=sys.stderr)
