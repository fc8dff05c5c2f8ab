#!/usr/bin/env python3
"""Real framework programs for gpu-check (issue #13): the process trees frameworks make, run bare and under gprof-run.

  frameworks.py PROGRAM

PROGRAM is one of:
  jax         a jitted function (XLA starts ptxas/nvlink helpers)
  cupy        an elementwise kernel and a reduction
  triton      a Triton kernel launched 10 times (Triton runs /sbin/ldconfig, a static binary on Ubuntu)
  compile     torch.compile (Inductor: Triton kernels, ldconfig, compile workers)
  dataloader  a DataLoader with 2 worker processes feeding a CUDA model (workers do CPU work only)
  spawn       torch.multiprocessing.spawn with 2 ranks, each with RANK/LOCAL_RANK/WORLD_SIZE set, doing GPU work
  profiler    torch.profiler inside the program (its own CUPTI client): prints how many kernels it saw

Each prints a fixed text computed from fixed inputs (the same bare and under gprof-run) ending with one line
"FRAMEWORK_RESULT {json}": program, gpu_processes (processes that do GPU work), and for profiler the kernel count
torch.profiler saw. Exit 77 when the framework or a CUDA device is missing.
"""
import json
import os
import sys

SKIP = 77


def result(**fields):
    print("FRAMEWORK_RESULT " + json.dumps(fields, sort_keys=True), flush=True)
    return 0


def need(module):
    try:
        return __import__(module)
    except Exception as e:  # noqa: BLE001 - any import failure means "not here"
        print(f"frameworks.py: no {module}: {e}", file=sys.stderr)
        sys.exit(SKIP)


def need_torch_cuda():
    torch = need("torch")
    if not torch.cuda.is_available():
        print("frameworks.py: no CUDA device visible to PyTorch", file=sys.stderr)
        sys.exit(SKIP)
    return torch


def run_jax():
    jax = need("jax")
    import jax.numpy as jnp
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        print(f"frameworks.py: JAX has no GPU backend: {e}", file=sys.stderr)
        return SKIP
    f = jax.jit(lambda x: jnp.tanh(x @ x.T).sum())
    x = jax.device_put(jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256) / 65536.0, gpus[0])
    print(f"jax sum {float(f(x)):.2f}")
    return result(program="jax", gpu_processes=1)


def run_cupy():
    cp = need("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        print(f"frameworks.py: CuPy sees no device: {e}", file=sys.stderr)
        return SKIP
    square = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "gprof_square")
    x = cp.arange(1 << 20, dtype=cp.float32) / (1 << 20)
    print(f"cupy sum {float(square(x).sum()):.2f}")
    return result(program="cupy", gpu_processes=1)


def run_triton():
    torch = need_torch_cuda()
    triton = need("triton")
    import triton.language as tl

    @triton.jit
    def gprof_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 1 << 16
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    for _ in range(10):
        gprof_add[(n // 1024,)](x, x, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    print(f"triton sum {float(out.sum()):.1f}")
    return result(program="triton", gpu_processes=1, launches=10, kernel="gprof_add")


def run_compile():
    torch = need_torch_cuda()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).cuda().eval()
    step = torch.compile(model)
    x = torch.ones(16, 64, device="cuda")
    with torch.no_grad():
        for _ in range(5):
            y = step(x)
    torch.cuda.synchronize()
    print(f"compile shape {tuple(y.shape)}")
    return result(program="compile", gpu_processes=1)


class Squares:
    def __len__(self):
        return 64

    def __getitem__(self, i):
        import torch
        return torch.full((32,), float(i))


def run_dataloader():
    torch = need_torch_cuda()
    loader = torch.utils.data.DataLoader(Squares(), batch_size=8, num_workers=2)
    total = 0.0
    for batch in loader:
        total += float((batch.cuda() ** 2).sum())
    print(f"dataloader total {total:.1f}")
    return result(program="dataloader", gpu_processes=1, workers=2)


def spawn_rank(rank, world, out_dir):
    # The variables torchrun would set: the collector reads them when the process starts, so they are set by the
    # parent before each rank starts (mp.spawn passes the parent's environment).
    import torch
    torch.cuda.set_device(rank % torch.cuda.device_count())
    x = torch.full((1024,), float(rank + 1), device="cuda")
    for _ in range(10):
        x = x * 1.5
    torch.cuda.synchronize()
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        f.write(f"rank {rank} of {world}: {float(x.sum()):.1f}\n")


def run_spawn():
    torch = need_torch_cuda()
    import tempfile
    import torch.multiprocessing as mp
    world = 2
    with tempfile.TemporaryDirectory() as out_dir:
        for rank in range(world):
            # One rank at a time, so each starts with its own RANK in the environment it inherits.
            os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
            mp.start_processes(spawn_rank_entry, args=(rank, world, out_dir), nprocs=1, start_method="spawn")
        for rank in range(world):
            with open(os.path.join(out_dir, f"rank{rank}")) as f:
                print(f.read(), end="")
    del torch
    return result(program="spawn", gpu_processes=world, ranks=world)


def spawn_rank_entry(_index, rank, world, out_dir):
    spawn_rank(rank, world, out_dir)


def run_profiler():
    torch = need_torch_cuda()
    from torch.profiler import ProfilerActivity, profile
    x = torch.ones(256, 256, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            x = torch.tanh(x @ x) / 256
        torch.cuda.synchronize()
    kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print("profiler done")  # the count differs with and without gprof-run: it goes to the result line only
    return result(program="profiler", gpu_processes=1, profiler_kernels=kernels)


PROGRAMS = {"jax": run_jax, "cupy": run_cupy, "triton": run_triton, "compile": run_compile,
            "dataloader": run_dataloader, "spawn": run_spawn, "profiler": run_profiler}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in PROGRAMS:
        print(__doc__, file=sys.stderr)
        return 2
    return PROGRAMS[sys.argv[1]]()


if __name__ == "__main__":
    sys.exit(main())
