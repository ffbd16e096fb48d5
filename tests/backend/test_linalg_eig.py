"""tnp.linalg.eig / eigvals and tnp.roots: eigenpairs checked by A V = V diag(w) and against
np.linalg.eigvals (sorted), eagerly and compiled on the test device; always complex (JAX);
NaN for a non-finite matrix; differentiation raises UnsupportedError."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import UnsupportedError

RNG = np.random.default_rng(8)
A = RNG.standard_normal((3, 4, 4))


def _check_pairs(a, w, v, tol):
    w, v = np.asarray(tj.device_get(w)), np.asarray(tj.device_get(v))
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)
    want = np.sort_complex(np.linalg.eigvals(a).astype(w.dtype))
    np.testing.assert_allclose(np.sort_complex(w), want, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_eig_pairs_eager_and_compiled(dtype, device):
    a = (A + 1j * A[::-1] if dtype == np.complex128 else A).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    w, v = tnp.linalg.eig(a)
    assert w.dtype == v.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    _check_pairs(a, w, v, tol)
    _check_pairs(a, *tj.jit(tnp.linalg.eig, device=device)(a), tol)
    np.testing.assert_allclose(np.sort_complex(tj.vmap(tnp.linalg.eigvals)(a)),
                               np.sort_complex(np.linalg.eigvals(a)), atol=tol)  # fmt: skip


def test_eig_of_a_nonfinite_matrix_is_nan():
    a = A.copy()
    a[1, 0, 0] = np.nan
    w = np.asarray(tnp.linalg.eigvals(a))
    assert np.isnan(w[1]).all() and np.isfinite(w[[0, 2]]).all()


def test_roots_match_numpy():
    for p in ([1.0, -6.0, 11.0, -6.0], [0.0, 2.0, 0.0, 1.0, 0.0, 0.0], [3.0, 1.0, 4.0, 1.0, 5.0]):
        got = np.sort_complex(np.asarray(tnp.roots(np.array(p))))
        np.testing.assert_allclose(got, np.sort_complex(np.roots(p)), atol=1e-10)
    f = tj.jit(lambda p: tnp.roots(p, strip_zeros=False))
    np.testing.assert_allclose(np.sort_complex(f(np.array([1.0, -6.0, 11.0, -6.0]))),
                               [1.0, 2.0, 3.0], atol=1e-10)  # fmt: skip


def test_eig_is_forward_only():
    with pytest.raises(UnsupportedError, match="not differentiable"):
        tj.grad(lambda a: tnp.sum(tnp.real(tnp.linalg.eigvals(a))))(A[0])
    with pytest.raises(np.linalg.LinAlgError):
        tnp.linalg.eig(A[0, :3])
