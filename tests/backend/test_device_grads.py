"""Compiled reverse mode on the test device: every VJP rule, jitted, against eager and FD.

`tests/backend/test_autodiff.py` checks every VJP rule eagerly (the NumPy reference interpreter). Here
the same rules run compiled on the test device (`TRACEJIT_TEST_DEVICE`: "cpu", or "cuda" on a
GPU or under the emulator): for a group of cases, one jitted program returns every case's
primal output and VJP, and each case is checked twice:

1. against the eager `tj.vjp` (primal and cotangents), float64, rtol 1e-9 / atol 1e-12. The
   compiled code is not bit-identical to the interpreter: reductions are reassociated (tree
   and warp reductions), the C++ and CUDA compilers contract a*b+c into FMAs, and libmvec /
   CUDA's libm are within a few ulp of glibc. Each costs ~1e-16 relative per operation; the
   longest chains here (second-order graphs, ~30 operations, cancellation below 100x on
   these well-conditioned inputs) stay under ~1e-12. A wrong rule, index or layout is off by
   O(1), so 1e-9 separates the two with a wide margin on both sides.
2. against central finite differences of the COMPILED primal, by the projection identity
   <u, VJP(v)> = <(f(x + eps u) - f(x - eps u)) / 2 eps, v>, per case (as `check_vjp` does
   eagerly), so the device VJP is checked against the device's own forward.

Each group is ONE compiled program (compiling dominates: ~0.3-1 s of g++ per program on the
CPU, more under the CUDA emulator), with one fixed shape and seed per case. The smooth
cases are also checked to second order (the VJP of <VJP(v), w>, compiled). float32 runs a few
smooth functions, since GPU training runs float32, against the float64 eager VJP.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
from _prims import differentiable_names
from test_autodiff import (
    BINARY,
    NN_FUNCTIONS,
    TNP_FUNCTIONS,
    UNARY,
    _chooser_operands,
    away_from_zero,
    gradient_case,
    uniform,
)

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.tracer.core import bind

EPS = 1e-6  # central differences in float64: accurate to ~1e-9 relative here
FD_RTOL = FD_ATOL = 1e-6  # as test_autodiff.check_vjp
RTOL, ATOL = 1e-9, 1e-12  # compiled vs eager, float64 (module docstring)
# float32 vs the float64 eager VJP at the same (float32) inputs: ulp 6e-8, chains of ~10
# roundings and cancellations like 1 - tanh(x)^2 near |tanh| = 1 on O(1) values.
RTOL32, ATOL32 = 1e-4, 1e-5
SEED = 20240611


class Case(NamedTuple):
    name: str
    fn: Callable  # arrays -> one array
    args: list  # float arrays, the differentiated inputs (integer data is closed over)
    smooth: bool = True  # also checked to second order
    fd: bool = True  # False: the VJP is not the derivative (stop_gradient)


# ---------------------------------------------------------------- the check


def _joint(fns):
    """(args, vs) -> (outputs, cotangents) of every case at once, for jit and for eager."""

    def many(args):
        return [fn(*xs) for fn, xs in zip(fns, args)]

    def joint(args, vs):
        out, pull = tj.vjp(many, args)
        return out, pull(vs)[0]

    return many, joint


def _close(got, want, rtol, atol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=False, err_msg=what)


def _draw_cotangents(rng, outs, dtype=np.float64):
    return [rng.standard_normal(np.shape(o)).astype(dtype) for o in outs]


def check_group(cases: list[Case], device: str) -> None:
    """Compile every case's VJP into one program; compare with eager and with FD."""
    rng = np.random.default_rng(SEED)
    many, joint = _joint([c.fn for c in cases])
    args = [list(c.args) for c in cases]
    vs = _draw_cotangents(rng, many(args))
    want_out, want_cts = joint(args, vs)
    compiled = tj.jit(joint, device=device)
    got_out, got_cts = tj.device_get(compiled(args, vs))
    us = [[rng.standard_normal(np.shape(a)) for a in xs] for xs in args]
    plus = tj.device_get(compiled([[a + EPS * u for a, u in zip(*p)] for p in zip(args, us)], vs))
    minus = tj.device_get(compiled([[a - EPS * u for a, u in zip(*p)] for p in zip(args, us)], vs))
    for i, case in enumerate(cases):
        _close(got_out[i], want_out[i], RTOL, ATOL, f"{case.name}: primal")
        for j, (g, w) in enumerate(zip(got_cts[i], want_cts[i])):
            _close(g, w, RTOL, ATOL, f"{case.name}: cotangent of input {j}")
        if not case.fd:
            continue
        lhs = sum(float(np.vdot(u, g)) for u, g in zip(us[i], got_cts[i]))
        slope = (np.asarray(plus[0][i]) - np.asarray(minus[0][i])) / (2 * EPS)
        rhs = float(np.vdot(slope, vs[i]))
        tol = FD_ATOL + FD_RTOL * max(abs(lhs), abs(rhs))
        assert abs(lhs - rhs) <= tol, (case.name, "projection vs FD", lhs, rhs)


