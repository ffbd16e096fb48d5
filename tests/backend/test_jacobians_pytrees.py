"""jacfwd / jacrev / hessian with argnums (int or tuple), pytree inputs and outputs and
has_aux, structured as in JAX, against central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.pytree import tree_flatten

EPS = 1e-6


def _fd_block(f, args, argnum, path, out_key):
    """d f(*args)[out_key] / d args[argnum][path] by central differences."""
    base = args[argnum][path] if path is not None else args[argnum]
    out_shape = np.shape(f(*args)[out_key])
    block = np.zeros(out_shape + base.shape)
    for i in np.ndindex(base.shape):
        vals = []
        for sign in (1.0, -1.0):
            moved = [dict(a) if isinstance(a, dict) else a.copy() for a in args]
            leaf = (moved[argnum][path] if path is not None else moved[argnum]).copy()
            leaf[i] += sign * EPS
            if path is not None:
                moved[argnum][path] = leaf
            else:
                moved[argnum] = leaf
            vals.append(np.asarray(f(*moved)[out_key]))
        block[(...,) + i] = (vals[0] - vals[1]) / (2 * EPS)
    return block


def _model(p, x):
    h = tnp.tanh(p["w"] @ x + p["b"])
    return {"y": h * x[:2], "s": (h**2).sum()}


ARGS = (
    {"w": np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]), "b": np.array([0.05, -0.1])},
    np.array([0.7, -1.1, 0.4]),
)


@pytest.mark.parametrize("jac", [tj.jacfwd, tj.jacrev])
def test_tuple_argnums_over_pytrees_match_finite_differences(jac):
    J = jac(_model, argnums=(0, 1))(*ARGS)
    assert set(J) == {"y", "s"} and isinstance(J["y"], tuple) and set(J["y"][0]) == {"w", "b"}
    for out_key in ("y", "s"):
        for path in ("w", "b"):
            want = _fd_block(_model, ARGS, 0, path, out_key)
            assert J[out_key][0][path].shape == want.shape
            np.testing.assert_allclose(J[out_key][0][path], want, rtol=1e-6, atol=1e-8)
        want = _fd_block(_model, ARGS, 1, None, out_key)
        np.testing.assert_allclose(J[out_key][1], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jac", [tj.jacfwd, tj.jacrev])
def test_int_argnums_has_aux_and_jit(jac):
    def f(p, x):
        out = _model(p, x)
        return out["y"], out["s"]

    Jx, aux = jac(f, argnums=1, has_aux=True)(*ARGS)
    np.testing.assert_allclose(aux, _model(*ARGS)["s"], rtol=1e-15)
    want = _fd_block(lambda p, x: {"y": f(p, x)[0]}, ARGS, 1, None, "y")
    np.testing.assert_allclose(Jx, want, rtol=1e-6, atol=1e-8)
    jitted = tj.jit(jac(f, argnums=1, has_aux=True))(*ARGS)
    np.testing.assert_allclose(jitted[0], Jx, rtol=1e-12, atol=1e-14)


def test_hessian_of_a_pytree_argument():
    def f(p):
        return (p["a"] ** 3).sum() * p["c"].sum()

    p = {"a": np.array([1.0, 2.0]), "c": np.array([0.5, -1.5, 2.0])}
    H = tj.hessian(f)(p)
    np.testing.assert_allclose(H["a"]["a"], np.diag(6 * p["a"] * p["c"].sum()))
    np.testing.assert_allclose(H["a"]["c"], np.repeat((3 * p["a"] ** 2)[:, None], 3, axis=1))
    np.testing.assert_allclose(H["c"]["c"], np.zeros((3, 3)))


def test_zero_sized_and_bad_inputs():
    J = tj.jacrev(lambda x, y: x.sum() * y, argnums=(0, 1))(np.zeros((0,)), np.ones(2))
    assert J[0].shape == (2, 0) and J[1].shape == (2, 2)
    with pytest.raises(TypeError, match="jacfwd: cannot differentiate .* int64"):
        tj.jacfwd(lambda x: x * 2)(np.arange(3))
    with pytest.raises(ValueError, match="argnums"):
        tj.jacrev(lambda x: x, argnums=3)(np.ones(2))
    leaves = tree_flatten(tj.jacfwd(lambda x: (x, 2.0 * x))(np.ones(2)))[0]
    np.testing.assert_array_equal(leaves[1], 2 * np.eye(2))
