"""tracejit.distributed and the collectives of tracejit.lax.parallel.

One process (always): the world of one process, the IR, the errors. Two processes (when
mpi4py and mpiexec are installed: `pip install -e ".[distributed]"`): tests/_distributed_worker.py
under `mpiexec -n 2` (a subprocess, never a fork) checks every collective against NumPy,
gradients against central differences of the single-process function, vmap, and the
mismatched-shape error; the training example against a one-process run; and a process that
fails or hangs makes the job fail within the timeout instead of hanging.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from _mpi_launch import WORKER, launch, open_mpi

import tracejit as tj
from tracejit import lax
from tracejit.distributed import threads

# ---------------------------------------------------------------- one process


def test_one_process_world_is_the_identity():
    x = np.arange(6.0).reshape(2, 3)
    fun = tj.distributed.spmd(
        lambda x: (
            lax.psum(x, "i"),
            lax.pmean(x, "i"),
            lax.all_gather(x, "i"),
            lax.axis_index("i"),
        ),
        axis_name="i",
    )
    for run in (fun, tj.jit(fun)):
        s, m, g, i = run(x)
        np.testing.assert_array_equal(s, x)
        np.testing.assert_array_equal(m, x)
        np.testing.assert_array_equal(g, x[None])
        assert i == 0
    assert tj.distributed.process_index() == 0 and tj.distributed.process_count() == 1
    # compiled to C++ copies over one process: no NumPy callback (backend_cpu/collectives.py)
    assert tj.jit(fun).lower(x).compile().executable.fallbacks() == []


def test_collectives_are_printed_in_the_ir_and_not_folded():
    fun = tj.distributed.spmd(lambda x: lax.psum(x * 0.0 + 1.0, "d") + lax.axis_index("d"), "d")
    ir = str(tj.jit(fun).lower(np.ones(3)).as_text())
    assert "psum[axis_name='d', count=1]" in ir and "axis_index[axis_name='d'" in ir, ir


def test_unbound_axis_name_is_a_clear_error():
    with pytest.raises(tj.errors.DistributedError, match="unbound axis name 'batch'"):
        tj.jit(lambda x: lax.psum(x, "batch"))(np.ones(2))
    with pytest.raises(tj.errors.DistributedError, match="axis_name must be"):
        tj.distributed.spmd(lambda x: x, axis_name="")


def test_a_second_axis_name_is_a_clear_error():
    inner = tj.distributed.spmd(lambda x: lax.psum(x, "j"), axis_name="j")
    outer = tj.distributed.spmd(lambda x: inner(x) + lax.psum(x, "i"), axis_name="i")
    for run in (outer, tj.jit(outer)):
        with pytest.raises(tj.errors.DistributedError, match="axis 'j' inside axis 'i': one"):
            run(np.ones(2))
    same = tj.distributed.spmd(lambda x: lax.psum(x, "i"), axis_name="i")
    np.testing.assert_array_equal(tj.distributed.spmd(same, "i")(np.ones(2)), np.ones(2))


def test_collectives_belong_to_the_first_thread_that_runs_one_while_it_lives():
    owner = threads.Owner()
    owner.check("psum", size=1)  # one process: any thread, and nobody owns anything
    failures = []

    def run(size):
        try:
            owner.check("psum", size=size)
        except tj.errors.DistributedError as e:
            failures.append(str(e))

    first = threading.Thread(target=run, args=(2,), name="first")
    first.start()
    first.join()  # `first` owned the collectives, and ended
    owner.check("psum", size=2)  # so this thread may take them over
    for size in (1, 2):
        second = threading.Thread(target=run, args=(size,), name="second")
        second.start()
        second.join()
    assert len(failures) == 1 and "from thread 'second'" in failures[0], failures


def test_bad_operands_are_named_errors():
    spmd = tj.distributed.spmd
    with pytest.raises(tj.errors.UnsupportedError, match="psum needs float or integer"):
        spmd(lambda x: lax.psum(x, "i"), "i")(np.ones(2, bool))
    with pytest.raises(tj.errors.DistributedError, match="one entry per process"):
        spmd(lambda x: lax.psum_scatter(x, "i"), "i")(np.ones((3, 2)))
    with pytest.raises(tj.errors.DistributedError, match="not a partial permutation"):
        spmd(lambda x: lax.ppermute(x, "i", [(0, 1)]), "i")(np.ones(2))


# ---------------------------------------------------------------- two processes


def test_collectives_grads_vmap_and_shape_mismatch_on_two_processes():
    done = launch([WORKER, "collectives"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout, done.stdout  # interleaved


def test_collectives_on_open_mpi_where_installed_beside_the_default_mpi():
    # Open MPI's handles are pointers to its global objects, MPICH's are ints: the compiled
    # collectives take either (tracejit/distributed/native.py)
    found = open_mpi()
    if found is None:
        pytest.skip(
            "no Open MPI (ompi_info) installed, or an mpi4py without its Open MPI extension: "
            "apt-get install openmpi-bin, and the mpi4py wheel"
        )
    done = launch([WORKER, "collectives", "Open MPI"], mpi=found)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout, done.stdout


def test_train_mlp_distributed_matches_one_process():
    done = launch([WORKER, "train"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout, done.stdout  # interleaved


@pytest.mark.parametrize(
    ("case", "deadline", "message"),
    [
        # no short deadline here: a slow start of process 1 must not time process 0 out first
        ("raise", "100", "process 1 failed on purpose"),
        ("hang", "2", "waited more than 2 s for the others"),
    ],
)
def test_a_failed_process_fails_the_job_instead_of_hanging(case, deadline, message, tmp_path):
    # subprocess.run's timeout fails the test (TimeoutExpired) if the job hangs instead
    env = {"TRACEJIT_DISTRIBUTED_TIMEOUT": deadline, "TRACEJIT_TEST_ERRORS": str(tmp_path)}
    done = launch([WORKER, case], timeout=110, **env)
    assert done.returncode != 0, done.stdout
    # each failed process's error, as it wrote it (mpiexec may cut the forwarded stderr)
    written = "".join(p.read_text() for p in sorted(tmp_path.glob("rank*.txt")))
    assert message in done.stderr + written, done.stderr[-3000:]
    assert "rank 0 ok" not in done.stdout


def test_gradients_are_reduced_in_buckets_started_during_the_backward(monkeypatch):
    for limit in ("FIRST_BUCKET_BYTES", "BUCKET_BYTES"):  # one weight per bucket
        monkeypatch.setattr(lax.parallel, limit, 16 * 16 * 8)
    rng = np.random.default_rng(0)
    params = {f"w{i}": rng.standard_normal(s) for i, s in enumerate([(8, 16), (16, 16), (16, 4)])}
    x = rng.standard_normal((5, 8))

    def loss(p, x):
        h = tj.numpy.tanh(x @ p["w0"])
        return tj.numpy.sum(tj.numpy.tanh(h @ p["w1"]) @ p["w2"])

    step = tj.distributed.spmd(lambda p, x: lax.pmean(tj.grad(loss)(p, x), "i"), "i")
    ir = str(tj.make_ir(step)(params, x))
    # one collective per bucket, filled in the order the backward computes the gradients
    sizes = [line.split("psum")[0] for line in ir.splitlines() if "psum[" in line]
    assert len(sizes) == 3 and "f64[16,4]" in sizes[0] and "f64[8,16]" in sizes[2], ir
    executable = tj.jit(step).lower(params, x).compile().executable
    kinds = [getattr(s, "prim", type(s).__name__) for s in executable.schedule.steps]
    first_psum = kinds.index("psum")
    assert "Matmul" in kinds[first_psum:], kinds  # the backward goes on after it starts
    got = tj.jit(step)(params, x)
    want = tj.grad(loss)(params, x)  # eager: the reference interpreter, no collective
    for k in params:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-13, atol=1e-14)


def test_one_process_collectives_compile_without_a_host_round_trip(device):
    # CPU: C++ copies (backend_cpu/collectives.py); CUDA: device copies of the NCCL steps
    # (tracejit/distributed/nccl.py), never NumPy on the host
    x = np.arange(6.0).reshape(1, 6)
    fun = tj.distributed.spmd(
        lambda x: (
            lax.pmax(x, "i"),
            lax.psum_scatter(x, "i"),
            lax.ppermute(x, "i", [(0, 0)]),
            lax.ppermute(x, "i", []),
            lax.axis_index("i"),
        ),
        axis_name="i",
    )
    jitted = tj.jit(fun, device=device)
    got = [g.get() if hasattr(g, "get") else g for g in jitted(x)]
    for g, want in zip(got, (x, x[0], x, np.zeros_like(x), np.int32(0))):
        np.testing.assert_array_equal(g, want)
    assert jitted.lower(x).compile().executable.fallbacks() == []
