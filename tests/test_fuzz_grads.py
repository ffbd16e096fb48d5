"""The gradient fuzzer: random smooth programs (tests/_fuzz_grads.py), differentiated.

For the loss L(xs) = sum_i <out_i(xs), w_i> of a random float64 program, the compiled
gradient `tj.jit(tj.grad(L), device=...)` is checked against
1. the eager gradient `tj.grad(L)` (the reference interpreter), rtol 1e-9 / atol 1e-12 of the
   gradient's largest entry: the two differ only by libm (<= 4 ulp per call) and summation
   order, ~1e-16 per operation over chains of at most ~30 operations on inputs in [-2, 2]; a
   wrong rule, index or layout is off by O(1);
2. central finite differences of NumPy running the same source in float64 (eps = 1e-6:
   truncation ~eps^2 |f'''| and cancellation ~1e-16 |L| / eps, both below 1e-6 of the loss
   scale here), within 1e-5 of max(1, |L|, max |gradient|).
"""

from __future__ import annotations

import numpy as np
from _finite_diff import numeric_grad
from _fuzz_check import STATS
from _fuzz_grads import grad_programs, kink_gap
from _fuzz_settings import GRADIENT_SETTINGS
from hypothesis import given, reject

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracejitError

EAGER_RTOL = 1e-9
FD_RTOL = 1e-5
KINK_GAP = 1e-3  # max/min reductions: FD steps of 1e-6 stay on one side of every tie


def _loss_of(program):
    f = program.traced()

    def loss(xs, ws):
        return sum(tnp.sum(o * w) for o, w in zip(f(*xs), ws))

    return loss


def _numpy_loss(program, weights):
    def loss(xs):
        return float(sum(np.sum(o * w) for o, w in zip(program.values(xs), weights)))

    return loss


def _close(got, want, tol) -> bool:
    return all(np.all(np.abs(g - w) <= tol) for g, w in zip(got, want))


@GRADIENT_SETTINGS
@given(case=grad_programs())
def test_compiled_gradient_matches_eager_and_finite_differences(case, device):
    program, args, weights = case
    numpy_loss = _numpy_loss(program, weights)
    value = numpy_loss(args)
    if not np.isfinite(value) or kink_gap(program, args) < KINK_GAP:
        reject()
    fd = [
        numeric_grad(lambda x, i=i: numpy_loss(args[:i] + [x] + args[i + 1 :]), a)
        for i, a in enumerate(args)
    ]
    loss = _loss_of(program)
    try:
        compiled = tj.device_get(tj.jit(tj.grad(loss), device=device)(args, weights))
    except TracejitError as e:  # a named refusal is not a wrong result: counted, not compared
        STATS[f"grad refused on {device}: {type(e).__name__}: {str(e)[:50]}"] += 1
        reject()
    eager = tj.grad(loss)(args, weights)
    scale = max([1.0, abs(value)] + [float(np.max(np.abs(g), initial=0)) for g in fd])
    STATS[f"gradient programs on {device}"] += 1
    report = f"{program!r}\nargs={args!r}\nweights={weights!r}\nfd={fd!r}"
    assert _close(compiled, eager, EAGER_RTOL * scale), f"compiled vs eager\n{report}\n{compiled}"
    assert _close(compiled, fd, FD_RTOL * scale), f"compiled vs FD\n{report}\n{compiled}"
