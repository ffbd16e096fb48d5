"""The gradient fuzzer: random smooth programs (tests/_fuzz_grads.py), differentiated.

For the loss L(xs) = sum_i <out_i(xs), w_i> of each random float64 (or float32) program, the compiled
gradient (one `tj.jit(tj.grad(...), device=...)` over a batch of programs' summed losses)
is checked against
1. the eager gradient `tj.grad(L)` (the reference interpreter), within 1e-9 of the gradient
   scale (max(1, |L|, max |gradient|)): the two differ only by libm (<= 4 ulp per call) and
   summation order, ~1e-16 per operation over chains of at most ~30 operations on inputs in
   [-2, 2]; a wrong rule, index or layout is off by O(1);
2. central finite differences of NumPy running the same source in float64 (eps = 1e-6:
   truncation ~eps^2 |f'''| and cancellation ~1e-16 |L| / eps, both far below 1e-5 of the
   gradient scale here), within 1e-5 of that scale. Programs with a max/min reduction whose
   two largest (smallest) operands are within KINK_GAP are skipped: the difference would
   straddle the kink.
A float32 program (one in four) is checked against the float64 program's differences, and
its eager gradient (also float32), within the F32_ tolerances below.
"""

from __future__ import annotations

import sys

import numpy as np
from _finite_diff import numeric_grad
from _fuzz_batch import run_batch
from _fuzz_check import STATS
from _fuzz_grads import finite_inside, grad_programs, kink_gap
from _fuzz_settings import BATCH, GRADIENT_SETTINGS
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp

EAGER_RTOL = 1e-9
FD_RTOL = 1e-5
KINK_GAP = 1e-3  # FD steps of 1e-6 stay on one side of every max/min tie
# float32 programs: compiled and eager both round in float32 (libm and order apart), the
# differences are of the float64 program: ~30 operations of u = 6e-8, times the condition
# (a matrix's kappa at most F32_KAPPA: a gradient through its inverse sees kappa^2 u)
F32_EAGER_RTOL = 1e-3
F32_FD_RTOL = 3e-3
F32_KAPPA = 100.0


def _merged(floats, ints, is_int):
    """The program's arguments in order from its float and its integer (index) inputs."""
    floats, ints = iter(floats), iter(ints)
    return [next(ints) if i else next(floats) for i in is_int]


def _split(args):
    """(float inputs, traced index inputs): only the floats are differentiated."""
    return [a for a in args if a.dtype.kind == "f"], [a for a in args if a.dtype.kind != "f"]


def _gradient_of(program, args):
    """(xs, ints, ws) -> d/dxs sum_i <out_i(xs, ints), w_i>, for tj.jit and eagerly."""
    f = program.traced()
    is_int = [a.dtype.kind != "f" for a in args]

    def loss(xs, ints, ws):
        return sum(tnp.sum(o * w) for o, w in zip(f(*_merged(xs, ints, is_int)), ws))

    return lambda xs, ints, ws: tj.grad(loss)(xs, ints, ws)


def _numpy_loss(program, weights):
    def loss(xs):
        return float(sum(np.sum(o * w) for o, w in zip(program.values(xs), weights)))

    return loss


def _float64(values):
    return [v.astype(np.float64) if v.dtype.kind == "f" else v for v in values]


def _is_float32(args) -> bool:
    return any(a.dtype == np.float32 for a in args)


def _checked(program, args, weights):
    """Central differences of the NumPy loss in float64 (a float32 program's inputs and
    weights widened), or None where FD is not a valid oracle."""
    f32 = _is_float32(args)
    if not finite_inside(program, args):
        return None
    args, weights = _float64(args), _float64(weights)
    numpy_loss = _numpy_loss(program, weights)
    value = numpy_loss(args)
    if not np.isfinite(value) or not finite_inside(program, args):
        return None
    if kink_gap(program, args, F32_KAPPA if f32 else 1e6) < KINK_GAP:
        return None
    fd, fd_quarter = (
        [
            numeric_grad(lambda x, i=i: numpy_loss(args[:i] + [x] + args[i + 1 :]), a, eps)
            for i, a in enumerate(args)
            if a.dtype.kind == "f"
        ]
        for eps in (1e-6, 2.5e-7)
    )
    scale = max([1.0, abs(value)] + [float(np.max(np.abs(g), initial=0)) for g in fd])
    # differences that change with the step do not converge there (sin of a cumprod near
    # 1e8 turns within one step): no oracle
    if _far(fd, fd_quarter, FD_RTOL * scale):
        return None
    return fd, scale


def _far(got, want, tol) -> bool:
    return not all(np.all(np.abs(g - w) <= tol) for g, w in zip(got, want))


@GRADIENT_SETTINGS
@given(batch=st.lists(grad_programs(), min_size=1, max_size=BATCH))
def test_compiled_gradients_match_eager_and_finite_differences(batch, device):
    oracles = [_checked(*case) for case in batch]
    batch = [case for case, o in zip(batch, oracles) if o is not None]
    oracles = [o for o in oracles if o is not None]
    functions = [_gradient_of(program, args) for program, args, _ in batch]
    arg_lists = [(*_split(args), weights) for _, args, weights in batch]
    compiled = run_batch(functions, arg_lists, device)
    problems = []
    for (program, args, weights), got, (fd, scale) in zip(batch, compiled, oracles):
        if got is None:
            continue
        eager = _gradient_of(program, args)(*_split(args), weights)
        STATS[f"gradient programs on {device}"] += 1
        with np.printoptions(floatmode="unique", threshold=sys.maxsize):  # replayable
            report = f"{program!r}\nargs={args!r}\nweights={weights!r}\nfd={fd!r}\ngot={got!r}"
        f32 = _is_float32(args)
        STATS[f"float32 gradient programs on {device}"] += f32
        if _far(got, eager, (F32_EAGER_RTOL if f32 else EAGER_RTOL) * scale):
            problems.append(f"compiled vs eager\n{report}\neager={eager!r}")
        elif _far(got, fd, (F32_FD_RTOL if f32 else FD_RTOL) * scale):
            problems.append(f"compiled vs finite differences\n{report}")
    STATS[f"mismatching gradient programs on {device}"] += len(problems)
    assert not problems, "\n\n".join(problems)
