"""tj.nn.scaled_matmul against its NumPy definition (scales repeated over blocks of K, an
einsum), compiled on the test device, and its gradient against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError

RNG = np.random.default_rng(4)
A, B = RNG.standard_normal((2, 3, 8)), RNG.standard_normal((2, 5, 8))
SA, SB = RNG.uniform(0.5, 2.0, (2, 3, 2)), RNG.uniform(0.5, 2.0, (2, 5, 4))


def _reference(a, b, sa, sb):
    a = a * np.repeat(sa, a.shape[-1] // sa.shape[-1], axis=-1)
    b = b * np.repeat(sb, b.shape[-1] // sb.shape[-1], axis=-1)
    return np.einsum("bmk,bnk->bmn", a, b)


def test_scaled_matmul_matches_its_definition(device):
    want = _reference(A, B, SA, SB)
    got = tj.jit(tj.nn.scaled_matmul, device=device)(A, B, SA, SB)
    got = np.asarray(tj.device_get(got))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    out64 = tj.nn.scaled_matmul(A, B, SA, SB, preferred_element_type=np.float64)
    assert out64.dtype == np.float64


def test_scaled_matmul_gradient_and_bad_shapes():
    w = RNG.standard_normal((2, 3, 5))

    def loss(m, sa):
        return m.sum(m.tanh(_reference(A, B, sa, SB) if m is np else
                            tj.nn.scaled_matmul(A, B, sa, SB, np.float64)) * w)  # fmt: skip

    got = tj.grad(lambda sa: loss(tnp, sa))(SA)
    np.testing.assert_allclose(got, numeric_grad(lambda sa: float(loss(np, sa)), SA),
                               rtol=1e-4, atol=1e-5)  # fmt: skip
    with pytest.raises(ShapeError):
        tj.nn.scaled_matmul(A, B, SA[:, :, :1].repeat(3, -1), SB)
    with pytest.raises(ShapeError):
        tj.nn.scaled_matmul(A, B[:, :, :4], SA, SB[:, :, :2])
