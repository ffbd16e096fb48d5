"""The fuzzer's operations: each draws one program step (an expression over earlier values).

A `Step` is the Python text of one assignment, written with `np.` names: the same text runs
under NumPy (the oracle) and under `tracejit.numpy` (traced). `oracle` replaces the text on
the NumPy side where tracejit computes a rewritten form (the stable log-softmax and
logsumexp). `rule` names the error-bound rule (_fuzz_eval.RULES) and `params` its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

FLOAT_UNARY = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "floor",
    "ceil",
    "trunc",
    "round",
    "square",
    "reciprocal",
]
NUM_UNARY = ["negative", "absolute", "sign", "isnan", "isinf", "isfinite"]
INT_BOOL_UNARY = ["invert", "logical_not"]
ARITH = {"+": "add", "-": "add", "*": "mul", "/": "div", "//": "divmod", "%": "divmod"}
FUNC_BINARY = {
    "maximum": "minmax",
    "minimum": "minmax",
    "power": "pow",
    "arctan2": "atan2",
    "floor_divide": "divmod",
    "remainder": "divmod",
}
COMPARE = ("<", "<=", ">", ">=", "==", "!=")
BITWISE = ("&", "|", "^")
LITERALS = (
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.0,
    0.1,
    1e30,
    1e-30,
    np.inf,
    -np.inf,
    np.nan,
    2,
    3,
    -1,
)
UNARY_RULE = {
    "floor": "jump_int",
    "ceil": "jump_int",
    "trunc": "jump_int",
    "round": "jump_half",
    "square": "square",
    "reciprocal": "reciprocal",
    "sqrt": "sqrt",
    "negative": "exact",
    "absolute": "exact",
    "sign": "sign",
    "isnan": "exact",
    "isinf": "exact",
    "isfinite": "exact",
    "invert": "exact",
    "logical_not": "exact",
}


@dataclass(frozen=True)
class Step:
    text: str  # a Python expression over {0}, {1}, ...
    args: tuple[int, ...]
    rule: str
    params: tuple = ()
    oracle: str | None = None  # the NumPy side's expression, where it differs


class Pool:
    """The values a program has so far: (shape, dtype) of inputs and step results."""

    def __init__(self, only_dtype=None):
        self.avals: list[tuple[tuple[int, ...], np.dtype]] = []
        self.inputs: list[int] = []
        self.only_dtype = only_dtype  # every new input gets this dtype (gradient programs)
        self.plain: set[int] = set()  # inputs drawn without special values (_fuzz_values)
        # index inputs: value index -> (low, high, unique modulo high + 1), see index_input
        self.ranges: dict[int, tuple[int, int, bool]] = {}

    def add_input(self, shape, dtype, special: bool = True) -> int:
        self.avals.append((tuple(shape), np.dtype(self.only_dtype or dtype)))
        self.inputs.append(len(self.avals) - 1)
        if not special:
            self.plain.add(len(self.avals) - 1)
        return len(self.avals) - 1

    def index_input(self, shape, dtype, low: int, high: int, unique: bool = False) -> int:
        """An integer input (traced indices) with values in [low, high]; `unique`: distinct
        positions of an axis of length high + 1 (negative ones wrap: -1 is high)."""
        self.avals.append((tuple(shape), np.dtype(dtype)))
        self.inputs.append(len(self.avals) - 1)
        self.ranges[len(self.avals) - 1] = (low, high, unique)
        return len(self.avals) - 1

    def pick(self, draw, kinds="bif", min_ndim=0) -> int | None:
        """A value of one of `kinds` ("i" includes the unsigned kind "u"), the most recent one
        half of the time (deep programs)."""
        kinds = kinds.replace("i", "iu")
        ok = [i for i, (s, d) in enumerate(self.avals) if d.kind in kinds and len(s) >= min_ndim]
        if not ok:
            return None
        return ok[-1] if draw(st.booleans()) else draw(st.sampled_from(ok))

    def shape(self, i):
        return self.avals[i][0]

    def dtype(self, i):
        return self.avals[i][1]


def fmt(value) -> str:
    """A Python literal for `value` that evaluates to the same weak scalar (negative ones in
    parentheses: `(-1) ** x`, not `-(1 ** x)`)."""
    if isinstance(value, float) and not np.isfinite(value):
        return "float('nan')" if np.isnan(value) else f"float('{'-' if value < 0 else ''}inf')"
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


def broadcast_partner_shape(draw, shape) -> tuple[int, ...]:
    """A shape broadcasting with `shape`: some axes set to 1, some leading axes dropped."""
    out = [1 if draw(st.booleans()) and draw(st.booleans()) else d for d in shape]
    drop = draw(st.integers(0, len(out)))
    return tuple(out[drop:])


def partner(draw, pool: Pool, a: int, kinds: str) -> int:
    """A second operand for `a`: an earlier value of a broadcast-compatible shape, or a new
    input (of a drawn dtype from `kinds`)."""
    shape = pool.shape(a)
    kinds = kinds.replace("i", "iu")
    fits = [
        i
        for i, (s, d) in enumerate(pool.avals)
        if i != a and d.kind in kinds and _broadcasts(s, shape)
    ]
    if fits and draw(st.booleans()):
        return draw(st.sampled_from(fits))
    dtypes = (np.bool_, np.int32, np.int64, np.float32, np.float64, np.int8, np.uint8, np.uint32)
    dtypes += (np.float16,)
    dtype = draw(st.sampled_from([d for d in dtypes if np.dtype(d).kind in kinds]))
    return pool.add_input(broadcast_partner_shape(draw, shape), dtype)


def _broadcasts(s, t) -> bool:
    try:
        return np.broadcast_shapes(s, t) == tuple(t)
    except ValueError:
        return False


def axes_of(draw, ndim: int, allow_none=True):
    """An `axis=` argument: None, an int (maybe negative) or a tuple of distinct ints."""
    if ndim == 0:
        return None
    choice = draw(st.integers(0, 2 if allow_none else 1))
    if choice == 0:
        return draw(st.integers(-ndim, ndim - 1))
    if choice == 1:
        return tuple(draw(st.lists(st.integers(0, ndim - 1), min_size=1, unique=True)))
    return None


def normalized(axis, ndim) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axis))
