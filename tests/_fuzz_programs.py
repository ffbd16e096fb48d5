"""Random programs: a hypothesis strategy, their Python source, and their NumPy shadows.

A `Program` prints as the plain Python function it is, so a shrunk failure is a repro:

    def f(v0, v1):
        v2 = np.exp(v0)
        v3 = np.sum(v2, axis=0, keepdims=False)
        return (v3,)

`np` is NumPy for the oracle and `tracejit.numpy` for the traced run; `F` holds the few
names NumPy lacks (`F.nn` is `tracejit.nn`; the NumPy side replaces those steps by oracles).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass

import _fuzz_bf16 as bf16
import _fuzz_draw_complex as complex_
import _fuzz_draw_elementwise as ew
import _fuzz_draw_index as index
import _fuzz_draw_loops as loops
import _fuzz_draw_order as order
import _fuzz_draw_structural as structural
import _fuzz_linalg as linalg
import numpy as np
from _fuzz_bounds import Shadow, exact
from _fuzz_eval import NumpyF, evaluate_step, run_text
from _fuzz_ops import Pool, Step
from _fuzz_values import DTYPES, NARROW_DTYPES, arrays, index_arrays
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp

SUPPORTED = {np.dtype(d) for d in DTYPES + NARROW_DTYPES + (np.complex64, np.complex128)}
# TRACEJIT_FUZZ_LARGE=1: also long axes (past vector widths, tiles and the parallel split),
# up to 4096 elements per value; a campaign option, slower (the oracle's argsort is n^2)
LARGE = os.environ.get("TRACEJIT_FUZZ_LARGE") == "1"
MAX_SIZE = 4096 if LARGE else 256  # elements per value: keeps the oracle and bounds cheap
# (drawer, weight): elementwise steps are the most common, as in real programs.
DRAWERS = [
    (ew.unary, 4),
    (ew.binary, 5),
    (ew.where, 1),
    (ew.clip, 1),
    (ew.convert, 1),
    (ew.nn_unary, 1),
    (structural.reduction, 3),
    (structural.scan, 2),
    (structural.layout, 4),
    (structural.matmul, 1),
    (structural.pattern, 1),
    (structural.argmax_pattern, 1),
    (structural.at_update, 1),
    (order.sort, 2),
    (order.searchsorted, 1),
    (order.quantile, 1),
    (order.select, 1),
    (index.gather, 2),
    (index.scatter, 1),
    (index.dynamic_slice, 1),
    (loops.loop, 2),
    (loops.associative_scan, 1),
    (complex_.complex_op, 2),
    (complex_.fft, 2),
    (linalg.linalg, 2),
    (bf16.bf16, 1),
]
WEIGHTED = [d for d, w in DRAWERS for _ in range(w)]


class TracedF:
    nn = tj.nn
    lax = tj.lax
    bfloat16 = tnp.bfloat16
    erf = staticmethod(tnp.erf)


@dataclass
class Program:
    avals: list  # (shape, dtype) of every value
    defs: dict  # value index -> Step (inputs have none)
    inputs: list  # value indices of the inputs, in argument order
    outputs: tuple

    def source(self) -> str:
        params = ", ".join(f"v{i}" for i in self.inputs)
        lines = [f"def f({params}):"]
        for i, step in sorted(self.defs.items()):
            names = [f"v{a}" if isinstance(a, int) else a for a in step.args]
            lines.append(f"    v{i} = {step.text.format(*names)}")
        lines.append(f"    return ({''.join(f'v{i}, ' for i in self.outputs)})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        sig = ", ".join(f"v{i}: {self.avals[i][1]}{list(self.avals[i][0])}" for i in self.inputs)
        return f"# {sig}\n{self.source()}"

    def _repr_pretty_(self, printer, cycle) -> None:  # how hypothesis prints a failing case
        printer.text(repr(self))

    def traced(self):
        """The program as a function of tracejit.numpy (for tj.jit)."""
        env = {"np": tnp, "F": TracedF}
        exec(self.source(), env)  # noqa: S102 - the generator's own text
        return env["f"]

    def values(self, args: list[np.ndarray]) -> list[np.ndarray]:
        """NumPy's outputs (the oracle text of each step, no bounds)."""
        env = dict(zip(self.inputs, args))
        for i in sorted(self.defs):
            env[i] = self.values_at(env, i)
        return [env[i] for i in self.outputs]

    def values_at(self, env: dict, i: int) -> np.ndarray:
        """NumPy's value of step `i` given the values `env` of the earlier ones."""
        step = self.defs[i]
        operands = [env[a] if isinstance(a, int) else a for a in step.args]
        return run_text(step.oracle or step.text, operands)

    def shadows(self, args: list[np.ndarray]) -> list[Shadow]:
        """NumPy's outputs with their error bounds (_fuzz_bounds)."""
        env = {i: exact(a) for i, a in zip(self.inputs, args)}
        for i, step in sorted(self.defs.items()):
            env[i] = evaluate_step(step, env)
        return [env[i] for i in self.outputs]


