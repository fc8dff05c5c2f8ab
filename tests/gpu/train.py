#!/usr/bin/env python3
"""A small PyTorch training loop: the "real program no one here wrote" of docs/validation.md.

Deterministic on purpose (fixed seeds, no cuDNN autotuning, an MLP whose kernels cuBLAS picks by shape), so two
runs launch the same kernels and gprof-run's record of one can be compared with torch.profiler's of the other.

  train.py --mode bare       [--steps N] [--result FILE]   just train; per-step times measured inside
  train.py --mode torchprof  [--steps N] [--result FILE] [--kernels FILE]
                             the same under torch.profiler (CUDA activities over the whole run); FILE gets
                             {"kernels": {name: {"count": n, "total_ns": t}}, ...} from its Chrome trace

Prints one line "TRAIN_RESULT {json}" (steps, median/mean step time in ns, wall time of the training part).
Exit 77 when PyTorch or a CUDA device is missing.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def kernels_from_chrome_trace(path):
    """{name: {"count", "total_ns"}} of the GPU kernels in a torch.profiler (Kineto) Chrome trace."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "Kernel"):
            continue
        k = out.setdefault(e["name"], {"count": 0, "total_ns": 0.0})
        k["count"] += 1
        k["total_ns"] += float(e.get("dur", 0.0)) * 1000.0  # Kineto writes microseconds
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["bare", "torchprof"], default="bare")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20, help="steps left out of the per-step statistics")
    ap.add_argument("--result", help="also write the result JSON here")
    ap.add_argument("--kernels", help="torchprof: write the kernel table here")
    args = ap.parse_args()

    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        print(f"train.py: no PyTorch: {e}", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("train.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77

    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")

    prof = None
    if args.mode == "torchprof":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()

    t_start = time.perf_counter_ns()
    # Everything CUDA happens after this point, so both profilers see the same work.
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024),
        torch.nn.Linear(1024, 1024), torch.nn.GELU(),
        torch.nn.Linear(1024, 10),
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    x = torch.randn(4096, 512, device=dev, generator=gen)
    y = torch.randint(0, 10, (4096,), device=dev, generator=gen)
    batch = 256
    torch.cuda.synchronize()

    step_ns = []
    t_train = time.perf_counter_ns()
    for step in range(args.steps):
        t0 = time.perf_counter_ns()
        i = (step * batch) % x.shape[0]
        xb, yb = x[i:i + batch], y[i:i + batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()  # so the step time includes its GPU work
        step_ns.append(time.perf_counter_ns() - t0)
    train_ns = time.perf_counter_ns() - t_train
    final_loss = float(loss.item())

    result = {
        "mode": args.mode, "steps": args.steps, "torch": torch.__version__, "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0), "final_loss": final_loss, "train_ns": train_ns,
        "total_ns": time.perf_counter_ns() - t_start,
    }
    measured = step_ns[args.warmup:] or step_ns
    result["step_median_ns"] = statistics.median(measured)
    result["step_mean_ns"] = statistics.fmean(measured)

    if prof is not None:
        torch.cuda.synchronize()
        prof.__exit__(None, None, None)
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "torch_trace.json")
            prof.export_chrome_trace(trace)
            kernels = kernels_from_chrome_trace(trace)
        result["kernel_launches"] = sum(k["count"] for k in kernels.values())
        result["kernel_total_ns"] = sum(k["total_ns"] for k in kernels.values())
        if args.kernels:
            with open(args.kernels, "w") as f:
                json.dump({"kernels": kernels}, f)

    line = json.dumps(result)
    print("TRAIN_RESULT " + line, flush=True)
    if args.result:
        with open(args.result, "w") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
