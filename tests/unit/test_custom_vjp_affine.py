"""Forward mode through a tj.custom_vjp whose bwd is affine in the cotangent (adds a term that
does not depend on it): the transpose would drop that term, a silently wrong derivative, so
jvp and jacfwd raise CustomVJPForwardModeError naming the primitive and bwd's line; reverse
mode still follows the rule. A bwd whose cotangent-free parts are known zeros (where(m, g, 0),
concatenate([g, zeros]), pad(g), 0 * x ...) stays linear. Oracles: the rule itself written in
NumPy for reverse mode, central finite differences in float64 of the primal for forward mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.errors import CustomVJPForwardModeError

EPS = 1e-6
RNG = np.random.default_rng(11)
X = RNG.uniform(0.2, 1.0, 4) * np.array([1.0, -1.0, 1.0, -1.0])  # away from where's kink
AFFINE_MSG = "affine: adds a term that does not depend on the cotangent"


def _custom(name, primal, bwd):
    """A custom_vjp of `primal` with residuals (cos(x), x) and `bwd(g, c, x)`."""

    @tj.custom_vjp
    def f(x):
        return primal(x)

    f.defvjp(lambda x: (f(x), (tnp.cos(x), x)), lambda res, g: (bwd(g, *res),))
    f.__name__ = name
    return f


def _scan_plus_one(g, c, x):  # a constant added to a carry at every step
    return lax.scan(lambda k, v: (k + v + 1.0, k), 0.0 * g[0], g * c)[1]


def _scan_plus_one_np(g, c, x):
    k, ys = 0.0, []
    for v in g * c:
        ys.append(k)
        k = k + v + 1.0
    return np.array(ys)


def _scan_from_one(g, c, x):  # a carry starting at 1, then the cotangent's: ys[0] is 1
    return lax.scan(lambda k, v: (v, k), 1.0, g * c)[1]


AFFINE = {  # name: (bwd of (g, cos x, x), the primitive named, the same bwd in NumPy)
    "times_plus_one": (lambda g, c, x: g * c + 1.0, "add", lambda g, c, x: g * c + 1.0),
    "plus_residual": (lambda g, c, x: g + c, "add", lambda g, c, x: g + c),
    "select_five": (
        lambda g, c, x: lax.select_n(x > 0, tnp.full(4, 5.0), g * c),
        "select",
        lambda g, c, x: np.where(x > 0, g * c, 5.0),
    ),
    "where_x": (
        lambda g, c, x: tnp.where(x > 0, g * c, x),
        "select",
        lambda g, c, x: np.where(x > 0, g * c, x),
    ),
    "concatenate_ones": (
        lambda g, c, x: tnp.concatenate([(g * c)[:2], tnp.ones(2)]),
        "concatenate",
        lambda g, c, x: np.concatenate([(g * c)[:2], np.ones(2)]),
    ),
    "pad_three": (
        lambda g, c, x: tnp.pad((g * c)[1:3], 1, constant_values=3.0),
        "pad",
        lambda g, c, x: np.pad((g * c)[1:3], 1, constant_values=3.0),
    ),
    "add_into_ones": (
        lambda g, c, x: tnp.ones(4).at[1:3].add((g * c)[1:3]),
        "take_add",
        lambda g, c, x: np.ones(4) + np.pad((g * c)[1:3], 1),
    ),
    "cond_ones": (
        lambda g, c, x: lax.cond(x[0] > 0, lambda v: v, lambda v: tnp.ones_like(v), g * c),
        "cond",
        lambda g, c, x: g * c if x[0] > 0 else np.ones(4),
    ),
    "scan_plus_one": (_scan_plus_one, "add", _scan_plus_one_np),
    "scan_from_one": (
        _scan_from_one,
        "scan",
        lambda g, c, x: np.concatenate([[1.0], (g * c)[:-1]]),
    ),
    "returns_cos": (lambda g, c, x: tnp.cos(x), "cos", lambda g, c, x: np.cos(x)),
}


@pytest.mark.parametrize("name", sorted(AFFINE))
def test_affine_bwd_refuses_forward_mode_and_keeps_reverse_mode(name):
    bwd, prim, numpy_bwd = AFFINE[name]
    f = _custom(name, tnp.sin, bwd)
    uses = {"jvp": lambda: tj.jvp(f, (X,), (np.ones(4),)), "jacfwd": lambda: tj.jacfwd(f)(X)}
    for what, use in uses.items():
        with pytest.raises(CustomVJPForwardModeError) as info:
            use()
        msg = str(info.value)
        assert f"custom_vjp function {name!r}" in msg, (what, msg)
        assert f"`{prim}`" in msg and "not linear in it" in msg, (what, msg)
        assert "test_custom_vjp_affine.py:" in msg, (what, msg)  # bwd's line
        if name != "returns_cos":  # a cotangent made up whole, not a term added to one
            assert AFFINE_MSG in msg, (what, msg)
        else:
            assert "returns a value that does not read the cotangent" in msg, msg
    ct = RNG.standard_normal(4)
    (got,) = tj.vjp(f, X)[1](ct)
    np.testing.assert_allclose(got, numpy_bwd(ct, np.cos(X), X), rtol=1e-12)
    got = tj.grad(lambda x: tnp.sum(f(x)))(X)
    np.testing.assert_allclose(got, numpy_bwd(np.ones(4), np.cos(X), X), rtol=1e-12)


def _cumsum_bwd(g, c, x):  # reversed cumulative sum from a literal 0.0 carry
    return lax.scan(lambda k, v: (k + v, k + v), 0.0, g, reverse=True)[1]


LINEAR = {  # name: (primal in tracejit, its VJP as a bwd with known-zero parts, primal in NumPy)
    "where_zero": (
        lambda x: tnp.where(x > 0, tnp.sin(x), 0.0),
        lambda g, c, x: tnp.where(x > 0, g, 0.0) * c,
        lambda x: np.where(x > 0, np.sin(x), 0.0),
    ),
    "concatenate_zeros": (
        lambda x: tnp.sin(x[:2]),
        lambda g, c, x: tnp.concatenate([g * c[:2], tnp.zeros(2)]),
        lambda x: np.sin(x[:2]),
    ),
    "pad": (
        lambda x: tnp.sin(x[1:3]),
        lambda g, c, x: tnp.pad(g * c[1:3], 1),
        lambda x: np.sin(x[1:3]),
    ),
    "update_slice_of_zeros": (
        lambda x: tnp.sin(x[1:3]),
        lambda g, c, x: lax.dynamic_update_slice(tnp.zeros(4), g * c[1:3], (1,)),
        lambda x: np.sin(x[1:3]),
    ),
    "plus_zero_times_x": (
        tnp.sin,
        lambda g, c, x: g * c + 0.0 * x + tnp.zeros_like(x).astype(np.float32),
        np.sin,
    ),
    "scan_from_zero": (tnp.cumsum, _cumsum_bwd, np.cumsum),
}


def _fd_jvp(f, x, t):
    return (f(x + EPS * t) - f(x - EPS * t)) / (2 * EPS)


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_bwd_with_zero_parts_keeps_forward_mode_equal_to_finite_differences(name):
    primal, bwd, numpy_primal = LINEAR[name]
    f = _custom(name, primal, bwd)
    t = RNG.standard_normal(4)
    out, tangent = tj.jvp(f, (X,), (t,))
    np.testing.assert_allclose(out, numpy_primal(X), rtol=1e-12)
    np.testing.assert_allclose(tangent, _fd_jvp(numpy_primal, X, t), rtol=1e-6, atol=1e-9)
    want = np.stack([_fd_jvp(numpy_primal, X, e) for e in np.eye(4)], axis=-1)
    np.testing.assert_allclose(tj.jacfwd(f)(X), want, rtol=1e-6, atol=1e-9)


def _mixed(x, xp):
    """Slices, gathers, where, concatenate, pad, cumsum, max and solve, for NumPy or tnp."""
    y = xp.where(x > 0, x, 0.1 * x)[1:] * xp.take(x, np.array([0, 2, 2]))
    z = xp.pad(xp.concatenate([y, xp.sin(x[:2])]), 1) + xp.cumsum(xp.exp(x))[1]
    a = np.eye(4) + 0.1 * np.outer(np.arange(4.0), np.ones(4))
    return xp.sum(xp.tanh(z)) + xp.max(x) + xp.sum(xp.linalg.solve(a, x * x))


def test_bwd_made_by_vjp_keeps_forward_mode():
    """tracejit's own VJP (select, pad and scatter-add into zeros...) is linear."""

    @tj.custom_vjp
    def f(x):
        return _mixed(x, tnp)

    f.defvjp(lambda x: (f(x), x), lambda x, g: tj.vjp(lambda v: _mixed(v, tnp), x)[1](g))
    t = RNG.standard_normal(4)
    want = _fd_jvp(lambda x: _mixed(x, np), X, t)
    np.testing.assert_allclose(tj.jvp(f, (X,), (t,))[1], want, rtol=1e-6)
