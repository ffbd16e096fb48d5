"""A scan on CUDA replayed as one CUDA graph of the whole loop (backend_cuda/loop_graphs.py):
values equal the NumPy reference interpreter's, and a replay runs no Python per iteration.
Runs on a GPU and under the CUDA emulator (root conftest.py)."""

from __future__ import annotations

import numpy as np
from _cuda_programs import needs_gpu

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend_cuda import graphs
from tracejit.backend_cuda.loops import LoopStep


def _rnn(h0, xs, w):
    def step(h, x):
        h = tnp.tanh(h * w + x)
        return h, (h * h).sum()

    return lax.scan(step, h0, xs, reverse=True)


def _args(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=8), rng.normal(size=(6, 8)), np.full(8, 0.7)


def _loop_step(compiled) -> LoopStep:
    (step,) = [s for s in compiled.executable.steps if isinstance(s, LoopStep)]
    return step


def _check(got, args):
    want = tj.jit(_rnn, device="numpy")(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(tj.device_get(g), w, rtol=1e-12, atol=1e-14)


@needs_gpu
def test_a_scan_replays_as_one_graph_without_python_per_iteration(monkeypatch):
    monkeypatch.setattr(tj.config, "cuda_graphs", "always")
    compiled = tj.jit(_rnn, device="cuda").lower(*_args(0)).compile()
    loop = _loop_step(compiled)
    assert loop.graph is not None
    for seed in range(graphs.WARMUP + 1):  # plain calls, then capture and check
        _check(compiled(*_args(seed)), _args(seed))
    assert loop.graph.mode == "graph"
    launches = []
    body = loop.regions[0]
    monkeypatch.setattr(body, "launch", lambda call: launches.append(call))
    for seed in range(3):  # replays: the body's launches are not issued from Python
        _check(compiled(*_args(10 + seed)), _args(10 + seed))
    assert launches == []


@needs_gpu
def test_loops_that_cannot_be_one_graph_still_run(monkeypatch):
    monkeypatch.setattr(tj.config, "cuda_graphs", "always")

    def matmul_body(h0, xs, w):  # cuBLAS cannot be captured: Python-driven iterations
        return lax.scan(lambda h, x: (tnp.tanh(h @ w + x), None), h0, xs)[0]

    rng = np.random.default_rng(3)
    args = (rng.normal(size=4), rng.normal(size=(5, 4)), rng.normal(size=(4, 4)) * 0.5)
    compiled = tj.jit(matmul_body, device="cuda").lower(*args).compile()
    assert _loop_step(compiled).graph is None
    for _ in range(graphs.WARMUP + 2):
        got = compiled(*args)
    want = tj.jit(matmul_body, device="numpy")(*args)
    np.testing.assert_allclose(tj.device_get(got), want, rtol=1e-12)
    empty = tj.jit(_rnn, device="cuda")(np.ones(8), np.zeros((0, 8)), np.ones(8))
    np.testing.assert_array_equal(tj.device_get(empty[0]), np.ones(8))  # length 0