def second_order(cases: list[Case]) -> list[Case]:
    """Each smooth case as x -> <VJP(v)(x), w>: its VJP is the VJP's VJP."""
    rng = np.random.default_rng(SEED + 1)
    out = []
    for case in cases:
        if not case.smooth:
            continue
        v = rng.standard_normal(np.shape(case.fn(*case.args)))
        ws = [rng.standard_normal(np.shape(a)) for a in case.args]

        def pulled(*xs, fn=case.fn, v=v, ws=ws):
            cts = tj.vjp(fn, *xs)[1](v)
            return sum(tnp.sum(c * w) for c, w in zip(cts, ws))

        out.append(Case(case.name + "'", pulled, case.args, fd=case.fd))
    return out


# ---------------------------------------------------------------- the cases

ELEM = (3, 4)
CUBE = (2, 3, 4)


def _rng(k: int) -> np.random.Generator:
    return np.random.default_rng(SEED + 100 + k)


def _off_jumps(rng, shape):
    """Values 0.1-0.4 away from every integer and half-integer (floor/round/sign jumps)."""
    frac = rng.uniform(0.1, 0.4, size=shape) + rng.choice([0.0, 0.5], size=shape)
    return rng.integers(-3, 3, size=shape) + frac


def unary_cases() -> list[Case]:
    rng = _rng(1)
    cases = [
        Case(n, lambda x, n=n: bind(n, x), [case(rng, ELEM)], smooth)
        for n in differentiable_names(1)
        for case, smooth in [gradient_case(UNARY, n)]
    ]
    for n in ("sign", "floor", "ceil", "round", "trunc", "stop_gradient"):  # zero gradient
        fn = lambda x, n=n: bind(n, x) * x
        fd = n != "stop_gradient"  # d/dx (x * x) is 2x; its VJP is x by definition
        cases.append(Case(n + "*x", fn, [_off_jumps(rng, ELEM)], smooth=fd, fd=fd))
    return cases


def binary_cases() -> list[Case]:
    rng = _rng(2)
    cases = [
        Case(n, lambda x, y, n=n: bind(n, x, y), list(case(rng, ELEM)), smooth)
        for n in differentiable_names(2)
        for case, smooth in [gradient_case(BINARY, n)]
    ]
    cond = rng.random(ELEM) < 0.5
    cases.append(
        Case(
            "select",
            lambda x, y: bind("select", cond, x * x, y),
            list(_chooser_operands(rng, ELEM)),
        )
    )
    return cases


