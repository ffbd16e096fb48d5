"""The cost of calling a compiled function with tiny arguments: what a training loop pays
per step besides the work itself. tracejit beside JAX (and torch.compile when installed).

Each call shape is a jitted function of 8-element float32 arrays whose work is negligible:
one array; a dict of arrays (a pytree); a static argument; a Python float (a learning rate);
a Python int (a step counter). Per system and call shape: the median over `--reps` samples
of the mean time of `--calls` back-to-back calls (results ready: JAX's block_until_ready).

Run: `python benchmarks/call_overhead.py [--reps 7] [--calls 2000] [--no-jax] [--no-torch]`
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _programs():
    x = np.ones(8, np.float32)
    p = {"w": np.ones((4, 4), np.float32), "b": (np.ones(4, np.float32), np.ones(4, np.float32))}

    def tree(p, x):
        return p["w"][0] * x[:4] + p["b"][0]

    def scaled(x, training):
        return x * 2 if training else x

    return {  # name: (function, args, static argument names)
        "one array": (lambda x: x + 1, (x,), ()),
        "pytree": (tree, (p, x), ()),
        "static flag": (scaled, (x, True), ("training",)),
        "Python float": (lambda x, lr: x * lr, (x, 0.01), ()),
        "Python int": (lambda x, step: x + step, (x, 3), ()),
    }


def _time(fn, args, reps: int, calls: int, ready=lambda r: r) -> float:
    ready(fn(*args))  # compile
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(calls):
            r = fn(*args)
        ready(r)
        samples.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(samples)


def _systems(use_jax: bool, use_torch: bool) -> dict:
    import tracejit as tj

    systems = {"tracejit": (lambda f, s: tj.jit(f, static_argnames=s or None), lambda r: r)}
    if use_jax:
        try:
            import jax
        except ImportError:
            pass
        else:
            wrap = lambda f, s: jax.jit(f, static_argnames=s or None)
            systems["JAX"] = (wrap, lambda r: jax.block_until_ready(r))
    if use_torch:
        try:
            import torch
        except ImportError:
            pass
        else:
            systems["torch.compile"] = (lambda f, s: torch.compile(f), lambda r: r)
    return systems


def _torch_args(args):
    import torch

    convert = lambda a: torch.from_numpy(a) if isinstance(a, np.ndarray) else a
    return tuple(
        {
            k: (convert(v) if not isinstance(v, tuple) else tuple(map(convert, v)))
            for k, v in a.items()
        }
        if isinstance(a, dict)
        else convert(a)
        for a in args
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    systems = _systems(not a.no_jax, not a.no_torch)
    print("| call | " + " | ".join(f"{s} (us)" for s in systems) + " |")
    print("|---" * (len(systems) + 1) + "|")
    for name, (fn, args, static) in _programs().items():
        row = []
        for system, (wrap, ready) in systems.items():
            call_args = _torch_args(args) if system == "torch.compile" else args
            row.append(f"{_time(wrap(fn, static), call_args, a.reps, a.calls, ready):.2f}")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
