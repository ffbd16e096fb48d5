"""`while_loop` on the test device: values against the reference interpreter, and on CUDA
few predicate readbacks (guarded steps in batches, backend_cuda/while_batched.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend_cuda import loops
from tracejit.backend_cuda.while_batched import MAX_BATCH


def _loop(table, n):
    """A pytree carry (counter, vector, flag); the body gathers `table[i]` (a clamped index
    when a discarded guarded step runs with i == n)."""

    def body(s):
        i, v, flag = s
        return i + 1, v * 0.5 + table[i], tnp.logical_not(flag)

    init = (np.int64(0), np.zeros(4, np.float32), np.bool_(False))
    return lax.while_loop(lambda s: s[0] < n, body, init)


@pytest.fixture
def readbacks(monkeypatch):
    """How many times the CUDA loop reads a device scalar back."""
    count = []
    real = loops._scalar
    monkeypatch.setattr(loops, "_scalar", lambda x: count.append(1) or real(x))
    return count


@pytest.mark.parametrize("n", [0, 1, 2, 37, 100])
def test_while_loop_values_and_readbacks(device, readbacks, n):
    table = np.arange(400.0, dtype=np.float32).reshape(100, 4) / 7.0
    got = tj.jit(_loop, device=device)(table, np.int64(n))
    want = tj.jit(_loop, device="numpy")(table, np.int64(n))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(tj.device_get(g), w)
    assert int(tj.device_get(got[0])) == n and bool(tj.device_get(got[2])) == (n % 2 == 1)
    if device == "cuda":  # was n + 1: one readback per iteration
        assert len(readbacks) <= 1 + math.ceil(math.log2(MAX_BATCH)) + math.ceil(n / MAX_BATCH)


def test_a_body_with_a_host_step_prints_once_per_iteration(device, readbacks, capsys):
    def f(n):
        def body(i):
            tj.debug.print("i={i}", i=i)
            return i + 1

        return lax.while_loop(lambda i: i < n, body, np.int64(0))

    assert int(tj.device_get(tj.jit(f, device=device)(np.int64(5)))) == 5
    printed = capsys.readouterr().out.split()  # (the first is "i=[0]" on CUDA: a 1-element
    assert [p.strip("i=[]") for p in printed] == [str(i) for i in range(5)]  # input's print)
    if device == "cuda":  # its effect must not repeat: one readback per iteration
        assert len(readbacks) == 6