def reduction_cases() -> list[Case]:
    rng = _rng(3)
    x = away_from_zero(rng, CUBE, 0.5, 1.5)
    distinct = rng.permutation(np.arange(math.prod(CUBE), dtype=np.float64)).reshape(CUBE) * 0.1
    cases = []
    for axes in ((1,), (0, 2), (0, 1, 2)):
        for prim in ("reduce_sum", "reduce_prod"):
            cases.append(Case(f"{prim}{axes}", lambda x, p=prim, a=axes: bind(p, x, axes=a), [x]))
        for prim in ("reduce_max", "reduce_min"):
            fn = lambda x, p=prim, a=axes: bind(p, x, axes=a)
            cases.append(Case(f"{prim}{axes}", fn, [distinct], smooth=False))
    y = rng.standard_normal(CUBE)
    for axis in range(3):
        cases.append(Case(f"cumsum[{axis}]", lambda x, a=axis: bind("cumsum", x * x, axis=a), [y]))
    for axes in ((1,), (0, 2)):
        cases.append(Case(f"rev{axes}", lambda x, a=axes: bind("rev", x * x, axes=a), [y]))
    return cases


def layout_cases() -> list[Case]:
    rng = _rng(4)
    x = rng.standard_normal(CUBE)
    cases = [
        Case(f"transpose{p}", lambda x, p=p: bind("transpose", x, perm=p), [x])
        for p in ((2, 0, 1), (1, 0, 2))
    ]
    cases += [
        Case(f"reshape{s}", lambda x, s=s: bind("reshape", x * x, shape=s), [x])
        for s in ((24,), (4, 6))
    ]
    cases.append(
        Case(
            "broadcast_in_dim(2,1,4)->(2,2,3,4)",
            lambda x: bind("broadcast_in_dim", x, shape=(2, 2, 3, 4), dims=(1, 2, 3)),
            [rng.standard_normal((2, 1, 4))],
        )
    )
    cases.append(
        Case(
            "broadcast_in_dim(3,)->(2,3,4)",
            lambda x: bind("broadcast_in_dim", x * x, shape=CUBE, dims=(1,)),
            [rng.standard_normal(3)],
        )
    )
    for starts, stops, steps in (
        ((0, 1, 0), (2, 3, 4), (1, 1, 2)),
        ((1, 0, 1), (2, 3, 4), (2, 2, 3)),
    ):
        attrs = {"starts": starts, "stops": stops, "steps": steps}
        cases.append(Case(f"slice{attrs}", lambda x, a=attrs: bind("slice", x * x, **a), [x]))
    widths = ((1, 0), (0, 2), (1, 1))
    cases.append(Case("pad", lambda x, p: bind("pad", x * x, p, widths=widths), [x, np.array(0.7)]))
    for axis in (1, 2):
        other = tuple(d + 1 if i == axis else d for i, d in enumerate(CUBE))
        fn = lambda x, y, a=axis: bind("concatenate", x, y * y, axis=a)
        cases.append(Case(f"concatenate[{axis}]", fn, [x, rng.standard_normal(other)]))
    return cases


def gather_cases() -> list[Case]:
    rng = _rng(5)
    x = rng.standard_normal(CUBE)
    cases = []
    for axis in (0, 1, 2):
        n = CUBE[axis]
        idx = rng.integers(-n, n, size=(5,))  # repeats and negatives
        idx[:2] = (n - 1, -1)  # one repeat at least
        taken = bind("take", x, idx, axis=axis)
        cases.append(
            Case(f"take[{axis}]", lambda x, i=idx, a=axis: bind("take", x * x, i, axis=a), [x])
        )
        fn = lambda x, u, i=idx, a=axis: bind("take_add", x, i, u * u, axis=a)
        cases.append(Case(f"take_add[{axis}]", fn, [x, rng.standard_normal(taken.shape)]))
        along = rng.integers(0, n, size=CUBE)
        fn = lambda x, i=along, a=axis: bind("take_along_axis", x * x, i, axis=a)
        cases.append(Case(f"take_along_axis[{axis}]", fn, [x]))
        fn = lambda x, u, i=along, a=axis: bind("take_along_add", x, i, u * x, axis=a)
        cases.append(Case(f"take_along_add[{axis}]", fn, [x, x + 1]))
    return cases


def matmul_cases() -> list[Case]:
    rng = _rng(6)
    shapes = {"2d": ((3, 4), (4, 5)), "batched": ((2, 3, 4), (2, 4, 5)), "k1": ((3, 1), (1, 2))}
    return [
        Case(
            f"matmul_{k}",
            lambda a, b: bind("matmul", a, b),
            [rng.standard_normal(sa), rng.standard_normal(sb)],
        )
        for k, (sa, sb) in shapes.items()
    ]


