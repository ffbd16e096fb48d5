"""Every sampler of tracejit.random returns the dtype asked for (or its default), eagerly and
under `jit`, whatever the dtype of its parameters: they are converted to the draws' dtype, as
JAX does. `weibull_min(key, 1.0, 2.0, (3,), dtype=float32)` was float64 (`1.0 / concentration
of Python floats is a float64 array), and float64 parameters promoted the float32 draws of
lognormal, pareto, rayleigh and double_sided_maxwell.

The same draws are the same bits eagerly (NumPy's ufuncs), compiled for the cpu and on each
device under test, for several keys, shapes and dtypes: the samplers take their elementary
functions from tracejit/_portable_math.py (no libm call, whose roundings differ between NumPy,
glibc and CUDA), add in a fixed order, and factor matrices (multivariate_normal's default
cholesky, orthogonal's QR) with tracejit/_portable_linalg.py. No sampler is excepted.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from _bits import assert_same_bits

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.random as tr

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
F16, BF16 = np.dtype(np.float16), np.dtype(tnp.bfloat16)

# name -> the arguments after the key, given `c` (a float parameter as passed: a Python float or
# an array of the parameters' dtype) and `pdt` (that dtype; float64 for Python floats)
FLOAT_SAMPLERS = {
    "uniform": lambda c, pdt: {"shape": (3,), "minval": c(-1.0), "maxval": c(2.0)},
    "normal": lambda c, pdt: {"shape": (3,)},
    "exponential": lambda c, pdt: {"shape": (3,)},
    "gumbel": lambda c, pdt: {"shape": (3,)},
    "laplace": lambda c, pdt: {"shape": (3,)},
    "logistic": lambda c, pdt: {"shape": (3,)},
    "cauchy": lambda c, pdt: {"shape": (3,)},
    "maxwell": lambda c, pdt: {"shape": (3,)},
    "lognormal": lambda c, pdt: {"sigma": c(0.5), "shape": (3,)},
    "pareto": lambda c, pdt: {"b": c(3.0), "shape": (3,)},
    "rayleigh": lambda c, pdt: {"scale": c(2.0), "shape": (3,)},
    "weibull_min": lambda c, pdt: {"scale": c(1.0), "concentration": c(2.0), "shape": (3,)},
    "double_sided_maxwell": lambda c, pdt: {"loc": c(1.0), "scale": c(2.0), "shape": (3,)},
    "triangular": lambda c, pdt: {"left": c(-1.0), "mode": c(0.5), "right": c(2.0),
                                  "shape": (3,)},
    "wald": lambda c, pdt: {"mean": c(1.5), "shape": (3,)},
    "ball": lambda c, pdt: {"d": 3, "shape": (3,)},
    "gamma": lambda c, pdt: {"a": c(2.0), "shape": (3,)},
    "loggamma": lambda c, pdt: {"a": c(2.0), "shape": (3,)},
    "chisquare": lambda c, pdt: {"df": c(3.0), "shape": (3,)},
    "f": lambda c, pdt: {"dfnum": c(3.0), "dfden": c(4.0), "shape": (3,)},
    "t": lambda c, pdt: {"df": c(3.0), "shape": (3,)},
    "beta": lambda c, pdt: {"a": c(2.0), "b": c(3.0), "shape": (3,)},
    "dirichlet": lambda c, pdt: {"alpha": np.array([1.0, 2.0], pdt), "shape": (3,)},
    "generalized_normal": lambda c, pdt: {"p": c(1.5), "shape": (3,)},
    "truncated_normal": lambda c, pdt: {"lower": c(-1.0), "upper": c(1.0), "shape": (3,)},
    "binomial": lambda c, pdt: {"n": c(5.0), "p": c(0.4), "shape": (3,)},
    "multinomial": lambda c, pdt: {"n": 5.0, "p": np.array([0.3, 0.7], pdt), "shape": (3,)},
    "multivariate_normal": lambda c, pdt: {"mean": np.zeros(2, pdt), "cov": np.eye(2, dtype=pdt),
                                           "shape": (3,)},
    "orthogonal": lambda c, pdt: {"n": 3, "shape": (2,)},
}  # fmt: skip
INT_SAMPLERS = {
    "poisson": lambda c, pdt: {"lam": c(3.0), "shape": (3,)},
    "geometric": lambda c, pdt: {"p": c(0.4), "shape": (3,)},
    "randint": lambda c, pdt: {"shape": (3,), "minval": 0, "maxval": 5},
    "rademacher": lambda c, pdt: {"shape": (3,)},
}
# (the dtype asked for, None for the default; the parameters' dtype, None for Python floats;
# the draws' shape). One shape per dtype: the cases of a dtype compile to one program.
FLOAT_CASES = [(None, None, (2, 3)), (None, F64, (2, 3)), (F32, None, (2, 3)), (F32, F64, (2, 3)),
               (F64, None, (3,)), (F64, F32, (3,))]  # fmt: skip
# float16 and bfloat16 draws are float32's rounded once (random._drawn_in_float32), so one
# sampler of each kind stands for the rest: compiling all of them twice more took 20 s
NARROW_CASES = [(F16, None, (4,)), (BF16, F32, (2, 3))]
NARROW_SAMPLERS = ("uniform", "normal", "cauchy", "gamma", "dirichlet", "truncated_normal",
                   "binomial")  # fmt: skip
INT_CASES = [(None, None, (3,)), (None, F64, (3,)), (np.dtype(np.int64), F32, (2, 3))]
KEYS = [tr.key(0), tr.key(7), tr.key(2**40 + 3)]


def _expected(name, dtype, pdt):
    if dtype is not None:
        return dtype
    default = inspect.signature(getattr(tr, name)).parameters["dtype"].default
    return np.dtype(pdt) if default is None else np.dtype(default)  # multivariate_normal: mean's


def _calls(samplers, dtype, pdt, shape):
    """(name, a function of the key drawing with that sampler, the dtype it must return)."""

    def c(v):
        return v if pdt is None else np.full(3, v, pdt)

    calls = []
    for name, args in sorted(samplers.items()):
        kw = args(c, F64 if pdt is None else pdt)
        kw["shape"] = shape if name != "orthogonal" else shape[:-1]
        if dtype is not None:
            kw["dtype"] = dtype
        draw = getattr(tr, name)
        calls.append((name, lambda k, draw=draw, kw=kw: draw(k, **kw),
                      _expected(name, dtype, F64 if pdt is None else pdt)))  # fmt: skip
    return calls


def test_every_sampler_with_a_dtype_is_listed():
    with_dtype = {n for n in tr.__all__ if "dtype" in inspect.signature(getattr(tr, n)).parameters}
    assert with_dtype == set(FLOAT_SAMPLERS) | set(INT_SAMPLERS)


@pytest.mark.parametrize(("samplers", "cases"), [
    (FLOAT_SAMPLERS, FLOAT_CASES), (INT_SAMPLERS, INT_CASES),
    ({n: FLOAT_SAMPLERS[n] for n in NARROW_SAMPLERS}, NARROW_CASES)], ids=["float", "int", "narrow"])  # fmt: skip
def test_draws_have_the_requested_dtype_and_the_same_bits_eager_and_jit(samplers, cases, device):
    for dtype, pdt, shape in cases:
        calls = _calls(samplers, dtype, pdt, shape)
        compiled = tj.jit(lambda k, calls=calls: tuple(f(k) for _, f, _ in calls), device=device)
        # one key where the draws repeat another case's (converted parameters; float32 is the
        # default dtype)
        for key in KEYS if pdt is None and dtype != F32 else KEYS[:1]:
            for (name, draw, want), traced in zip(calls, compiled(key), strict=True):
                eager = np.asarray(draw(key))
                traced = np.asarray(tj.device_get(traced))
                assert eager.dtype == want, (name, dtype, pdt, "eager", eager.dtype)
                assert traced.dtype == want, (name, dtype, pdt, "jit", traced.dtype)
                assert_same_bits(traced, eager)


# The public names that draw without a dtype argument (bools, indices, words, keys), and those
# that draw nothing
OTHER_DRAWS = {
    "bernoulli": lambda k: tr.bernoulli(k, np.array([0.2, 0.5, 0.9]), (2, 3)),
    "categorical": lambda k: tr.categorical(k, np.log(np.array([0.1, 0.2, 0.7])), shape=(5,)),
    "choice": lambda k: (
        tr.choice(k, 5, (3,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        tr.choice(k, 6, (4,), replace=False),
    ),
    "permutation": lambda k: tr.permutation(k, 7),
    "bits": lambda k: tr.bits(k, (2, 3)),
    "split": lambda k: tr.split(k, 3),
    "fold_in": lambda k: tr.fold_in(k, 5),
}
NOT_SAMPLERS = {"PRNGKey", "key", "clone", "key_data", "wrap_key_data", "key_impl", "key_dtype",
                "threefry2x32_block", "random_gamma_p"}  # fmt: skip
# The elementwise primitives that call libm (or CUDA's libdevice): none may be left in a draw
LIBM = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "erf", "pow", "sin", "cos",
        "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}  # fmt: skip


def test_every_public_name_is_covered():
    assert set(tr.__all__) == set(FLOAT_SAMPLERS) | set(INT_SAMPLERS) | set(OTHER_DRAWS) | (
        NOT_SAMPLERS
    )


def test_other_draws_have_the_same_bits_eager_and_jit(device):
    compiled = tj.jit(lambda k: [f(k) for f in OTHER_DRAWS.values()], device=device)
    for key in KEYS:
        for eager, traced in zip(tj.tree.leaves([f(key) for f in OTHER_DRAWS.values()]),
                                 tj.tree.leaves(compiled(key)), strict=True):  # fmt: skip
            assert_same_bits(traced, np.asarray(eager))


def _primitives(graph):
    for node in graph.nodes:
        yield node.prim.name
        for value in node.attrs.values():
            if hasattr(value, "nodes"):
                yield from _primitives(value)


def test_draws_call_no_libm_function():
    """A libm call in a sampler's graph would make its draws differ between NumPy, the cpu and
    a GPU: this fails on a future edit that brings one back (tnp.log for _portable_math.log)."""
    calls = [f for case in FLOAT_CASES[::4] for _, f, _ in _calls(FLOAT_SAMPLERS, *case)]
    calls += [f for _, f, _ in _calls(INT_SAMPLERS, *INT_CASES[0])]
    calls += list(OTHER_DRAWS.values())
    graph = tj.jit(lambda k: [f(k) for f in calls]).lower(KEYS[0]).graph
    assert set(_primitives(graph)) & LIBM == set()
