"""The fuzzer's oracle can fail: planted errors of each class are caught, honest ones pass.

These check tests/_fuzz_check.py and the bound rules on hand-made results (no compiler):
a contracted a*b+c, a 9-ulp exp, a wrong special value, a flipped zero sign and a missed
NaN are reported; a 1-ulp exp, and a reassociated sum within its bound, are accepted.
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
