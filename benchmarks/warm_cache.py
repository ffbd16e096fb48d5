"""First call of the MLP training step of examples/train_mlp.py in a fresh process: with an
empty disk cache (cold) and with the cache the cold run left (warm).

    python benchmarks/warm_cache.py [--runs 5]

Each run is a new interpreter (`subprocess`, never fork), so nothing is cached in memory.
Prints the first-call time (tracing to the first result, the function's arguments already
built; wall clock and this process's CPU time, which a busy machine disturbs less) and the
import time, median over the runs; the warm runs share one cache directory.
Bytecode caching is left on (PYTHONDONTWRITEBYTECODE is dropped for the children), as for an
installed package: otherwise every lazy import on the first call recompiles its module.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]  # this checkout's tracejit, and its examples
t0 = time.perf_counter()
import numpy as np
import tracejit as tj
import train_mlp as m
t1 = time.perf_counter()
params = m.init_params(tj.random.key(42), [64, m.HIDDEN, m.HIDDEN, 10])
rng = np.random.default_rng(0)
x = rng.random((m.BATCH, 64), dtype=np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, m.BATCH)]
step_fn = tj.jit(tj.value_and_grad(m.loss))
t2, c2 = time.perf_counter(), time.process_time()
value, grads = step_fn(params, x, y)
t3, c3 = time.perf_counter(), time.process_time()
print(json.dumps({"import_s": t1 - t0, "first_call_s": t3 - t2, "first_call_cpu_s": c3 - c2,
                  "loss": float(value),
                  **{k: v for k, v in tj.cache_info().items() if k in ("hits", "misses")}}))
"""


def run_once(cache_dir: str) -> dict:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, TRACEJIT_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(root / "examples")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as shared:
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as empty:
                cold.append(run_once(empty))
            if i == 0:
                run_once(shared)  # fill the shared cache
            warm.append(run_once(shared))
    assert all(r["misses"] == 0 for r in warm), warm
    assert len({r["loss"] for r in cold + warm}) == 1, "cold and warm results differ"
    for name, rows in (("cold", cold), ("warm", warm)):
        first = statistics.median(r["first_call_s"] for r in rows)
        cpu = statistics.median(r["first_call_cpu_s"] for r in rows)
        imp = statistics.median(r["import_s"] for r in rows)
        print(
            f"{name}: first call {first * 1e3:7.1f} ms wall, {cpu * 1e3:7.1f} ms CPU of this "
            f"process (the C++ compiler's is not counted)   import {imp * 1e3:6.1f} ms"
        )


if __name__ == "__main__":
    main()
