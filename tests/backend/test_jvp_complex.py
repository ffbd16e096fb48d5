"""Forward mode with complex values, as jax.jvp: complex primals, tangents and outputs (and real
inputs with complex outputs), through the transposed pullback and through a while_loop.
Oracle: central differences in float64 along the tangent, d/de f(z + e t) at real e, with t
real, imaginary and general (so both the real and imaginary directions of every input)."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

EPS = 1e-6
RNG = np.random.default_rng(21)


def _cn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _power_loop(xp, z):
    """w <- w z + conj(z), three times (a while_loop when traced: forward mode proper)."""
    if xp is np:
        w = z
        for _ in range(3):
            w = w * z + np.conj(z)
        return w

    def body(carry):
        return carry[0] + 1, carry[1] * z + tnp.conj(z)

    return lax.while_loop(lambda c: c[0] < 3, body, (0, z))[1]


Z, W = 0.4 * _cn(3), _cn(3)
M, N = _cn(3, 3) + 2 * np.eye(3), _cn(3, 2)
# name: (function of (xp, *args), args); every arg gets a tangent
CASES = {
    "exp": (lambda xp, z: xp.exp(z), (Z,)),
    "mul": (lambda xp, z, w: z * w, (Z, W)),
    "matmul": (lambda xp, m, n: m @ n, (M, N)),
    "abs_squared": (lambda xp, z: xp.abs(z) ** 2, (Z,)),  # complex in, real out
    "conj_product": (lambda xp, z: xp.conj(z) * z[::-1], (Z,)),  # not holomorphic
    "solve_det": (lambda xp, m, n: (xp.linalg.solve(m, n), xp.linalg.det(m)), (M, N)),
    "real_to_complex": (lambda xp, x: x * xp.exp(1j * x), (Z.real,)),  # real in, complex out
    "while_loop": (_power_loop, (Z,)),
}


def _tangents(args, kind: str):
    """Real, imaginary or general tangents (real ones only for real arguments)."""
    out = []
    for a in args:
        t = RNG.standard_normal(np.shape(a))
        if np.iscomplexobj(a):
            t = {"real": t, "imag": 1j * t, "complex": t + 1j * RNG.standard_normal(t.shape)}[kind]
        out.append(t)
    return tuple(out)


def _fd(fn, args, tangents):
    plus = fn(np, *[a + EPS * t for a, t in zip(args, tangents)])
    minus = fn(np, *[a - EPS * t for a, t in zip(args, tangents)])
    return tj.tree_map(lambda p, m: (np.asarray(p) - m) / (2 * EPS), plus, minus)


def _assert_close(got, want, rtol):
    for g, w in zip(tj.tree_leaves(got), tj.tree_leaves(want), strict=True):
        g = np.asarray(tj.device_get(g))
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w), (g.dtype, w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-9)


@pytest.mark.parametrize("kind", ["real", "imag", "complex"])
def test_jvp_of_complex_functions_matches_finite_differences(kind):
    for fn, args in CASES.values():
        tangents = _tangents(args, kind)
        out, tangent = tj.jvp(lambda *a, fn=fn: fn(tnp, *a), args, tangents)
        _assert_close(out, fn(np, *args), 1e-12)
        _assert_close(tangent, _fd(fn, args, tangents), 1e-6)


def test_linearize_and_jacfwd_with_complex_outputs():
    fn, args = CASES["conj_product"]
    tangents = _tangents(args, "complex")
    _, f_jvp = tj.linearize(lambda z: fn(tnp, z), *args)
    _assert_close(f_jvp(*tangents), _fd(fn, args, tangents), 1e-6)
    fn, (x,) = CASES["real_to_complex"]
    jac = tj.jacfwd(lambda x: fn(tnp, x))(x)  # real in, complex out: columns are JVPs
    eye = np.eye(x.size)
    want = np.stack([_fd(fn, (x,), (e,)) for e in eye], axis=-1)
    _assert_close(jac, want, 1e-6)


def test_jvp_of_complex_functions_compiled(device):
    tangents = {name: _tangents(args, "complex") for name, (_, args) in CASES.items()}

    def every(args, tangents):  # one program for every case
        return {
            name: tj.jvp(lambda *a, fn=fn: fn(tnp, *a), args[name], tangents[name])[1]
            for name, (fn, _) in CASES.items()
        }

    got = tj.jit(every, device=device)({n: a for n, (_, a) in CASES.items()}, tangents)
    for name, (fn, args) in CASES.items():
        _assert_close(got[name], _fd(fn, args, tangents[name]), 1e-6)


def test_holomorphic_jacobians_are_the_complex_derivative():
    z = Z[:2]

    def f(z):  # holomorphic: df/dz = [[z1, z0], [3 z0**2, 0]] (+ exp on the diagonal)
        return tnp.stack([z[0] * z[1], z[0] ** 3]) + tnp.exp(z)

    want = np.array([[z[1], z[0]], [3 * z[0] ** 2, 0]]) + np.diag(np.exp(z))
    for jac in (tj.jacfwd, tj.jacrev):
        _assert_close(jac(f, holomorphic=True)(z), want, 1e-13)
    _assert_close(tj.hessian(lambda z: tnp.sum(z**3), holomorphic=True)(z), np.diag(6 * z), 1e-13)
    # jacrev of a real function of complex inputs: rows are tj.grad's df/dx - i df/dy
    _assert_close(tj.jacrev(lambda z: tnp.abs(z) ** 2)(z), np.diag(2 * np.conj(z)), 1e-13)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tj.jacfwd(tnp.exp)(Z), "complex ones with holomorphic=True"),
        (lambda: tj.jacrev(tnp.exp)(Z), "jacrev needs real outputs"),
        (lambda: tj.jacfwd(tnp.exp, holomorphic=True)(Z.real), "complex arrays"),
        (lambda: tj.jacrev(tnp.abs, holomorphic=True)(Z), "needs complex outputs"),
    ],
)
def test_jacobians_name_what_complex_values_need(call, message):
    with pytest.raises(tj.errors.TracejitTypeError, match=message):
        call()
