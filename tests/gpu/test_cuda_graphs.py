"""CUDA graphs (backend_cuda/graphs.py): replayed calls agree with plain launches.

Run on a GPU by benchmarks/gpu_check.sh and on the CPU under the CUDA emulator (the root
conftest.py), where a graph replays the recorded launches with the pointers they were
captured with, as CUDA does.
"""

from __future__ import annotations

import numpy as np
import pytest
from _cuda_programs import mlp_args, mlp_step, needs_gpu

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import graphs


def _chain(x, y):
    a = tnp.tanh(x) * y
    return tj.nn.softmax(a, axis=-1), a.sum(axis=0), tnp.cumsum(a, axis=1)


def _compiled(fun, *args):
    return tj.jit(fun, device="cuda").lower(*args).compile()


def _calls(compiled, fun, arg_sets):
    """Every call's outputs against the reference, also after later calls (outputs are fresh)."""
    kept = []
    for args in arg_sets:
        got = compiled(*args)
        kept.append((got, tj.jit(fun, device="numpy")(*args)))
    for got, want in kept:
        for g, w in zip(tj.tree_flatten(got)[0], tj.tree_flatten(want)[0]):
            assert g.block_until_ready() is g  # replayed outputs too (backend_cuda/results.py)
            np.testing.assert_allclose(tj.device_get(g), w, rtol=1e-5, atol=1e-6)


def _arg_sets(n, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(size=(6, 33)).astype(np.float32), rng.normal(size=(6, 33)).astype(np.float32))
        for _ in range(n)
    ]


@needs_gpu
def test_always_replays_a_graph_and_every_call_keeps_its_outputs(monkeypatch):
    monkeypatch.setattr(tj.config, "cuda_graphs", "always")
    compiled = _compiled(_chain, *_arg_sets(1)[0])
    _calls(compiled, _chain, _arg_sets(graphs.WARMUP + 4))
    assert compiled.executable.graphs.mode == "graph"
    assert compiled.executable.graphs.graph is not None


@needs_gpu
def test_auto_measures_then_settles_and_stays_correct(monkeypatch):
    monkeypatch.setattr(tj.config, "cuda_graphs", "auto")
    compiled = _compiled(_chain, *_arg_sets(1)[0])
    _calls(compiled, _chain, _arg_sets(graphs.WARMUP + 1 + 2 * graphs.TRIALS + 2, seed=1))
    assert compiled.executable.graphs.mode in ("graph", "plain")


@needs_gpu
def test_mlp_training_step_with_cublas_stays_plain_and_exact(monkeypatch):
    # CuPy refuses cuBLAS calls during stream capture: a function with a matmul never captures
    monkeypatch.setattr(tj.config, "cuda_graphs", "always")
    args = mlp_args(batch=32, n_in=12, hidden=16, n_out=5, dtype=np.float32)
    compiled = _compiled(mlp_step, *args)
    assert compiled.executable.graphs is None
    first = compiled(*args)  # called as the jitted function: pytrees in and out
    for _ in range(graphs.WARMUP + 2):
        again = compiled(*args)
    want = tj.jit(mlp_step, device="numpy")(*args)
    flat = (tj.tree_flatten(t)[0] for t in (first, again, want))
    for f, a, w in zip(*flat, strict=True):
        np.testing.assert_array_equal(tj.device_get(f), tj.device_get(a))
        np.testing.assert_allclose(tj.device_get(f), w, rtol=1e-4, atol=1e-5)


@needs_gpu
def test_cublas_refuses_stream_capture_as_cupy_does():
    # the emulator must refuse what CuPy refuses, or graph tests pass here and fail on a GPU
    import cupy

    a = cupy.zeros((4, 3), np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            with pytest.raises(NotImplementedError, match="cuBLAS"):
                cupy.matmul(a, a.T)
        finally:
            stream.end_capture()


@needs_gpu
def test_a_failed_capture_falls_back_to_plain_launches(monkeypatch):
    import cupy

    class Refusing(cupy.cuda.Stream):
        def begin_capture(self, mode=None):
            raise RuntimeError("capture refused by the test")

    monkeypatch.setattr(tj.config, "cuda_graphs", "always")
    monkeypatch.setattr(cupy.cuda, "Stream", Refusing)
    compiled = _compiled(_chain, *_arg_sets(1)[0])
    _calls(compiled, _chain, _arg_sets(graphs.WARMUP + 3, seed=2))
    assert compiled.executable.graphs.mode == "plain"


def test_cuda_graphs_setting_is_validated():
    with pytest.raises(ValueError, match="cuda_graphs must be one of"):
        tj.config.cuda_graphs = "sometimes"


@needs_gpu
def test_large_functions_and_single_launches_never_use_graphs(monkeypatch):
    monkeypatch.setattr(graphs, "MAX_BYTES", 1024)  # the test's buffers are larger
    assert _compiled(_chain, *_arg_sets(1)[0]).executable.graphs is None
    monkeypatch.undo()
    x = np.ones(8, np.float32)
    assert _compiled(lambda a: a * 2.0, x).executable.graphs is None  # one kernel
    assert _compiled(_chain, *_arg_sets(1)[0]).executable.graphs is not None
