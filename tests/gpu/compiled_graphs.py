#!/usr/bin/env python3
"""torch.compile(mode="reduce-overhead"): a model that PyTorch runs as CUDA graph replays (docs/validation.md).

On the H100 (issue #12) gprof-run showed this model's warm-up kernels and none of its replays. gpu-check runs it
under gprof-run in both graph modes and counts what the trace holds against what this script did:

  compiled_graphs.py [--replays N] [--warmup N]

Inference only (one captured graph per step), fixed seeds and shapes. Prints one line
"COMPILED_RESULT {json}": replays (steps after warm-up, each one cudaGraphLaunch of the same graph), warmup,
torch version. Exit 77 when PyTorch, a CUDA device or torch.compile's backend is missing.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replays", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5, help="steps before the counted replays (compile, capture)")
    args = ap.parse_args()
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        print(f"compiled_graphs.py: no PyTorch: {e}", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("compiled_graphs.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
        torch.nn.Linear(1024, 256)).cuda().eval()
    x = torch.randn(64, 512, device="cuda")
    try:
        step = torch.compile(model, mode="reduce-overhead")
        with torch.no_grad():
            for _ in range(args.warmup):
                step(x)
            torch.cuda.synchronize()
            for _ in range(args.replays):
                y = step(x)
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - no Triton / compiler on this machine
        print(f"compiled_graphs.py: torch.compile failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 77
    print("COMPILED_RESULT " + json.dumps({"replays": args.replays, "warmup": args.warmup, "torch": torch.__version__,
                                           "checksum": float(y.float().sum())}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
