"""Random differentiable programs: smooth float64 steps and the loss sum_i <out_i, w_i>.

The steps are those of the forward fuzzer that are smooth on the drawn inputs (values in
[-2, 2], no specials): analytic unary functions on their whole domain (or composed to stay in
it: log1p(x*x), sqrt(1 + x*x), 1 / (1 + x*x)), + - *, reductions and scans (max only at distinct
values, which random floats are), layout and indexing, matmul, and the stable nn functions.
"""

from __future__ import annotations

import _fuzz_draw_structural as structural
import numpy as np
from _fuzz_ops import Pool, Step, partner
from _fuzz_programs import Program, draw_program, shapes
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SMOOTH_UNARY = [
    "np.sin({0})",
    "np.cos({0})",
    "np.tanh({0})",
    "np.exp(np.tanh({0}))",
    "np.arctan({0})",
    "np.log1p({0} * {0})",
    "np.sqrt(1 + {0} * {0})",
    "1 / (1 + {0} * {0})",
    "({0} ** 2)",
    "({0} * 0.5)",
    "F.nn.softplus({0})",
]


def smooth_unary(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="f")
    return None if a is None else Step(draw(st.sampled_from(SMOOTH_UNARY)), (a,), "smooth")


def smooth_binary(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="f")
    if a is None:
        return None
    b = partner(draw, pool, a, "f")
    op = draw(st.sampled_from(["({0} + {1})", "({0} - {1})", "({0} * {1})"]))
    return Step(op, (a, b), "smooth")


def smooth_reduction(draw, pool: Pool) -> Step | None:
    step = structural.reduction(draw, pool)
    if step is None or step.rule in ("argmax", "argmin", "std"):  # std: a kink at var = 0
        return None
    return step


DRAWERS = [
    (smooth_unary, 4),
    (smooth_binary, 4),
    (smooth_reduction, 2),
    (structural.scan, 1),
    (structural.layout, 3),
    (structural.matmul, 1),
    (structural.pattern, 1),
]
WEIGHTED = [d for d, w in DRAWERS for _ in range(w)]


@st.composite
def grad_programs(draw, max_steps: int = 5):
    """(program, inputs, weights): every value float64, inputs in [-2, 2]."""
    pool = Pool(only_dtype=np.float64)
    for _ in range(draw(st.integers(1, 2))):
        pool.add_input(draw(shapes), np.float64)
    float64 = lambda out: out.dtype == np.float64
    program = draw_program(draw, pool, WEIGHTED, max_steps, float64, 3)
    uniform = st.floats(-2, 2, allow_subnormal=False)
    args = [draw(hnp.arrays(np.float64, pool.avals[i][0], elements=uniform)) for i in pool.inputs]
    outputs = [pool.avals[i][0] for i in program.outputs]
    weights = [draw(hnp.arrays(np.float64, shape, elements=uniform)) for shape in outputs]
    return program, args, weights


def kink_gap(program: Program, args) -> float:
    """The smallest gap between the two largest (smallest) elements any max (min) reduction
    of `program` sees: finite differences across a tie would straddle the kink."""
    env = dict(zip(program.inputs, args))
    gap = np.inf
    for i, step in sorted(program.defs.items()):
        operands = [env[a] for a in step.args if isinstance(a, int)]
        if step.rule in ("max", "min") and operands[0].size:
            x = operands[0] * (1 if step.rule == "max" else -1)
            axes = step.params[0]
            n = int(np.prod([x.shape[a] for a in axes]))
            moved = np.moveaxis(x, axes, range(-len(axes), 0))
            rows = np.sort(moved.reshape(-1, n), axis=-1)
            if rows.shape[-1] >= 2:
                gap = min(gap, float(np.min(rows[:, -1] - rows[:, -2])))
        env[i] = program.values_at(env, i)
    return gap


def finite_inside(program: Program, args) -> bool:
    """Whether every floating intermediate of `program` at `args` is finite. Where one is not
    (a var with ddof equal to its length, sliced away afterwards), reverse mode multiplies a
    zero cotangent by inf or NaN and gives NaN, as JAX does, while finite differences of the
    loss stay finite: they are not an oracle there."""
    env = dict(zip(program.inputs, args))
    for i in sorted(program.defs):
        env[i] = value = np.asarray(program.values_at(env, i))
        if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
            return False
    return True
