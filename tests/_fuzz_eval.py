"""Evaluate a fuzzed step on NumPy shadows: NumPy's value and the step's error bound."""

from __future__ import annotations

import operator
import warnings

import _fuzz_bf16 as bf16
import _fuzz_complex as cx
import _fuzz_lax as lax
import _fuzz_linalg as linalg
import _fuzz_order as order
import _fuzz_patterns as patterns
import _fuzz_reduce as red
import _fuzz_rules as rules
import ml_dtypes
import numpy as np
from _fuzz_bounds import Shadow, exact, finish
from _fuzz_ops import Step

COMPARISONS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


class NumpyNN:
    """tj.nn's elementwise functions in NumPy (the oracles of `F.nn.` steps)."""

    sigmoid = staticmethod(patterns.NN_ORACLES["sigmoid"])
    log_sigmoid = staticmethod(patterns.NN_ORACLES["log_sigmoid"])
    softplus = staticmethod(patterns.NN_ORACLES["softplus"])


def _at_set(x, index, value):
    y = x.copy()
    y[index] = value
    return y


def _at_add(x, index, value):
    y = x.copy()
    y[index] += value
    return y


def _clamped(index, n: int):
    """JAX's gather indices: negative ones from the end, then clipped to [0, n - 1]."""
    index = np.asarray(index)
    return np.clip(np.where(index < 0, index + n, index), 0, n - 1).astype(index.dtype)


def _erf(x):
    return np.asarray(rules.math_erf(np.asarray(x, np.float64))).astype(x.dtype)


class NumpyF:
    """The `F.` names on the NumPy side (the traced side uses tracejit's)."""

    nn = NumpyNN
    lax = lax.NumpyLax
    linalg = linalg.NumpyLinalg
    bfloat16 = ml_dtypes.bfloat16
    erf = staticmethod(_erf)
    at_set = staticmethod(_at_set)
    at_add = staticmethod(_at_add)
    clamped = staticmethod(_clamped)
    logsumexp = staticmethod(patterns.logsumexp)
    log_softmax = staticmethod(patterns.log_softmax)
    softmax = staticmethod(patterns.softmax)


ELEMENTWISE = {
    "exact": rules.exact_rule,
    "add": rules.add_rule,
    "mul": rules.mul_rule,
    "div": rules.div_rule,
    "square": rules.square_rule,
    "reciprocal": rules.reciprocal_rule,
    "sqrt": rules.sqrt_rule,
    "sign": rules.sign_rule,
    "minmax": rules.minmax_rule,
    "compare": rules.compare_rule,
    "jump_int": rules.jump_rule("int"),
    "jump_half": rules.jump_rule("half"),
    "divmod": rules.divmod_rule,
    "pow": rules.pow_rule,
    "atan2": rules.atan2_rule,
    "convert": rules.convert_rule,
    "c_make": cx.c_make_rule,
    "c_add": cx.c_add_rule,
    "c_mul": cx.c_mul_rule,
    "c_div": cx.c_div_rule,
    "c_abs": cx.c_abs_rule,
    "c_exact": cx.c_exact_rule,
    **{"nn:" + k: v for k, v in patterns.NN_RULES.items()},
    **{"libm:" + k: v for k, v in rules.UNARY_LIBM.items()},
}


SCANS = {"cumsum": red.cumsum_rule, "cumprod": red.cumprod_rule, "nancumprod": red.nancumprod_rule}


def run_text(text: str, values: list) -> np.ndarray:
    """Evaluate a step's text with NumPy; `values` are arrays or literal texts (which stay
    weak Python scalars, as in the traced source)."""
    names = [v if isinstance(v, str) else f"v{i}" for i, v in enumerate(values)]
    env = {"np": np, "F": NumpyF}
    env.update({n: v for n, v in zip(names, values) if not isinstance(v, str)})
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean/var of empty slices
        return np.asarray(eval(text.format(*names), env))


def operand(arg, like: list[Shadow], shadows: dict) -> Shadow:
    """The Shadow of a step argument: a value, or a weak literal in its operand's dtype."""
    if isinstance(arg, int):
        return shadows[arg]
    dtypes = [s.value.dtype for s in like]
    value = eval(arg)
    dtype = np.result_type(*dtypes, value) if dtypes else np.result_type(value)
    with np.errstate(all="ignore"):
        return exact(np.asarray(value).astype(dtype))


