"""Run under `mpiexec -n 2` by tests/backend/test_distributed.py:
`python _distributed_worker.py CASE [MPI VENDOR]` (the vendor mpi4py must be using, if given).

Each process checks its own results against NumPy on every process's inputs (which every
process can rebuild from the seeds) and prints `rank R ok`; an assertion error fails the run.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import tracejit as tj
from tracejit import lax

P = 2


def inputs(shape=(3, 4), dtype=np.float64):
    return [np.random.default_rng(10 + r).standard_normal(shape).astype(dtype) for r in range(P)]


def spmd_jit(fun):
    return tj.jit(tj.distributed.spmd(fun, axis_name="i"))


def check_values(rank):
    xs = inputs()
    x = xs[rank]
    fun = spmd_jit(
        lambda x: (
            lax.psum(x, "i"),
            lax.pmean(x, "i"),
            lax.pmax(x, "i"),
            lax.pmin(x, "i"),
            lax.all_gather(x, "i"),
            lax.all_gather(x, "i", axis=1),
            lax.all_gather(x, "i", tiled=True),
            lax.psum_scatter(x[:2], "i"),
            lax.ppermute(x, "i", [(0, 1), (1, 0)]),
            lax.axis_index("i"),
        )
    )
    want = (
        xs[0] + xs[1],
        (xs[0] + xs[1]) / 2,
        np.maximum(xs[0], xs[1]),
        np.minimum(xs[0], xs[1]),
        np.stack(xs),
        np.stack(xs, axis=1),
        np.concatenate(xs),
        xs[0][rank] + xs[1][rank],
        xs[1 - rank],
        np.int32(rank),
    )
    for run in (fun, tj.distributed.spmd(fun.__wrapped__, axis_name="i")):
        for got, expected in zip(run(x), want):
            np.testing.assert_array_equal(got, expected)
    ir = str(tj.make_ir(tj.distributed.spmd(fun.__wrapped__, axis_name="i"))(x))
    assert "psum[axis_name='i', count=2]" in ir and "axis_index[axis_name='i'" in ir, ir
    # compiled: MPI called from C++ (backend_cpu/collectives.py), no Python callback
    executable = fun.lower(x).compile().executable
    assert executable.fallbacks() == [] and "tj_allreduce_start(ctx->mpi" in executable.source()


def check_native_dtypes(rank):
    """Compiled collectives on integer and float32 data, and a partial ppermute."""
    ints = [np.arange(6, dtype=np.int32).reshape(2, 3) * (r + 3) - 7 for r in range(P)]
    floats = inputs((2, 5), np.float32)
    bytes_ = [np.arange(4, dtype=np.uint8) + 100 * r for r in range(P)]
    fun = spmd_jit(
        lambda i, f, b: (
            lax.psum(i, "i"),
            lax.pmin(i, "i"),
            lax.pmax(f, "i"),
            lax.psum_scatter(f, "i"),
            lax.all_gather(b, "i"),
            lax.ppermute(f, "i", [(0, 1)]),
        )
    )
    got = fun(ints[rank], floats[rank], bytes_[rank])
    want = (
        ints[0] + ints[1],
        np.minimum(ints[0], ints[1]),
        np.maximum(floats[0], floats[1]),
        (floats[0] + floats[1])[rank],
        np.stack(bytes_),
        floats[0] if rank == 1 else np.zeros_like(floats[0]),
    )
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)
    assert fun.lower(ints[rank], floats[rank], bytes_[rank]).compile().executable.fallbacks() == []
    # inside a compiled loop body each all-reduce blocks where it stands (no overlap there)
    body = lambda c, x: (lax.psum(c * x, "i"), lax.pmax(c, "i"))
    scanned = spmd_jit(lambda f: lax.scan(body, f[0], f))
    carry, ys = scanned(floats[rank])
    cs, want_ys = [f[0] for f in floats], []
    for t in range(2):
        want_ys.append(np.maximum(cs[0], cs[1]))
        cs = [cs[0] * floats[0][t] + cs[1] * floats[1][t]] * P
    np.testing.assert_array_equal(carry, cs[rank])
    np.testing.assert_array_equal(ys, np.stack(want_ys))
    source = scanned.lower(floats[rank]).compile().executable.source()
    assert "tj_allreduce(ctx->mpi" in source and "ctx->fallback(" not in source


def check_bucket(rank):
    tree = {"a": inputs((3,))[rank], "b": inputs((2, 2))[rank], "c": inputs((5,), np.float32)[rank]}
    fun = tj.distributed.spmd(lambda t: lax.psum(t, "i"), axis_name="i")
    ir = str(tj.make_ir(fun)(tree))
    assert ir.count("psum[") == 2, ir  # one all-reduce per dtype, not one per leaf
    got = tj.jit(fun)(tree)
    for k, shape, dt in (
        ("a", (3,), np.float64),
        ("b", (2, 2), np.float64),
        ("c", (5,), np.float32),
    ):
        np.testing.assert_array_equal(got[k], sum(inputs(shape, dt)))


def check_vmap(rank):
    xs = inputs((4, 3))
    fun = spmd_jit(tj.vmap(lambda v: lax.all_gather(v, "i") * lax.psum(v, "i"), in_axes=1))
    want = np.stack([np.stack(xs)[:, :, j] * (xs[0] + xs[1])[:, j] for j in range(3)])
    np.testing.assert_allclose(fun(xs[rank]), want, rtol=1e-15)


def _local_loss(x, everyone, rank, np_like):
    """What process `rank` computes from its x and the gathered/averaged values."""
    return np_like.sum(np_like.sin(everyone) * (rank + 1.0)) + np_like.sum(x**3)


def total_loss(xs):
    """The single-process function the per-process gradients differentiate (pmap's
    convention: every process's output has cotangent 1, the total is their sum)."""
    mean = np.mean(np.stack(xs), axis=0)
    gathered = np.stack(xs)
    return sum(
        _local_loss(xs[r], mean, r, np)
        + np.sum(gathered[:, 0] ** 2) * (r + 1)
        + np.sum(np.cos(xs[1 - r])) * (r + 1)  # ppermute: the other process's x
        + np.sum((xs[0][r] + xs[1][r]) ** 2) * (r + 2)  # psum_scatter: row r of the sum
        for r in range(P)
    )


def check_grad(rank):
    xs = inputs((2, 3))

    def loss(x):
        mean = lax.pmean(x, "i")
        rank_scale = lax.axis_index("i").astype(x.dtype)
        gathered = lax.all_gather(x, "i")
        local = tj.numpy.sum(tj.numpy.sin(mean) * (rank_scale + 1.0)) + tj.numpy.sum(x**3)
        swapped = tj.numpy.sum(tj.numpy.cos(lax.ppermute(x, "i", [(0, 1), (1, 0)])))
        mine = tj.numpy.sum(lax.psum_scatter(x, "i") ** 2)
        return (
            local
            + (tj.numpy.sum(gathered[:, 0] ** 2) + swapped) * (rank_scale + 1.0)
            + mine * (rank_scale + 2.0)
        )

    got = spmd_jit(tj.grad(loss))(xs[rank])
    h, want = 1e-6, np.empty_like(xs[rank])
    for idx in np.ndindex(want.shape):
        up = [x.copy() for x in xs]
        down = [x.copy() for x in xs]
        up[rank][idx] += h
        down[rank][idx] -= h
        want[idx] = (total_loss(up) - total_loss(down)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # pmax's gradient goes to the process holding the maximum
    g = spmd_jit(tj.grad(lambda x: tj.numpy.sum(lax.pmax(x, "i"))))(xs[rank])
    np.testing.assert_array_equal(g, P * (xs[rank] == np.maximum(*xs)).astype(np.float64))


def check_mismatch(rank):
    x = np.ones(3 + rank)
    try:
        spmd_jit(lambda x: lax.psum(x, "i"))(x)
    except tj.errors.DistributedError as err:
        assert "differ between processes" in str(err) and "(3,)" in str(err), str(err)
    else:
        raise AssertionError("mismatched shapes were not detected")


def check_threads(rank):
    """The thread that ran the first collectives (this one) owns them: another thread's
    compiled or eager collective is a DistributedError before it reaches MPI, and this
    thread's next collectives still match the other process's."""
    import threading

    fun = spmd_jit(lambda x: lax.psum(x, "i"))
    x = inputs((3,))[rank]
    errors = []

    def other():
        for run in (fun, tj.distributed.spmd(fun.__wrapped__, "i")):
            try:
                run(x)
            except tj.errors.DistributedError as e:
                errors.append(str(e))

    thread = threading.Thread(target=other, name="other")
    thread.start()
    thread.join()
    assert len(errors) == 2, errors
    for message in errors:
        assert "from thread 'other'" in message and "from one thread" in message, message
    np.testing.assert_array_equal(fun(x), sum(inputs((3,))))


def check_train_mlp(rank):
    """examples/train_mlp.py: half a batch per process and pmean-ed gradients give the
    parameters of one process training on the whole batch."""
    import runpy
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "train_mlp.py"
    mlp = runpy.run_path(str(example))
    data = mlp["load_digits_split"]()
    quiet = lambda _: None
    two, steps, _ = mlp["train"](mlp["parse_args"](["--steps", "4", "--distributed"]), data, quiet)
    one, _, _ = mlp["train"](mlp["parse_args"](["--steps", "4"]), data, quiet)
    assert steps == 4 and sorted(one) == sorted(two) == ["b0", "b1", "b2", "w0", "w1", "w2"]
    initial = mlp["init_params"](tj.random.key(42), [64, mlp["HIDDEN"], mlp["HIDDEN"], 10])
    for k in one:  # float32 sums in another order: rounding, amplified a little by Adam
        np.testing.assert_allclose(two[k], one[k], rtol=1e-4, atol=1e-6, err_msg=k)
        assert np.abs(one[k] - initial[k]).max() > 1e-3, k  # it did train


def check_nccl(rank):
    """CUDA functions: NCCL on device buffers, one GPU per process (tests/gpu)."""
    import cupy

    cupy.cuda.Device(rank).use()
    xs = inputs((2, 3), np.float32)
    fun = tj.jit(
        tj.distributed.spmd(
            lambda x: (
                lax.psum(x, "i"),
                lax.pmax(x, "i"),
                lax.all_gather(x, "i"),
                lax.psum_scatter(x, "i"),
                lax.ppermute(x, "i", [(0, 1), (1, 0)]),
            ),
            axis_name="i",
        ),
        device="cuda",
    )
    want = (
        xs[0] + xs[1],
        np.maximum(xs[0], xs[1]),
        np.stack(xs),
        (xs[0] + xs[1])[rank],
        xs[1 - rank],
    )
    for got, expected in zip(fun(xs[rank]), want):
        np.testing.assert_array_equal(got.get(), expected)
    assert fun.lower(xs[rank]).compile().executable.fallbacks() == []


def main(case, vendor=None):
    tj.distributed.initialize()
    rank = tj.distributed.process_index()
    assert tj.distributed.process_count() == P
    if vendor is not None:
        from mpi4py import MPI

        assert MPI.get_vendor()[0] == vendor, MPI.get_vendor()
    if case == "collectives":
        for check in (
            check_values,
            check_native_dtypes,
            check_bucket,
            check_vmap,
            check_grad,
            check_mismatch,
            check_threads,
        ):
            check(rank)
    elif case == "nccl":
        check_nccl(rank)
    elif case == "train":
        check_train_mlp(rank)
    elif case == "raise":  # one process fails before the collective the other waits in
        if rank == 1:
            raise RuntimeError("process 1 failed on purpose")
        spmd_jit(lambda x: lax.psum(x, "i"))(np.ones(3))
    elif case == "hang":  # one process never reaches the collective
        if rank == 1:
            time.sleep(60)
        spmd_jit(lambda x: lax.psum(x, "i") * 2.0)(np.ones(3))  # the compiled path
    print(f"rank {rank} ok", flush=True)


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except BaseException as e:
        # Also into a file (TRACEJIT_TEST_ERRORS): mpiexec can end the job before it has
        # forwarded all of a failed process's stderr (seen in CI: a cut-off traceback).
        folder = os.environ.get("TRACEJIT_TEST_ERRORS")
        if folder:
            rank = (tj.distributed.launcher_env() or ("x",))[0]
            with open(os.path.join(folder, f"rank{rank}.txt"), "w") as f:
                f.write(f"{type(e).__name__}: {e}\n")
        raise
