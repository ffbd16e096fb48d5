"""Random differentiable programs: smooth float64 (or float32) steps and the loss
sum_i <out_i, w_i>.

The steps are those of the forward fuzzer that are smooth on the drawn inputs (values in
[-2, 2], no specials): analytic unary functions on their whole domain (or composed to stay in
it: log1p(x*x), sqrt(1 + x*x), 1 / (1 + x*x)), + - *, reductions and scans (max only at distinct
values, which random floats are), layout and indexing, matmul, and the stable nn functions.
"""

from __future__ import annotations

import _fuzz_draw_index as index
import _fuzz_draw_loops as loops
import _fuzz_draw_order as order
import _fuzz_draw_structural as structural
import _fuzz_linalg as linalg
import numpy as np
from _fuzz_ops import Pool, Step, partner
from _fuzz_programs import Program, draw_program, shapes
from _fuzz_values import index_arrays
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


def smooth_loop(draw, pool: Pool) -> Step | None:
    """fori_loop, while_loop, scan and cond over a smooth body."""
    return loops.loop(draw, pool, (smooth_unary, smooth_binary))


def real_fft(draw, pool: Pool) -> Step | None:
    """The FFTs with real outputs: parts of fft/ifft/rfft/fft2 and irfft(rfft(x))."""
    a = pool.pick(draw, kinds="f", min_ndim=1)
    if a is None:
        return None
    ndim = len(pool.shape(a))
    axis = draw(st.integers(-ndim, ndim - 1))
    part = draw(st.sampled_from(["real", "imag"]))
    norm = draw(st.sampled_from([None, "ortho", "forward"]))
    kind = draw(st.sampled_from(["fft", "ifft", "rfft", "irfft", "fft2"]))
    if kind == "irfft":
        n = pool.shape(a)[axis]
        text = f"np.fft.irfft(np.fft.rfft({{0}}, axis={axis}), n={n}, axis={axis}, norm={norm!r})"
        return Step(text, (a,), "smooth")
    if kind == "fft2":
        if ndim < 2:
            return None
        return Step(f"np.{part}(np.fft.fft2({{0}}, norm={norm!r}))", (a,), "smooth")
    return Step(f"np.{part}(np.fft.{kind}({{0}}, axis={axis}, norm={norm!r}))", (a,), "smooth")


def smooth_linalg(draw, pool: Pool) -> Step | None:
    """solve, inv, det, log|det|, cholesky, eigenvalues, singular values: smooth
    where the matrix is nonsingular and the eigenvalues (singular values) distinct."""
    step = linalg.linalg(draw, pool)
    if step.params[0] in ("slogdet0", "eigvech", "qr_q", "qr_r") or step.params[0].endswith(
        "_res"
    ):  # kinks of |.| at 0 (and of a norm of a residual near 0)
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
    (index.gather, 1),
    (index.scatter, 1),
    (index.dynamic_slice, 1),
    (smooth_loop, 2),
    (order.sort, 1),
    (order.quantile, 1),
    (real_fft, 1),
    (smooth_linalg, 1),
]
WEIGHTED = [d for d, w in DRAWERS for _ in range(w)]


@st.composite
def grad_programs(draw, max_steps: int = 5):
    """(program, inputs, weights): every value float64 (one program in four float32),
    inputs in [-2, 2] (float32 ones: float64 draws rounded)."""
    dtype = np.dtype(np.float32 if draw(st.integers(0, 3)) == 0 else np.float64)
    pool = Pool(only_dtype=dtype)
    for _ in range(draw(st.integers(1, 2))):
        pool.add_input(draw(shapes), dtype)
    of_dtype = lambda out: out.dtype == dtype
    program = draw_program(draw, pool, WEIGHTED, max_steps, of_dtype, 3)
    uniform = st.floats(-2, 2, allow_subnormal=False)
    args = [
        draw(index_arrays(*pool.avals[i], *pool.ranges[i]))
        if i in pool.ranges
        else draw(hnp.arrays(np.float64, pool.avals[i][0], elements=uniform)).astype(dtype)
        for i in pool.inputs
    ]
    outputs = [pool.avals[i][0] for i in program.outputs]
    weights = [draw(hnp.arrays(np.float64, shape, elements=uniform)).astype(dtype)
               for shape in outputs]  # fmt: skip
    return program, args, weights


def kink_gap(program: Program, args, max_kappa: float = 1e6) -> float:
    """The smallest distance to a kink any step of `program` sees: the gap between the two
    largest (smallest) elements of a max (min) reduction, between any two elements a sort
    or quantile orders, between eigenvalues (singular values, and these from 0), and 0 for
    a matrix too ill-conditioned (kappa > max_kappa) for its inverse's derivatives: finite
    differences across a kink would straddle it (and a float32 gradient through such a
    matrix is kappa u off)."""
    env = dict(zip(program.inputs, args))
    gap = np.inf
    for i, step in sorted(program.defs.items()):
        operands = [env[a] for a in step.args if isinstance(a, int)]
        env[i] = program.values_at(env, i)
        if step.rule in ("max", "min") and operands[0].size:
            x = operands[0] * (1 if step.rule == "max" else -1)
            rows = _rows(x, step.params[0])
            if rows.shape[-1] >= 2:
                gap = min(gap, float(np.min(rows[:, -1] - rows[:, -2])))
        elif step.rule in ("sort", "quantile") and operands[0].size:
            axes = step.params[0]
            axes = range(operands[0].ndim) if axes is None else axes
            # (floats: a quantile of traced indices sorts integers)
            rows = _rows(operands[0] * 1.0, (axes,) if isinstance(axes, int) else tuple(axes))
            gap = min(gap, float(np.min(np.diff(rows, axis=-1), initial=np.inf)))
        elif step.rule == "linalg":
            gap = min(gap, _linalg_gap(step.params[0], operands[0], env[i], max_kappa))
    return gap


def _rows(x, axes):
    """x's elements along `axes`, sorted, one row per other index."""
    n = int(np.prod([x.shape[a] for a in axes]))
    moved = np.moveaxis(x, axes, range(-len(axes), 0))
    return np.sort(moved.reshape(-1, n), axis=-1)


def _linalg_gap(kind: str, a, out, max_kappa: float) -> float:
    if kind in ("eigvalsh", "svdvals"):
        values = np.sort(out, axis=-1)
        gap = float(np.min(np.diff(values, axis=-1), initial=np.inf))
        return min(gap, float(np.min(np.abs(values)))) if kind == "svdvals" else gap
    m = a @ np.swapaxes(a, -1, -2) + a.shape[-1] * np.eye(a.shape[-1]) if kind == "cholesky" else a
    # a singular value within 1e-3 of 0: the FD step of 1e-6 may cross the singularity
    # (log|det [[2e-215]]| differenced gives 0, its derivative is 5e214)
    tiny = np.min(np.linalg.svd(m, compute_uv=False), initial=np.inf) < 1e-3
    return 0.0 if tiny or np.any(np.linalg.cond(m) > max_kappa) else np.inf


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
