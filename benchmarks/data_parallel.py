"""Data-parallel training step over MPI: step time on 1 and 2 processes, and how much of the
all-reduce hides behind the backward pass; PyTorch DDP (Gloo) on the same work beside it.

    python benchmarks/data_parallel.py                    # one process (no MPI)
    mpiexec -n 2 python benchmarks/data_parallel.py       # two processes, half a batch each
    mpiexec -n 2 python benchmarks/data_parallel.py --torch   # the same with PyTorch DDP
    mpiexec -n 2 python benchmarks/data_parallel.py --compare # both, interleaved per round

The step is `jit(spmd(value_and_grad + pmean))` on a global batch of 256 (each process takes
its share) for the MLP 784-512-512-10 of W3, the 64-64-64-10 one of examples/train_mlp.py,
and a larger 1024-2048-2048-10. Columns: `step` (ms, median over `--reps`), `compute` (the
same value_and_grad without the pmean), `allreduce` (one pmean of the gradients alone), and
`hidden`: the part of the all-reduce the step does not pay, (compute + allreduce - step) /
allreduce, clipped to [0, 1]. The gradients are reduced in buckets (a first of 1 MiB, then
up to 25 MiB, as DDP's), each started (from C++, a helper thread testing it) as soon as the
backward has computed it. PyTorch's row: DistributedDataParallel over Gloo (the same bucket
sizes, overlapped with the backward), the
same MLP (Linear/ReLU, cross-entropy), forward + backward per step, no optimizer step on
either side. Each process runs with 1 thread (OMP_NUM_THREADS=1 is set here), so 2
processes use 2 cores. Prints one row per model from process 0. Every call starts together
on all processes (a barrier), and the functions measured in one run take turns round by
round, so load that comes and goes on a shared machine hits them alike; `--compare` runs
both libraries in the same processes that way and prints the median of the per-round ratio
of their step times, the comparison least moved by such load.
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


def interleaved_ms(funs: dict, reps: int) -> dict[str, list[float]]:
    """Each function's times (ms) over `reps` rounds, one call of each per round, every
    call started together on all processes: load that drifts during the run hits all alike."""
    for fun, args in funs.values():
        fun(*args)  # compile, build buckets
    times: dict[str, list[float]] = {name: [] for name in funs}
    for _ in range(reps):
        for name, (fun, args) in funs.items():
            barrier()
            start = time.perf_counter()
            fun(*args)
            times[name].append(1e3 * (time.perf_counter() - start))
    return times


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


def row(lib: str, name: str, n: int, times: dict[str, list[float]]) -> str:
    step_ms, compute_ms, reduce_ms = (float(np.median(times[k])) for k in KINDS)
    hidden = 0.0 if n == 1 else (compute_ms + reduce_ms - step_ms) / reduce_ms
    return (
        f"{lib:8s} {name:26s} processes {n}  step {step_ms:7.2f} ms  compute {compute_ms:7.2f} "
        f"ms  allreduce {reduce_ms:6.2f} ms  hidden {min(max(hidden, 0.0), 1.0):4.0%}"
    )


KINDS = ("step", "compute", "allreduce")


def tracejit_funs(sizes, rank: int, n: int) -> dict:
    params, x, labels = data(sizes, rank, n)
    y = np.eye(sizes[-1], dtype=np.float32)[labels]
    train = tj.jit(tj.distributed.spmd(step, axis_name="batch"))
    compute = tj.jit(tj.value_and_grad(loss))
    reduce = tj.jit(tj.distributed.spmd(lambda g: tj.lax.pmean(g, "batch"), "batch"))
    return {
        "step": (train, (params, x, y)),
        "compute": (compute, (params, x, y)),
        "allreduce": (reduce, (params,)),
    }


def torch_step(model, x, labels) -> None:
    import torch

    model.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), labels).backward()


def torch_reduce(flat, n: int) -> None:
    import torch.distributed as dist

    if n > 1:
        dist.all_reduce(flat)
    flat.div_(n)


def torch_init(n: int, rank: int) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    if n > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("gloo", rank=rank, world_size=n)


def torch_funs(sizes, rank: int, n: int) -> dict:
    import torch

    params, x, labels = data(sizes, rank, n)
    layers = []
    for i in range(3):
        linear = torch.nn.Linear(sizes[i], sizes[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(params[f"w{i}"].T.copy()))
            linear.bias.zero_()
        layers += [linear, torch.nn.ReLU()] if i < 2 else [linear]
    local = torch.nn.Sequential(*layers)
    model = torch.nn.parallel.DistributedDataParallel(local) if n > 1 else local
    xt, yt = torch.from_numpy(x), torch.from_numpy(labels)
    flat = torch.zeros(sum(p.numel() for p in local.parameters()))
    return {
        "step": (torch_step, (model, xt, yt)),
        "compute": (torch_step, (local, xt, yt)),
        "allreduce": (torch_reduce, (flat, n)),
    }


def run(libs: list[str], reps: int) -> None:
    """Each model: every library's step, compute and allreduce, interleaved round by round;
    with both libraries, the median of the per-round ratio of their steps too."""
    n, rank = tj.distributed.process_count(), tj.distributed.process_index()
    builders = {"tracejit": tracejit_funs, "torch": torch_funs}
    if "torch" in libs:
        torch_init(n, rank)
    for name, sizes in MODELS.items():
        funs = {(lib, k): f for lib in libs for k, f in builders[lib](sizes, rank, n).items()}
        times = interleaved_ms(funs, reps)
        if rank != 0:
            continue
        for lib in libs:
            print(row(lib, name, n, {k: times[lib, k] for k in KINDS}), flush=True)
        if len(libs) == 2:
            ratios = np.divide(times["tracejit", "step"], times["torch", "step"])
            print(
                f"ratio    {name:26s} processes {n}  tracejit/torch step, median of "
                f"{reps} rounds: {np.median(ratios):.2f}",
                flush=True,
            )
    if "torch" in libs and n > 1:
        import torch.distributed as dist

        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--torch", action="store_true", help="PyTorch DDP (Gloo) instead")
    parser.add_argument(
        "--compare", action="store_true", help="tracejit and PyTorch DDP, interleaved"
    )
    args = parser.parse_args()
    if tj.distributed.launcher_env() is not None:
        tj.distributed.initialize()
    libs = ["tracejit", "torch"] if args.compare else ["torch"] if args.torch else ["tracejit"]
    run(libs, args.reps)


if __name__ == "__main__":
    main()
