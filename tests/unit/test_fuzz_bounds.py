"""The fuzzer's oracle can fail: planted errors of each class are caught, honest ones pass.

These check tests/_fuzz_check.py and the bound rules on hand-made results (no compiler):
a contracted a*b+c, a 9-ulp exp, a wrong special value, a flipped zero sign and a missed
NaN are reported; a 1-ulp exp, and a reassociated sum within its bound, are accepted.
cumprod's contract is NumPy's order: a log-depth (reassociated) or shifted scan is reported,
products of inexact factors are accepted within their bound.
"""

from __future__ import annotations

import numpy as np
from _fuzz_check import mismatch
from _fuzz_ops import Step
from _fuzz_programs import Program

F64 = np.dtype(np.float64)


def _program(*steps: Step, n_inputs: int, shape=(3,)) -> Program:
    defs = {n_inputs + i: s for i, s in enumerate(steps)}
    avals = [(shape, F64)] * (n_inputs + len(steps))
    return Program(avals, defs, list(range(n_inputs)), (n_inputs + len(steps) - 1,))


def _ulps(x, n):
    return x + n * np.spacing(np.abs(x))


def test_a_contracted_multiply_add_is_caught():
    a = np.array([1 + 2.0**-30, 1.5, -2.0])
    c = np.array([-(1 + 2.0**-29), 0.25, 1.0])
    program = _program(
        Step("({0} * {1})", (0, 0), "mul"), Step("({0} + {1})", (2, 1), "add"), n_inputs=2
    )
    (want,) = program.shadows([a, c])
    fused = want.value.copy()
    fused[0] = 2.0**-60  # fma(a, a, c): the product's rounding error survives
    assert want.err[0] == 0  # exact operands, IEEE ops: one right answer
    assert mismatch(fused, want, "fma") is not None
    assert mismatch(want.value.copy(), want, "same") is None


def test_libm_results_within_the_stated_ulps_pass_and_beyond_fail():
    x = np.array([0.3, -2.0, 10.0])
    program = _program(Step("np.exp({0})", (0,), "libm:exp"), n_inputs=1)
    (want,) = program.shadows([x])
    assert mismatch(_ulps(want.value, 1), want, "1 ulp") is None
    assert mismatch(_ulps(want.value, 9), want, "9 ulp") is not None


def test_special_values_and_zero_signs_are_exact():
    x = np.array([-np.inf, np.nan, -0.0])
    program = _program(Step("np.exp({0})", (0,), "libm:exp"), n_inputs=1)
    (want,) = program.shadows([x])
    assert list(want.err) == [0.0, 0.0, 0.0]
    assert mismatch(np.array([1e-300, np.nan, 1.0]), want, "tiny") is not None
    assert mismatch(np.array([0.0, 0.5, 1.0]), want, "nan lost") is not None
    neg = _program(Step("np.negative({0})", (0,), "exact"), n_inputs=1)
    (zero,) = neg.shadows([np.array([0.0, 1.0, 2.0])])
    assert mismatch(np.array([0.0, -1.0, -2.0]), zero, "sign") is not None


def test_a_reassociated_sum_is_within_its_bound():
    x = np.array([1e16, 1.0, -1e16, 1.0])
    program = _program(Step("np.sum({0}, axis=0)", (0,), "sum", ((0,), False, 0)), n_inputs=1)
    program.avals[-1] = ((), F64)
    (want,) = program.shadows([x])
    sequential = ((1e16 + 1.0) + -1e16) + 1.0  # 1.0 where NumPy's pairwise order gives 2.0
    assert mismatch(np.array(sequential), want, "order") is None
    assert mismatch(np.array(1e3), want, "wrong") is not None


def _cumprod(x, *, nan=False, exp_first=False):
    """The Shadow of (nan)cumprod along axis 0 of a 1-d float64 `x` (or of exp(x))."""
    name = "nancumprod" if nan else "cumprod"

    def scan(arg: int) -> Step:
        return Step(f"np.{name}({{0}}, axis=0)", (arg,), name, (0, False))

    steps = [Step("np.exp({0})", (0,), "libm:exp"), scan(1)] if exp_first else [scan(0)]
    (want,) = _program(*steps, n_inputs=1, shape=x.shape).shadows([x])
    return want


def _log_depth_cumprod(x):
    """Hillis-Steele: the products of the same prefixes, associated by halves."""
    y = x.copy()
    s = 1
    while s < len(y):
        with np.errstate(over="ignore"):
            y = np.concatenate([y[:s], y[s:] * y[:-s]])
        s *= 2
    return y