SIDES = st.sampled_from([1, 2, 3, 4, 0, 1, 5])  # size-1 and size-0 axes are common
shapes = st.sampled_from([0, 1, 2, 2, 3, 3]).flatmap(
    lambda n: st.lists(SIDES, min_size=n, max_size=n).map(tuple)
)
if LARGE:  # one long axis among short ones, half of the time
    long_shapes = st.tuples(shapes, st.sampled_from([17, 33, 64, 130, 1000]), st.integers(0, 3))
    long_shapes = long_shapes.map(lambda t: t[0][: t[2]] + (t[1],) + t[0][t[2] :])
    shapes = st.one_of(shapes, long_shapes.filter(lambda s: math.prod(s) <= MAX_SIZE))
INPUT_DTYPES = st.one_of(
    st.sampled_from([np.float32, np.float64, np.float32, np.float64, *DTYPES]),
    st.sampled_from(NARROW_DTYPES),
)


def draw_program(draw, pool: Pool, weighted, max_steps: int, accept, max_outputs: int):
    """Steps drawn from `weighted` drawers over `pool` (whose inputs are set), keeping those
    whose stand-in result passes `accept`; the outputs are the last unused results."""
    defs = {}
    for _ in range(draw(st.integers(1, max_steps))):
        step = draw(st.sampled_from(weighted))(draw, pool)
        out = None if step is None else _stand_in(step, pool)
        if out is None or not accept(out):
            continue
        pool.avals.append((out.shape, out.dtype))
        defs[len(pool.avals) - 1] = step
    if not defs:  # every drawn step was refused: a copy keeps the program non-empty
        defs[len(pool.avals)] = Step("np.where(True, {0}, {0})", (pool.inputs[0],), "exact")
        pool.avals.append(pool.avals[pool.inputs[0]])
    used = {a for step in defs.values() for a in step.args if isinstance(a, int)}
    sinks = [i for i in sorted(defs) if i not in used]
    return Program(list(pool.avals), defs, list(pool.inputs), tuple(sinks[-max_outputs:]))


@st.composite
def programs(draw, max_steps: int = 6):
    """(program, inputs) of any supported dtypes and values."""
    pool = Pool()
    for _ in range(draw(st.integers(1, 2))):
        pool.add_input(draw(shapes), draw(INPUT_DTYPES))
    program = draw_program(draw, pool, WEIGHTED, max_steps, lambda out: True, 4)
    return program, [draw(input_array(pool, i)) for i in pool.inputs]


def input_array(pool: Pool, i: int) -> st.SearchStrategy:
    """The strategy of input `i`'s values: traced indices in their range, else any value."""
    if i in pool.ranges:
        return index_arrays(*pool.avals[i], *pool.ranges[i])
    return arrays(*pool.avals[i], i not in pool.plain)


def _stand_in(step: Step, pool: Pool):
    """NumPy's result of `step` on all-ones operands (shape and dtype), or None if NumPy
    refuses the combination or it leaves the supported dtypes or the size budget."""
    values = [np.ones(s, d) for s, d in pool.avals]
    names = [f"v{a}" if isinstance(a, int) else a for a in step.args]
    env = {"np": np, "F": NumpyF}
    env.update({f"v{a}": values[a] for a in step.args if isinstance(a, int)})
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = np.asarray(eval((step.oracle or step.text).format(*names), env))
    # NumPy refuses the combination (OverflowError: a weak literal out of an unsigned or
    # narrow operand's range, NEP 50): skip it
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    if out.dtype not in SUPPORTED or out.size > MAX_SIZE or math.prod(out.shape) > MAX_SIZE:
        return None
    return out