def broadcast(s: Shadow, shape) -> Shadow:
    return Shadow(
        np.broadcast_to(s.value, shape),
        np.broadcast_to(s.err, shape),
        np.broadcast_to(s.unk, shape),
    )


def evaluate_step(step: Step, shadows: dict) -> Shadow:
    """NumPy's value of `step` and its bound; `shadows` maps value index -> Shadow."""
    ints = [shadows[a] for a in step.args if isinstance(a, int)]
    args = [operand(a, ints, shadows) for a in step.args]
    texts = [s.value if isinstance(a, int) else a for a, s in zip(step.args, args)]
    out = run_text(step.oracle or step.text, texts)
    if step.rule == "bf16":
        return bf16.bf16_rule(out, args, *step.params)
    if step.rule == "linalg":
        return linalg.linalg_rule(out, args, *step.params)
    if step.rule == "assoc":
        return lax.assoc_shadow(step, out, args[0])
    if step.rule == "loop":
        return lax.loop_shadow(step, out, args, evaluate_step)
    if step.rule == "gather":
        return _gather(step, out, args)
    if step.rule in ("scatter_set", "scatter_add"):
        return _scatter(step, out, *args)
    if step.rule == "layout":
        err = run_text(step.text, [s.err for s in args])
        unk = run_text(step.text, [s.unk for s in args])
        return finish(out, err.astype(np.float64), unk.astype(bool))
    if step.rule == "select":
        return _select(step, out, [broadcast(s, out.shape) for s in args])
    if step.rule == "searchsorted":
        return order.searchsorted_rule(out, *args)
    if step.rule == "c_func":
        return cx.c_func_rule(out, args[0], *step.params)
    if step.rule == "c_pow":
        return cx.c_pow_rule(out, args[0], *step.params)
    if step.rule in ELEMENTWISE or step.rule.startswith("where") or step.rule == "clip":
        return _elementwise(step, out, [broadcast(s, out.shape) for s in args])
    return _structural(step, out, args)


def _elementwise(step: Step, out, args: list[Shadow]) -> Shadow:
    if step.rule in ("where_cmp", "where_cmp2"):
        x, y = args[0], args[1]
        cond = exact(COMPARISONS[step.params[0]](x.value, y.value))
        cond = rules.compare_rule(cond.value, x, y)
        picks = (x, args[2]) if step.rule == "where_cmp" else (y, x)
        return rules.where_rule(out, cond, *picks)
    if step.rule == "where":
        return rules.where_rule(out, *args)
    if step.rule == "clip":
        lo, hi = (exact(np.asarray(p).astype(out.dtype)) for p in step.params)
        lo, hi = broadcast(lo, out.shape), broadcast(hi, out.shape)
        with np.errstate(all="ignore"):
            low = rules.minmax_rule(np.maximum(args[0].value, lo.value), args[0], lo)
        return rules.minmax_rule(out, low, hi)
    return ELEMENTWISE[step.rule](out, *args)


def _gather(step: Step, out, args: list[Shadow]) -> Shadow:
    """Indexing by exact integer operands: the first `params[0]` operands' bounds and
    undecided marks move with their values; an undecided index decides nothing."""
    ndata = step.params[0]
    text = step.oracle or step.text
    err = run_text(text, [s.err if k < ndata else s.value for k, s in enumerate(args)])
    unk = run_text(text, [s.unk if k < ndata else s.value for k, s in enumerate(args)])
    index_unk = any(bool(np.any(s.unk | (s.err > 0))) for s in args[ndata:])
    return finish(out, err.astype(np.float64), unk.astype(bool) | index_unk)


def _scatter(step: Step, out, x: Shadow, idx: Shadow, v: Shadow) -> Shadow:
    """x.at[idx].set(v) / .add(v) at distinct positions idx (a scatter without collisions)."""

    def put(field):
        zeros = np.zeros(out.shape, np.asarray(field).dtype)
        return run_text("F.at_set({0}, {1}, {2})", [zeros, idx.value, field])

    mask = put(np.ones(v.value.shape, bool))
    if step.rule == "scatter_set":
        err, unk = np.where(mask, put(v.err), x.err), np.where(mask, put(v.unk), x.unk)
    else:
        added = rules.add_rule(out, x, Shadow(put(v.value), put(v.err), put(v.unk)))
        err, unk = np.where(mask, added.err, x.err), np.where(mask, added.unk, x.unk)
    return finish(out, err, unk | bool(np.any(idx.unk)))


