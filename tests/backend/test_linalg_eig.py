"""tnp.linalg.eig / eigvals and tnp.roots: eigenpairs checked by A V = V diag(w) and against
np.linalg.eigvals (sorted), eagerly and compiled on the test device; always complex (JAX);
NaN for a non-finite matrix. Gradients (eagerly and compiled on the test device) and JVPs
against float64 central differences of NumPy's eig: weighted eigenvalues, |V|^2 (phase
invariant) and, under LAPACK's normalization (largest component real), V itself; eigenvector
derivatives without enable_eigvec_derivs=True raise UnsupportedError, as JAX."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

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


def _eig(m, x):
    if m is np:
        w, v = np.linalg.eig(x)
        return w.astype(complex), v.astype(complex)
    return tnp.linalg.eig(x, enable_eigvec_derivs=True)


W = RNG.standard_normal((4, 2, 3, 3)) + 1j * RNG.standard_normal((4, 2, 3, 3))
LOSSES = {  # each a real function of (w, V); "phase" needs the phase LAPACK fixes
    "eigvals": lambda m, w, v: m.real(w * W[0, ..., 0]).sum(),
    "abs": lambda m, w, v: (m.imag(w * W[1, ..., 0]) + (m.abs(v) ** 2 * W[2].real).sum(-2)).sum(),
    "phase": lambda m, w, v: (m.real(v * W[3]).sum(-2) + m.real(w)).sum(),
}


def _complex_grad(f, z):
    """df/dx - i df/dy (JAX's convention) by central differences."""
    gx = numeric_grad(lambda x: f(x + 1j * z.imag), z.real)
    return gx - 1j * numeric_grad(lambda y: f(z.real + 1j * y), z.imag)


# dgeev leaves a real eigenvector's sign free (a step can flip it): "phase" on complex input
CASES = [("real", "eigvals"), ("real", "abs"), ("complex", "abs"), ("complex", "phase")]


def _input(kind):
    return A[:2, :3, :3] + (1j * A[1:, 1:, 1:] if kind == "complex" else 0)


def _fd_grad(kind, loss):
    fd = _complex_grad if kind == "complex" else numeric_grad
    return fd(lambda x: LOSSES[loss](np, *_eig(np, x)), _input(kind))


@pytest.mark.parametrize(("kind", "loss"), CASES)
def test_eig_gradient_matches_finite_differences(kind, loss):
    grad = tj.grad(lambda x: LOSSES[loss](tnp, *_eig(tnp, x)))
    np.testing.assert_allclose(grad(_input(kind)), _fd_grad(kind, loss), atol=1e-7)


def test_eig_gradients_compiled_for_the_test_device(device):
    """Every case above in one compiled program: a real and a complex operand."""

    def total(x, kind):
        return sum(LOSSES[loss](tnp, *_eig(tnp, x)) for k, loss in CASES if k == kind)

    grad = tj.jit(tj.grad(lambda r, c: total(r, "real") + total(c, "complex"), argnums=(0, 1)),
                  device=device)  # fmt: skip
    for got, kind in zip(
        tj.device_get(grad(_input("real"), _input("complex"))), ("real", "complex")
    ):
        want = sum(_fd_grad(k, loss) for k, loss in CASES if k == kind)
        np.testing.assert_allclose(got, want, atol=1e-7)


def test_eig_jvp_matches_finite_differences():
    a, t = A[:2], RNG.standard_normal(A[:2].shape)

    def parts(m, x):
        w, v = _eig(m, x)
        return m.real(w), m.imag(w), m.real(v), m.imag(v)

    _, tangents = tj.jvp(lambda x: parts(tnp, x), (a,), (t,))
    plus, minus = parts(np, a + 1e-6 * t), parts(np, a - 1e-6 * t)
    for got, p, q in zip(tangents, plus, minus):
        np.testing.assert_allclose(got, (p - q) / 2e-6, atol=1e-7)


def test_eigenvector_derivatives_need_the_opt_in_as_in_jax():
    with pytest.raises(UnsupportedError, match="enable_eigvec_derivs=True"):
        tj.grad(lambda a: tnp.sum(tnp.abs(tnp.linalg.eig(a).eigenvectors)))(A[0])
    # eigenvalues alone (eig's or eigvals') need no opt-in
    g = tj.grad(lambda a: tnp.sum(tnp.real(tnp.linalg.eig(a).eigenvalues)))(A[0])
    np.testing.assert_allclose(g, np.eye(4), atol=1e-12)  # d trace(A) / dA
    with pytest.raises(np.linalg.LinAlgError):
        tnp.linalg.eig(A[0, :3])


def _eigvals_loss(m, x):  # any function of the spectrum that ignores its order
    w = m.linalg.eigvals(x)
    return (m.real(w) ** 2 - 0.5 * m.imag(w) ** 2 + m.real(w) * m.imag(w)).sum()


def test_eigvals_computes_no_vectors_but_to_differentiate(device):
    names = {n.prim.name for n in tj.jit(tnp.linalg.eigvals).lower(A[:2]).graph.nodes}
    assert "eigvals" in names and "eig" not in names
    got = tj.device_get(tj.jit(tnp.linalg.eigvals, device=device)(A[:2]))
    want = np.sort_complex(np.linalg.eigvals(A[:2]))
    np.testing.assert_allclose(np.sort_complex(got), want, atol=1e-10)
    grad = tj.jit(tj.grad(lambda r, c: _eigvals_loss(tnp, r) + _eigvals_loss(tnp, c),
                          argnums=(0, 1)), device=device)  # fmt: skip
    real, cplx = _input("real"), _input("complex")
    got = tj.device_get(grad(real, cplx))
    np.testing.assert_allclose(got[0], numeric_grad(lambda x: _eigvals_loss(np, x), real),
                               atol=1e-7)  # fmt: skip
    want = _complex_grad(lambda z: _eigvals_loss(np, z), cplx)
    np.testing.assert_allclose(got[1], want, atol=1e-7)