def tnp_cases() -> list[Case]:
    rng = _rng(7)
    cases = []
    for name in sorted(TNP_FUNCTIONS):
        # |x| in [0.05, 0.85] or [0.95, 1.2]: away from the kinks of clip and where
        inner = rng.random(ELEM) < 0.7
        x = np.where(inner, uniform(rng, ELEM, 0.05, 0.85), uniform(rng, ELEM, 0.95, 1.2))
        x *= rng.choice([-1.0, 1.0], size=ELEM)
        smooth = name not in ("where_clip", "max_keepdims")
        cases.append(Case(name, TNP_FUNCTIONS[name], [x], smooth))
    return cases


def nn_cases() -> list[Case]:
    rng = _rng(8)
    return [
        Case(n, fn, [away_from_zero(rng, ELEM, 0.05, 3.0)], smooth)
        for n, (fn, smooth) in sorted(NN_FUNCTIONS.items())
    ]


GROUPS = {
    "unary": unary_cases,
    "binary": binary_cases,
    "reductions": reduction_cases,
    "layout": layout_cases,
    "gathers": gather_cases,
    "matmul": matmul_cases,
    "tnp": tnp_cases,
    "nn": nn_cases,
}
# Second order, grouped into fewer (larger) programs.
SECOND_ORDER = {
    "elementwise": ("unary", "binary"),
    "structural": ("reductions", "layout", "gathers", "matmul"),
    "functions": ("tnp", "nn"),
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_compiled_vjp_matches_eager_and_finite_differences(group, device):
    check_group(GROUPS[group](), device)


@pytest.mark.parametrize("group", sorted(SECOND_ORDER))
def test_compiled_second_order_vjp(group, device):
    cases = [c for g in SECOND_ORDER[group] for c in GROUPS[g]()]
    check_group(second_order(cases), device)


# ---------------------------------------------------------------- float32

FLOAT32 = {
    "tanh": (tnp.tanh, lambda r: uniform(r, ELEM, -2, 2)),
    "exp": (tnp.exp, lambda r: uniform(r, ELEM, -2, 2)),
    "log": (tnp.log, lambda r: uniform(r, ELEM, 0.3, 3)),
    "sigmoid": (tj.nn.sigmoid, lambda r: uniform(r, ELEM, -3, 3)),
    "silu": (tj.nn.silu, lambda r: uniform(r, ELEM, -3, 3)),
    "gelu_tanh": (tj.nn.gelu, lambda r: uniform(r, ELEM, -3, 3)),
    "gelu_erf": (lambda x: tj.nn.gelu(x, approximate=False), lambda r: uniform(r, ELEM, -3, 3)),
    "softmax": (lambda x: tj.nn.softmax(x, axis=-1), lambda r: uniform(r, ELEM, -3, 3)),
    "log_softmax": (lambda x: tj.nn.log_softmax(x, axis=0), lambda r: uniform(r, ELEM, -3, 3)),
}


def test_compiled_float32_vjp_matches_float64_eager(device):
    rng = _rng(9)
    names = sorted(FLOAT32)
    args = [[FLOAT32[n][1](rng).astype(np.float32)] for n in names]
    many, joint = _joint([FLOAT32[n][0] for n in names])
    vs = _draw_cotangents(rng, many(args), np.float32)
    got_out, got_cts = tj.device_get(tj.jit(joint, device=device)(args, vs))
    up = [[a.astype(np.float64) for a in xs] for xs in args]
    want_out, want_cts = joint(up, [v.astype(np.float64) for v in vs])
    for i, name in enumerate(names):
        assert got_out[i].dtype == np.float32 and got_cts[i][0].dtype == np.float32, name
        _close(got_out[i], want_out[i], RTOL32, ATOL32, f"{name}: float32 primal")
        _close(got_cts[i][0], want_cts[i][0], RTOL32, ATOL32, f"{name}: float32 cotangent")
