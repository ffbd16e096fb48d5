"""Data-parallel training step over MPI: the W3 MLP's step time on 1 and 2 processes.

    python benchmarks/data_parallel.py                    # one process (no MPI)
    mpiexec -n 2 python benchmarks/data_parallel.py       # two processes, half a batch each

The step is `jit(spmd(value_and_grad + pmean))` on a global batch of 256 (each process takes
its share), the MLP 784-512-512-10 of W3 and the 64-64-64-10 one of examples/train_mlp.py;
`allreduce` is one `pmean` of the flattened gradient alone, i.e. the communication a step
contains (nothing overlaps it with the backward pass yet: the hidden fraction is 0). Each
process runs with 1 thread (OMP_NUM_THREADS=1 is set here), so 2 processes use 2 cores.
Prints one row per model from process 0; times are medians over `--reps` steps.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

MODELS = {"W3 784-512-512-10": (784, 512, 512, 10), "train_mlp 64-64-64-10": (64, 64, 64, 10)}
BATCH = 256


def loss(params, x, y):
    h = x
    for i in range(3):
        h = h @ params[f"w{i}"] + params[f"b{i}"]
        h = tj.nn.relu(h) if i < 2 else h
    return -tnp.mean(tnp.sum(y * tj.nn.log_softmax(h), axis=-1))


def step(params, x, y):
    value, grads = tj.value_and_grad(loss)(params, x, y)
    return tj.lax.pmean((value, grads), axis_name="batch")


def median_ms(fun, args, reps: int) -> float:
    fun(*args)  # compile
    times = []
    for _ in range(reps):
        tj.distributed.comm().allreduce(np.zeros(1), "sum")  # start together
        start = time.perf_counter()
        fun(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    if tj.distributed.launcher_env() is not None:
        tj.distributed.initialize()
    n, rank = tj.distributed.process_count(), tj.distributed.process_index()
    rng = np.random.default_rng(0)
    for name, sizes in MODELS.items():
        params = {}
        for i in range(3):
            params[f"w{i}"] = (rng.standard_normal(sizes[i : i + 2]) * 0.05).astype(np.float32)
            params[f"b{i}"] = np.zeros(sizes[i + 1], np.float32)
        x = rng.standard_normal((BATCH, sizes[0])).astype(np.float32)
        y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], BATCH)]
        share = slice(rank * BATCH // n, (rank + 1) * BATCH // n)
        train = tj.jit(tj.distributed.spmd(step, axis_name="batch"))
        reduce = tj.jit(tj.distributed.spmd(lambda g: tj.lax.pmean(g, "batch"), "batch"))
        step_ms = median_ms(train, (params, x[share], y[share]), args.reps)
        reduce_ms = median_ms(reduce, (params,), args.reps)
        floats = sum(p.size for p in params.values())
        if rank == 0:
            print(
                f"{name:24s} processes {n}  step {step_ms:7.2f} ms  allreduce of "
                f"{floats} floats {reduce_ms:6.2f} ms ({reduce_ms / step_ms:.0%} of the step)"
            )


if __name__ == "__main__":
    main()
