"""Two linalg bugs found by probing: an svd of a matrix holding inf hung (NumPy's LAPACK
?gesdd never returns on some such matrices; now NaN for that matrix, as JAX), and the second
derivative of eigvals raised the eigenvector-derivative refusal that points the user to
eigvals itself (its VJP's eigenvectors only need distinct eigenvalues, not the gauge)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

RNG = np.random.default_rng(21)


_SVD_OF_INF = """
import json, numpy as np, tracejit as tj, tracejit.numpy as tnp
bad = 3.0 * np.eye(3)
bad[0, 1] = bad[1, 0] = np.inf  # np.linalg.svd(bad) never returns
a = np.stack([np.arange(9.0).reshape(3, 3) ** 0.5, bad])
for device in ("cpu", "numpy"):
    got = tj.jit(lambda x: tnp.linalg.svd(x, full_matrices=False), device=device)(a)
    print(json.dumps([np.asarray(g).tolist() for g in got]))
print(json.dumps(tj.jit(tj.grad(lambda x: tnp.sum(tnp.linalg.svd(x, compute_uv=False))))(bad).tolist()))
"""


def test_svd_of_a_matrix_holding_inf_returns_nan_for_it(tmp_path):
    # in a child process: the hang holds the GIL, so only a timeout from outside ends it
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tmp_path))
    try:
        done = subprocess.run([sys.executable, "-c", _SVD_OF_INF], env=env, timeout=120,
                              capture_output=True, text=True, check=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("svd of a matrix holding inf did not return in 120 s")
    *decomps, grad = done.stdout.strip().splitlines()
    want = np.linalg.svd(np.arange(9.0).reshape(3, 3) ** 0.5)
    assert len(decomps) == 2 and np.isnan(json.loads(grad)).all()
    for line in decomps:
        for got, w in zip(map(np.array, json.loads(line)), want, strict=True):
            assert np.isnan(got[1]).all()
            np.testing.assert_allclose(np.abs(got[0]), np.abs(w), rtol=1e-12, atol=1e-12)


def _loss(x):
    w = tnp.linalg.eigvals(x)
    return tnp.sum(tnp.real(w) ** 2 + 0.3 * tnp.imag(w))


def test_eigvals_second_derivative_matches_finite_differences(device):
    x = RNG.standard_normal((2, 3, 3))
    first = tj.jit(tj.grad(_loss), device="numpy")
    want = numeric_grad(lambda v: float(np.sum(np.asarray(first(v)) ** 2)), x, eps=1e-5)
    second = tj.grad(lambda v: tnp.sum(tj.grad(_loss)(v) ** 2))
    for got in (second(x), tj.jit(second, device=device)(x)):
        np.testing.assert_allclose(np.asarray(tj.device_get(got)), want, rtol=1e-5, atol=1e-6)


def test_svdvals_of_a_nan_matrix_is_nan_in_the_reference_as_compiled():
    a = np.stack([np.diag([3.0, 2.0, 1.0]), np.full((3, 3), np.nan)])
    for device in ("numpy", "cpu"):  # the reference raised LinAlgError
        got = tj.jit(lambda x: tnp.linalg.svd(x, compute_uv=False), device=device)(a)
        np.testing.assert_array_equal(got, [[3.0, 2.0, 1.0], [np.nan] * 3])


@pytest.mark.parametrize("n", [3, 130])  # 130: LAPACK's ?syevd/?gesdd on the CPU, else gufuncs
@pytest.mark.parametrize(
    "fn, bad", [("eigh", np.inf), ("eigh", np.nan), ("eigvalsh", np.inf), ("eigvalsh", np.nan),
                ("svdvals", np.inf), ("svdvals", np.nan)],
)  # fmt: skip
def test_symmetric_and_singular_values_of_a_nonfinite_matrix_are_nan(device, fn, bad, n):
    # NaN for that matrix alone, its neighbours exact. Before: on CUDA the library raised (the
    # emulator's eigvalsh of NaN: "did not converge") or gave finite values (cuSOLVER's svd on
    # an H100); on the CPU ?syevd's eigenvalues of a matrix holding inf were NaN in part only
    g = np.random.default_rng(n).standard_normal((n, n))
    good = g @ g.T / n + np.eye(n)
    nonfinite = good.copy()
    nonfinite[2, 2] = nonfinite[0, 1] = nonfinite[1, 0] = bad
    a = np.stack([good, nonfinite, good + 1])
    la = tnp.linalg
    call = {"eigh": la.eigh, "eigvalsh": la.eigvalsh,
            "svdvals": lambda m: la.svd(m, compute_uv=False)}[fn]  # fmt: skip
    got = [np.asarray(tj.device_get(g)) for g in tj.tree_flatten(tj.jit(call, device=device)(a))[0]]
    want = tj.tree_flatten(call(np.stack([good, good + 1])))[0]
    for g, w in zip(got, want, strict=True):
        assert np.isnan(g[1]).all()
        np.testing.assert_allclose(np.abs(g[[0, 2]]), np.abs(w), rtol=1e-9, atol=1e-9)


def test_eigh_ignores_nan_in_the_upper_triangle(device):
    # eigh reads the lower triangle (NumPy's convention): NaN above it is not looked at
    a = np.array([[2.0, np.nan, np.inf], [1.0, 3.0, np.nan], [0.5, 0.2, 4.0]])
    w, v = tj.jit(tnp.linalg.eigh, device=device)(a)
    want_w, want_v = np.linalg.eigh(a)
    np.testing.assert_allclose(tj.device_get(w), want_w, rtol=1e-12)
    np.testing.assert_allclose(np.abs(tj.device_get(v)), np.abs(want_v), rtol=1e-12, atol=1e-14)
