"""The NumPy surface of tracejit.numpy: every name in the table of tests/_tnp_cases.py against
NumPy (values, dtypes, shapes) eagerly and compiled for the test device, and its gradient
against float64 central finite differences; plus a coverage check that every public name is
tested somewhere (or listed below with the reason it needs no array test). That every name
of api-targets.md is offered: tests/unit/test_api_coverage.py.

Compiled checks run each table section as one jitted function (one compile per section), so
the whole table costs a handful of compiles.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _finite_diff import numeric_grad
from _tnp_cases import CASES, COMPILED, Case

import tracejit as tj
import tracejit.numpy as tnp


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _assert_matches(got, expected, name: str):
    expected = np.asarray(expected)
    got = np.asarray(tj.device_get(got))
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(
            got, expected, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=name
        )
    else:
        np.testing.assert_array_equal(got, expected, err_msg=name)


def _expected(case: Case):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on all-NaN slices
        return _leaves(case.fn(np, *case.args))


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{i}" for i, c in enumerate(CASES)])
def test_eager_matches_numpy(case):
    got = _leaves(case.fn(tnp, *case.args))
    for g, e in zip(got, _expected(case), strict=True):
        _assert_matches(g, e, case.name)


def _chunks(cases, n: int):
    return [cases[i : i + n] for i in range(0, len(cases), n)]


@pytest.mark.parametrize("chunk", range(4))
def test_compiled_matches_numpy(device, chunk):
    """Every case traced (all arguments are jit inputs) and compiled for the test device."""
    cases = _chunks(COMPILED, -(-len(COMPILED) // 4))[chunk]
    args = [case.args for case in cases]

    def run(all_args):
        return [_leaves(case.fn(tnp, *a)) for case, a in zip(cases, all_args)]

    got = tj.jit(run, device=device)(args)
    for case, outs in zip(cases, got):
        for g, e in zip(outs, _expected(case), strict=True):
            _assert_matches(g, e, case.name)


GRAD_CASES = [c for c in CASES if c.grad]


def _float_positions(case):
    return [i for i, a in enumerate(case.args) if np.asarray(a).dtype.kind == "f"]


def _scalar_loss(m, case, args, weights):
    outs = _leaves(case.fn(m, *args))
    total = 0.0
    for o, w in zip(outs, weights):
        total = total + m.sum(o * w)
    return total


def _weights(case):
    rng = np.random.default_rng(len(case.name))
    return [rng.uniform(0.5, 1.5, np.shape(e)) for e in _expected(case)]


def _fd_grads(case):
    weights = _weights(case)
    out = []
    for i in _float_positions(case):

        def f(xi, i=i):
            args = list(case.args)
            args[i] = xi
            return _scalar_loss(np, case, args, weights)

        out.append(numeric_grad(f, np.asarray(case.args[i], np.float64)))
    return out


def _tj_grad_fn(case):
    weights = _weights(case)
    pos = _float_positions(case)

    def loss(*floats):
        args = list(case.args)
        for i, x in zip(pos, floats):
            args[i] = x
        return _scalar_loss(tnp, case, args, weights)

    return tj.grad(loss, argnums=tuple(range(len(pos))))


@pytest.mark.parametrize(
    "case", GRAD_CASES, ids=[f"{c.name}-{i}" for i, c in enumerate(GRAD_CASES)]
)
def test_gradient_matches_finite_differences(case):
    floats = [case.args[i] for i in _float_positions(case)]
    got = _tj_grad_fn(case)(*floats)
    for g, e in zip(got, _fd_grads(case), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=case.name)


# Compiled gradients of one case per way of composing: each kind of gather/scatter, scan,
# matmul and selection the table's functions are built from. (Every case's gradient is
# checked eagerly above; compiling them all would cost ~15 s of C++ compile per device.)
COMPILED_GRADS = {"logaddexp", "sort", "pad", "cumprod", "convolve", "interp", "bincount",
                  "max", "insert", "put"}  # fmt: skip


def test_compiled_gradients_match_finite_differences(device):
    cases = [c for c in GRAD_CASES if c.name in COMPILED_GRADS]
    assert {c.name for c in cases} == COMPILED_GRADS
    fns = [_tj_grad_fn(c) for c in cases]
    floats = [[c.args[i] for i in _float_positions(c)] for c in cases]
    got = tj.jit(lambda fl: [f(*xs) for f, xs in zip(fns, fl)], device=device)(floats)
    for case, grads in zip(cases, got):
        for g, e in zip(grads, _fd_grads(case), strict=True):
            g = np.asarray(tj.device_get(g))
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=case.name)


# Float-valued names of float inputs with no gradient case in the table: piecewise constant
# or constant in their inputs (a zero gradient, as JAX's, checked below), or differentiated
# through another name.
ZERO_DERIVATIVE = {"around", "round", "rint", "ceil", "trunc", "floor_divide", "spacing",
                   "heaviside", "full_like", "empty_like"}  # fmt: skip
GRADIENT_OF_ANOTHER_NAME = {
    "histogram2d": "counts are piecewise constant; the edges are histogram_bin_edges'",
    "histogramdd": "counts are piecewise constant; the edges are histogram_bin_edges'",
}


def _float_to_float(case) -> bool:
    if not _float_positions(case):
        return False
    return any(np.asarray(e).dtype.kind == "f" for e in _expected(case))


def test_every_float_name_has_a_gradient_case_or_a_reason():
    float_names = {c.name for c in CASES if _float_to_float(c)}
    covered = {c.name for c in GRAD_CASES} | ZERO_DERIVATIVE | set(GRADIENT_OF_ANOTHER_NAME)
    assert not float_names - covered, f"add gradient cases for {sorted(float_names - covered)}"
    assert not (ZERO_DERIVATIVE | set(GRADIENT_OF_ANOTHER_NAME)) - float_names


def test_piecewise_constant_names_have_zero_gradients():
    cases = [c for c in CASES if c.name in ZERO_DERIVATIVE and _float_to_float(c)]
    assert {c.name for c in cases} == ZERO_DERIVATIVE
    for case in cases:
        finite = [np.nan_to_num(a) if np.ndim(a) else a for a in case.args]
        grads = _tj_grad_fn(case._replace(args=tuple(finite)))(
            *[finite[i] for i in _float_positions(case)]
        )
        for g in grads:
            np.testing.assert_array_equal(g, np.zeros_like(g), err_msg=case.name)


# Names that are not array computations: NumPy's own objects, re-exported as they are.
NOT_ARRAY_COMPUTATIONS = {
    "NumPy's printing": {"array_repr", "array_str", "printoptions", "get_printoptions",
                         "set_printoptions"},
    "NumPy's file and buffer I/O": {"save", "savez", "load", "fromfile", "frombuffer",
                                    "fromstring", "fromiter", "frompyfunc", "from_dlpack"},
    "NumPy's einsum_path (a contraction plan for NumPy's einsum)": {"einsum_path"},
    "NumPy's type objects (tests/backend/test_tnp_dtypes.py)": {
        "ComplexWarning", "ufunc", "character", "complex64", "complex128", "complex_",
        "complexfloating", "csingle", "cdouble", "flexible", "generic", "inexact", "floating",
        "integer", "number", "object_", "signedinteger", "unsignedinteger", "int8", "int16",
        "uint", "uint8", "uint16", "uint32", "uint64", "float16", "single", "double",
        "float_", "int_", "bool_", "float32", "float64", "int32", "int64", "dtype", "finfo",
        "iinfo", "bool", "issubdtype", "promote_types", "result_type", "can_cast", "isdtype"},
}  # fmt: skip

_TESTS = Path(__file__).resolve().parents[1]


def _api_targets() -> list[str]:
    sys.path.insert(0, str(_TESTS.parent / "tools"))
    from api_coverage import DEFAULT, targets

    return targets(DEFAULT.read_text())["tracejit.numpy"]


def _tested_elsewhere(names) -> set[str]:
    """Names other tnp test files call as `tnp.<name>`/`m.<name>` or check by string name."""
    src = "".join(
        p.read_text() for p in _TESTS.glob("*/test_*.py") if p.name != Path(__file__).name
    )
    return {n for n in names if re.search(rf"\b(?:tnp|m)\.{re.escape(n)}\b|[\"']{n}[\"']", src)}


def test_every_offered_name_is_tested():
    offered = [n for n in _api_targets() if hasattr(tnp, n)]
    exempt = set().union(*NOT_ARRAY_COMPUTATIONS.values())
    table = {c.name for c in CASES}
    untested = set(offered) - table - exempt - _tested_elsewhere(offered)
    assert not untested, f"add these to tests/_tnp_cases.py: {sorted(untested)}"


def test_modules_show_only_their_public_names():
    for module in (tnp.linalg, tnp.fft):
        assert {n for n in dir(module) if not n.startswith("_")} == set(module.__all__)
    for module in (tnp, tnp.linalg, tnp.fft):  # internals of tnp's own modules stay inside
        for leaked in ("np", "Tracer", "bind", "builtins", "math", "dtypes", "promote"):
            assert not hasattr(module, leaked), (module.__name__, leaked)