def _select(step: Step, out, args: list[Shadow]) -> Shadow:
    """np.select([x OP1 c1, x OP2 c2], [y, z], default): where(c1, y, where(c2, z, default))."""
    x, y, z = args
    op1, op2, lit1, lit2, default = step.params
    conds = []
    for op, lit in ((op1, lit1), (op2, lit2)):
        c = operand(lit, [x], {})
        value = exact(COMPARISONS[op](x.value, c.value))
        conds.append(rules.compare_rule(value.value, x, broadcast(c, out.shape)))
    d = broadcast(exact(np.asarray(eval(default)).astype(out.dtype)), out.shape)
    inner = rules.where_rule(np.where(conds[1].value, z.value, d.value), conds[1], z, d)
    return rules.where_rule(out, conds[0], y, inner)


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _structural(step: Step, out, args: list[Shadow]) -> Shadow:
    if step.rule == "matmul":
        return red.matmul_rule(out, *args)
    (a,) = args
    if step.rule in ("at_set", "at_add"):
        return _at_update(step, out, a)
    if step.rule == "c_sum":
        return cx.c_sum_rule(out, a, step.params[0])
    if step.rule == "fft":
        return cx.fft_rule(out, a, *step.params)
    if step.rule in ("sort", "argsort"):
        return getattr(order, f"{step.rule}_rule")(out, a, step.params[0])
    if step.rule == "quantile":
        return order.quantile_rule(out, a, *step.params)
    if step.rule in ("is_max", "along"):
        return _argmax_pattern(step, out, a)
    if step.rule in ("argmax", "argmin", *SCANS):
        axis, _ = step.params
        if axis is None:
            flat = Shadow(a.value.ravel(), a.err.ravel(), a.unk.ravel())
            a, axis = flat, 0
        if step.rule in SCANS:
            return reshaped(SCANS[step.rule](out.reshape(a.value.shape), a, axis), out.shape)
        keep = out.reshape(_keepdims_shape(a.value.shape, (axis,)))
        return reshaped(red.arg_rule(keep, a, axis, step.rule == "argmax"), out.shape)
    axes = step.params[0]
    if step.rule in ("log_softmax", "softmax"):
        return getattr(patterns, f"{step.rule}_rule")(out, a, axes)
    keep = out.reshape(_keepdims_shape(a.value.shape, axes))
    if step.rule == "lse":
        return reshaped(patterns.logsumexp_rule(keep, a, axes), out.shape)
    if step.rule in ("var", "std"):
        return reshaped(_var_or_std(step, keep, a, axes), out.shape)
    rule = {
        "sum": red.sum_rule,
        "prod": red.prod_rule,
        "mean": red.mean_rule,
        "max": red.extremum_rule,
        "min": red.extremum_rule,
    }[step.rule]
    return reshaped(rule(keep, a, axes), out.shape)


def _var_or_std(step: Step, keep, a: Shadow, axes) -> Shadow:
    ddof = step.params[2]
    if step.rule == "var":
        return red.var_rule(keep, a, axes, ddof)
    var = run_text(f"np.var({{0}}, axis={axes!r}, keepdims=True, ddof={ddof})", [a.value])
    return rules.sqrt_rule(keep, red.var_rule(var, a, axes, ddof))


def reshaped(s: Shadow, shape) -> Shadow:
    return Shadow(s.value.reshape(shape), s.err.reshape(shape), s.unk.reshape(shape))


def _at_update(step: Step, out, a: Shadow) -> Shadow:
    index, lit = step.params
    mask = run_text(f"F.at_set({{0}}, np.s_[{index}], True)", [np.zeros(out.shape, bool)])
    if step.rule == "at_set":
        return finish(out, np.where(mask, 0.0, a.err), np.where(mask, False, a.unk))
    added = rules.add_rule(out, a, broadcast(operand(lit, [a], {}), out.shape))
    return finish(out, np.where(mask, added.err, a.err), np.where(mask, added.unk, a.unk))


def _argmax_pattern(step: Step, out, a: Shadow) -> Shadow:
    """x == max(x): exact for a consistent implementation (each x computed once);
    take_along_axis(x, argmax(x)): the winner's bound where the winner is decided."""
    (axis,) = step.params
    if step.rule == "is_max":
        return finish(out, 0.0, np.any(a.unk, axis=axis, keepdims=True))
    idx = np.argmax(a.value, axis=axis, keepdims=True)
    winner = red.arg_rule(idx, a, axis, largest=True)
    return finish(out, np.take_along_axis(a.err, idx, axis), winner.unk)
