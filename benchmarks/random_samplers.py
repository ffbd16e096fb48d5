"""Random samplers on the CPU: tracejit (jit, cpu) against JAX, first call and steady state.

tracejit's float samplers compute their elementary functions from correctly rounded
operations (tracejit/_portable_math.py) so that a key gives the same bits eagerly, compiled and
on a GPU; this measures what that costs. Each row: the first call of a fresh `jit` (a new
cache directory: a cold compile) and the median of several calls after it, 2^20 draws (gamma
2^16). Run pinned to one core for one-thread numbers (JAX's runtime is told to use one thread):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 taskset -c 0 \\
        python benchmarks/random_samplers.py [--reps 7] [--no-jax]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec

os.environ.setdefault("TRACEJIT_CACHE_DIR", tempfile.mkdtemp(prefix="tj-random-bench-"))
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

N, N_GAMMA = 1 << 20, 1 << 16


def _cases(random, np):
    f32, f64 = np.float32, np.float64
    return [
        ("normal f32", lambda k: random.normal(k, (N,), f32)),
        ("normal f64", lambda k: random.normal(k, (N,), f64)),
        ("gumbel f32", lambda k: random.gumbel(k, (N,), f32)),
        ("gamma(2.5) f32, 2^16", lambda k: random.gamma(k, 2.5, (N_GAMMA,), f32)),
        ("truncated_normal(-1, 2) f32", lambda k: random.truncated_normal(k, -1.0, 2.0, (N,), f32)),
    ]


def _time(fn, key, reps, ready):
    t0 = time.perf_counter()
    ready(fn(key))
    first = time.perf_counter() - t0
    steady = []
    for _ in range(reps):
        t0 = time.perf_counter()
        ready(fn(key))
        steady.append(time.perf_counter() - t0)
    return first, statistics.median(steady)


def _run(system: str, reps: int) -> dict:
    """{name: (first call s, steady s)} of `system` ("tracejit" or "jax") in this process."""
    import numpy as np

    if system == "tracejit":
        import tracejit as tj

        return {name: _time(tj.jit(fn), tj.random.PRNGKey(0), reps, lambda r: r)
                for name, fn in _cases(tj.random, np)}  # fmt: skip
    import jax

    out = {}  # float32 rows in JAX's default mode, then float64 ones in x64
    for name, fn in sorted(_cases(jax.random, np), key=lambda case: "f64" in case[0]):
        jax.config.update("jax_enable_x64", "f64" in name)
        out[name] = _time(jax.jit(fn), jax.random.PRNGKey(0), reps, jax.block_until_ready)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--system", help=argparse.SUPPRESS)  # the worker: one system, JSON out
    args = ap.parse_args(argv)
    if args.system:
        print(json.dumps(_run(args.system, args.reps)))
        return
    # each system in its own process (JAX after tracejit's samplers in one process: 2x slower)
    systems = ["tracejit"] + ([] if args.no_jax or find_spec("jax") is None else ["jax"])
    results = {}
    for system in systems:
        cmd = [sys.executable, __file__, "--system", system, "--reps", str(args.reps)]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        results[system] = json.loads(done.stdout.strip().splitlines()[-1])
    print(" | ".join(["sampler"] + [f"{s} 1st call (s) | {s} (ms)" for s in systems]))
    for name in results["tracejit"]:
        cells = [f"{results[s][name][0]:.2f} | {1e3 * results[s][name][1]:.2f}" for s in systems]
        print(f"{name} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