def test_a_reassociated_or_shifted_cumprod_is_caught():
    big = np.array([1e200, 1e200, 1e-200, 2.0])  # sequential: inf from the second on
    want = _cumprod(big)
    assert np.isinf(want.value[1:]).all() and not want.err.any() and not want.unk.any()
    assert mismatch(_log_depth_cumprod(big), want, "log-depth") is not None  # 1e200 at 2
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, 16)
    want = _cumprod(x)
    assert mismatch(np.cumprod(x), want, "numpy's order") is None
    assert mismatch(_log_depth_cumprod(x), want, "reassociated") is not None
    shifted = np.concatenate([[1.0], np.cumprod(x)[:-1]])
    assert mismatch(shifted, want, "exclusive scan") is not None


def test_cumprod_of_inexact_factors_is_within_its_bound_and_not_beyond():
    x = np.random.default_rng(1).uniform(-0.7, 0.7, 40)
    want = _cumprod(x, exp_first=True)
    for ulps in (-4, 4):  # an exp within its stated accuracy, then NumPy's products
        assert mismatch(np.cumprod(_ulps(np.exp(x), ulps)), want, f"exp {ulps} ulp") is None
    rel = want.err[1:] / np.abs(want.value[1:])
    assert np.all(rel < 300 * 2.0**-53)  # ~ (k/2 + 4 (k + 1)) u after k products
    assert mismatch(_ulps(want.value, 400), want, "400 ulp") is not None


def test_nancumprod_takes_nan_as_an_exact_one():
    x = np.array([2.0, np.nan, -0.0, np.inf])
    want = _cumprod(x, nan=True)
    assert mismatch(np.array([2.0, 2.0, -0.0, np.nan]), want, "numpy") is None
    assert not want.err.any() and not want.unk.any()
    assert mismatch(np.array([2.0, np.nan, np.nan, np.nan]), want, "nan kept") is not None
    assert mismatch(np.array([2.0, 2.0, 0.0, np.nan]), want, "zero sign") is not None


def test_round_of_a_clipped_signed_zero_allows_either_zero():
    # found on an H200's NumPy: round(clip(-0.0, 0.0, 2)) is -0.0 from np.clip and +0.0 from
    # np.maximum then np.minimum (the reference interpreter): max(-0.0, 0.0) may be either zero
    x = np.array([-0.0, 0.5, 3.0])
    program = _program(
        Step("np.clip({0}, 0.0, 2)", (0,), "clip", (0.0, 2)),
        Step("np.round({0})", (1,), "jump_half"),
        n_inputs=1,
    )
    (want,) = program.shadows([x])
    assert mismatch(np.array([0.0, 0.0, 2.0]), want, "+0") is None
    assert mismatch(np.array([-0.0, 0.0, 2.0]), want, "-0") is None
    assert mismatch(np.array([0.0, 1.0, 2.0]), want, "wrong") is not None


def test_softmax_far_below_its_maximum_allows_the_shifts_rounding():
    # an H200: e**(-433.00001...) computed from differently rounded shifts differed by 2.5e-14
    # relatively, in the compiled program and the reference interpreter alike
    x = np.array([1.66880539e-308, -5.11887117e000, 1.0e-5, -4.33e2])
    program = _program(
        Step("F.nn.softmax({0}, axis=0)", (0,), "softmax", ((0,),), "F.softmax({0}, (0,))"),
        n_inputs=1,
        shape=(4,),
    )
    (want,) = program.shadows([x])
    shifted = want.value.copy()
    shifted[3] *= 1 + 2.5e-14
    assert mismatch(shifted, want, "shift") is None
    shifted[3] *= 1 + 1e-11
    assert mismatch(shifted, want, "beyond") is not None


def test_finite_differences_are_no_oracle_through_a_nonfinite_intermediate():
    # an H200 campaign: var(ddof=1) over a length-1 axis is NaN, sliced away; reverse mode
    # gives 0 * NaN = NaN there (as JAX), the loss's finite differences a finite number
    from _fuzz_grads import finite_inside

    program = _program(
        Step("np.log({0})", (0,), "libm:log"), Step("({0} * 0.0)", (1,), "mul"), n_inputs=1
    )
    assert finite_inside(program, [np.array([1.0, 2.0, 3.0])])
    assert not finite_inside(program, [np.array([1.0, -2.0, 3.0])])


def test_a_product_of_a_signed_zero_tie_allows_either_zero():
    # the same tie through cumprod's products (0.5 * TINY rounds to 0): a CPU campaign
    x = np.array([-0.0, 0.25, 3.0])
    program = _program(
        Step("np.clip({0}, 0, 0.5)", (0,), "clip", (0, 0.5)),
        Step("np.cumprod({0}, axis=-1)", (1,), "cumprod", (-1, None)),
        n_inputs=1,
    )
    (want,) = program.shadows([x])
    for first in (0.0, -0.0):
        got = np.array([first, first * 0.25, first * 0.125])
        assert mismatch(got, want, "either zero") is None
    assert mismatch(np.array([0.0, 0.125, 0.0]), want, "wrong") is not None
