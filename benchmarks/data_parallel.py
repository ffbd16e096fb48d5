"""Data-parallel training step over MPI: step time on 1 and 2 processes, and how much of the
all-reduce hides behind the backward pass; PyTorch DDP (Gloo) on the same work beside it.

    python benchmarks/data_parallel.py                    # one process (no MPI)
    mpiexec -n 2 python benchmarks/data_parallel.py       # two processes, half a batch each
    mpiexec -n 2 python benchmarks/data_parallel.py --torch   # the same with PyTorch DDP

The step is `jit(spmd(value_and_grad + pmean))` on a global batch of 256 (each process takes
its share) for the MLP 784-512-512-10 of W3, the 64-64-64-10 one of examples/train_mlp.py,
and a larger 1024-2048-2048-10. Columns: `step` (ms, median over `--reps`), `compute` (the
same value_and_grad without the pmean), `allreduce` (one pmean of the gradients alone), and
`hidden`: the part of the all-reduce the step does not pay, (compute + allreduce - step) /
allreduce, clipped to [0, 1]. The gradients are reduced in ~1 MiB buckets, each started
(from C++, a helper thread testing it) as soon as the backward has computed it. PyTorch's
row: DistributedDataParallel over Gloo (25 MiB buckets, overlapped with the backward), the
same MLP (Linear/ReLU, cross-entropy), forward + backward per step, no optimizer step on
either side. Each process runs with 1 thread (OMP_NUM_THREADS=1 is set here), so 2
processes use 2 cores. Prints one row per model from process 0.
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

MODELS = {
    "W3 784-512-512-10": (784, 512, 512, 10),
    "train_mlp 64-64-64-10": (64, 64, 64, 10),
    "large 1024-2048-2048-10": (1024, 2048, 2048, 10),
}
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


def barrier() -> None:
    tj.distributed.comm().allreduce(np.zeros(1), "sum")


def median_ms(fun, args, reps: int) -> float:
    fun(*args)  # compile
    times = []
    for _ in range(reps):
        barrier()  # start together
        start = time.perf_counter()
        fun(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def data(sizes, rank: int, n: int):
    rng = np.random.default_rng(0)
    params = {}
    for i in range(3):
        params[f"w{i}"] = (rng.standard_normal(sizes[i : i + 2]) * 0.05).astype(np.float32)
        params[f"b{i}"] = np.zeros(sizes[i + 1], np.float32)
    x = rng.standard_normal((BATCH, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], BATCH)
    share = slice(rank * BATCH // n, (rank + 1) * BATCH // n)
    return params, x[share], labels[share]


def row(name: str, n: int, step_ms: float, compute_ms: float, reduce_ms: float) -> str:
    hidden = 0.0 if n == 1 else (compute_ms + reduce_ms - step_ms) / reduce_ms
    return (
        f"{name:26s} processes {n}  step {step_ms:7.2f} ms  compute {compute_ms:7.2f} ms  "
        f"allreduce {reduce_ms:6.2f} ms  hidden {min(max(hidden, 0.0), 1.0):4.0%}"
    )


def run_tracejit(reps: int) -> None:
    n, rank = tj.distributed.process_count(), tj.distributed.process_index()
    for name, sizes in MODELS.items():
        params, x, labels = data(sizes, rank, n)
        y = np.eye(sizes[-1], dtype=np.float32)[labels]
        train = tj.jit(tj.distributed.spmd(step, axis_name="batch"))
        compute = tj.jit(tj.value_and_grad(loss))
        reduce = tj.jit(tj.distributed.spmd(lambda g: tj.lax.pmean(g, "batch"), "batch"))
        step_ms = median_ms(train, (params, x, y), reps)
        compute_ms = median_ms(compute, (params, x, y), reps)
        reduce_ms = median_ms(reduce, (params,), reps)
        if rank == 0:
            print("tracejit " + row(name, n, step_ms, compute_ms, reduce_ms), flush=True)


def torch_step(model, x, labels) -> None:
    import torch

    model.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), labels).backward()


def torch_reduce(flat, n: int) -> None:
    import torch.distributed as dist

    if n > 1:
        dist.all_reduce(flat)
    flat.div_(n)


def run_torch(reps: int) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    n, rank = tj.distributed.process_count(), tj.distributed.process_index()
    if n > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("gloo", rank=rank, world_size=n)
    for name, sizes in MODELS.items():
        params, x, labels = data(sizes, rank, n)
        layers = []
        for i in range(3):
            linear = torch.nn.Linear(sizes[i], sizes[i + 1])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(params[f"w{i}"].T.copy()))
                linear.bias.zero_()
            layers += [linear, torch.nn.ReLU()] if i < 2 else [linear]
        model = torch.nn.Sequential(*layers)
        local = model
        if n > 1:
            model = torch.nn.parallel.DistributedDataParallel(model)
        xt, yt = torch.from_numpy(x), torch.from_numpy(labels)
        flat = torch.zeros(sum(p.numel() for p in local.parameters()))
        step_ms = median_ms(torch_step, (model, xt, yt), reps)
        compute_ms = median_ms(torch_step, (local, xt, yt), reps)
        reduce_ms = median_ms(torch_reduce, (flat, n), reps)
        if rank == 0:
            print("torch    " + row(name, n, step_ms, compute_ms, reduce_ms), flush=True)
    if n > 1:
        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--torch", action="store_true", help="PyTorch DDP (Gloo) instead")
    args = parser.parse_args()
    if tj.distributed.launcher_env() is not None:
        tj.distributed.initialize()
    (run_torch if args.torch else run_tracejit)(args.reps)


if __name__ == "__main__":
    main()
