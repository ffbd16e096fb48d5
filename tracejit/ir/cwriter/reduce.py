"""Reduction semantics, written once for every kernel writer (C++ rows, columns and split
full reductions; CUDA thread groups). The writers decide only where the accumulators live
(registers, simd lanes, a column array); partial results meet by `Dialect.combine`.

NumPy's rules: sum/prod/max/min of bools are any/all (an `int32_t` accumulator, which warp
shuffles can move); float32 sums accumulate in double (`sum_accumulator_type`);
max/min propagate NaN; argmax/argmin return the first index of the extreme, a NaN counting
as the extreme. Candidates of an argmax meet in one of two ways: `ordered_arg_better` when
they arrive in increasing index order (a sequential loop, blocks combined in order: a tie
keeps the earlier one), the library's `tj_arg_better` (ir/cwriter/library.py) when they do
not (threads of a warp: a dialect with `warp_shuffle`).

A `Partial` is what threads combine: the fields one hands over, the merge folding another's
in. `Accumulator.partial` gives it for each kind (a value, an argmax pair, a compensated
TwoSum pair), `Partial.fieldwise` for other forms; each dialect writes the combine its way.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> from tracejit.ir.cwriter.dialect import GCC
>>> f32 = np.dtype(np.float32)
>>> acc = Accumulator(K.Reduction(0, "max", K.Load(0, 0, (1,), f32), f32, 0), GCC)
>>> acc.identity(), acc.combine("a0", "v")
('-__builtin_inff()', '(((v) > (a0) || (v) != (v)) ? (v) : (a0))')
>>> ordered_arg_better("argmax", f32, "v", "a0v")
'(v > a0v) || (v != v && a0v == a0v)'
>>> acc.partial().merge(["b"])
['a0 = (((b) > (a0) || (b) != (b)) ? (b) : (a0));']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tracejit.ir import kernel as K
from tracejit.ir.c_render import UNSIGNED, c_type, literal
from tracejit.ir.cwriter.dialect import GCC, Dialect, indent

ARG_OPS = ("argmax", "argmin")


def extreme_literal(dtype: np.dtype, low: bool, dialect: Dialect = GCC) -> str:
    """The identity of max (`low`: the lowest value of `dtype`) or of min (the highest).

    >>> extreme_literal(np.dtype(np.float32), low=False)
    '__builtin_inff()'
    """
    if dtype.kind == "f":
        return literal(float("-inf") if low else float("inf"), dtype, dialect)
    if dtype == np.bool_:
        return "false" if low else "true"
    info = np.iinfo(dtype)
    return literal(info.min if low else info.max, dtype)


def sum_accumulator_type(dtype: np.dtype) -> str:
    """The C type a sum of `dtype` values accumulates in: double for float32.

    A float32 accumulator per vector lane (or GPU thread) adds its share of the terms one
    after another, so its error grows with the share: a 3e7-element sum was off by 5.8e-4
    (NumPy's pairwise sum: ~1e-7), a 2^32-element one by 5.5%. In double the rounding of
    each add is 2^-29 times smaller, so even 2^32 terms stay well below float32's half ulp
    before the one final rounding, and more accurate than pairwise float32 summation. The
    terms are converted exactly (float32 -> double is lossless).

    >>> sum_accumulator_type(np.dtype(np.float32)), sum_accumulator_type(np.dtype(np.int32))
    ('double', 'int32_t')
    """
    return "double" if np.dtype(dtype) == np.float32 else c_type(dtype)


def pick(op: str, a: str, b: str) -> str:
    """`max`/`min` of `a` and `b` ignoring NaN (integers; floats whose NaN is carried
    elsewhere): `b` when it is strictly more extreme, so ties keep `a`."""
    return f"(({b}) {'>' if op in ('max', 'argmax') else '<'} ({a}) ? ({b}) : ({a}))"


def ordered_arg_better(op: str, dt: np.dtype, v: str, best: str) -> str:
    """Whether candidate value `v` beats `best` in an argmax/argmin whose candidates come in
    increasing index order: strictly more extreme, or the first NaN."""
    cond = f"{v} {'>' if op == 'argmax' else '<'} {best}"
    if np.dtype(dt).kind == "f":
        return f"({cond}) || ({v} != {v} && {best} == {best})"
    return cond


def two_sum(total: str, error: str, x: str, tmp: str, x_error: str = "") -> list[str]:
    """Statements adding `x` (and its own error term `x_error`) to the compensated sum
    (`total`, `error`): Knuth's TwoSum keeps the exact rounding error of the add (no product:
    nothing for a compiler to contract); `tmp` prefixes its two temporaries.

    >>> two_sum("s", "c", "x", "s")[2]
    'c += (s - (st - sp)) + (x - sp);'
    """
    err = f"({total} - ({tmp}t - {tmp}p)) + ({x} - {tmp}p)"
    return [
        f"const double {tmp}t = {total} + {x};",
        f"const double {tmp}p = {tmp}t - {total};",
        f"{error} += ({err}) + {x_error};" if x_error else f"{error} += {err};",
        f"{total} = {tmp}t;",
    ]


@dataclass(frozen=True)
class Partial:
    """One reduction's partial result: `fields` (C type, variable); `merge(sources)`: the
    statements folding another thread's fields (C expressions) into these; `result`: the
    statements defining `r<rid>` from them."""

    rid: int
    fields: tuple[tuple[str, str], ...]
    merge: Callable[[list[str]], list[str]]
    result: tuple[str, ...]

    @staticmethod
    def fieldwise(rid: int, fields, ops: list[Callable[[str, str], str]], result) -> Partial:
        """A partial whose fields merge each on its own: `var = op(var, source)`."""

        def merge(src: list[str]) -> list[str]:
            return [f"{v} = {op(v, s)};" for (_, v), op, s in zip(fields, ops, src)]

        return Partial(rid, tuple(fields), merge, tuple(result))


class Accumulator:
    """One reduction's accumulator: its C type, identity, combine and result; `compensated`:
    a float64 sum kept with each add's exact rounding error (TwoSum) in a second double."""

    def __init__(self, r: K.Reduction, dialect: Dialect, compensated: bool = False):
        self.r = r
        self.dialect = dialect
        self.compensated = compensated
        self.ordered = not dialect.warp_shuffle  # argmax/argmin candidates in index order
        self.in_dt = K.expr_dtype(r.expr)
        self.name = f"a{r.rid}"
        self.is_arg = r.op in ARG_OPS
        self.is_bool = self.in_dt == np.bool_
        if self.is_bool:
            self.acc_t = "int32_t"
        elif self.is_arg:
            self.acc_t = c_type(self.in_dt)
        elif r.op == "sum":
            self.acc_t = sum_accumulator_type(r.dtype)  # float32: double
        else:
            self.acc_t = c_type(r.dtype)

    def parts(self) -> list[tuple[str, str]]:
        """(C type, variable) of each accumulator part: the value, and for argmax/argmin the
        index (`a<rid>v`, `a<rid>i`); for a compensated sum, the error (`a<rid>c`)."""
        if self.compensated:
            return [("double", self.name), ("double", f"{self.name}c")]
        if self.is_arg:
            return [(self.acc_t, f"{self.name}v"), ("int64_t", f"{self.name}i")]
        return [(self.acc_t, self.name)]

    def starts(self) -> list[str]:
        """Each part's start. Argmax/argmin candidates in index order start from the least
        extreme value at index 0; unordered ones from no candidate (index -1, for the
        library's `tj_arg_better`)."""
        if not self.is_arg:
            return [self.identity()]
        return [self.identity(), "0"] if self.ordered else ["0", "-1"]

    def identity(self) -> str:
        """The accumulator's start; for argmax/argmin, the value's (the least extreme)."""
        op = self.r.op
        if self.is_bool:
            return "0" if op in ("sum", "max", "argmax") else "1"
        if op in ("sum", "prod"):
            return literal(0 if op == "sum" else 1, self.r.dtype, self.dialect)
        return extreme_literal(self.in_dt, op in ("max", "argmax"), self.dialect)

    def term(self, v: str) -> str:
        """Element value `v` as an accumulator term."""
        return f"(int32_t){v}" if self.is_bool else v

    def operator(self) -> str | None:
        """The C operator combining two accumulators, for sums, products and bools."""
        if self.is_bool:
            return "|" if self.r.op in ("sum", "max") else "&"
        return {"sum": "+", "prod": "*"}.get(self.r.op)

    def combine(self, a: str, b: str) -> str:
        """Accumulators (or terms) `a` and `b` combined (not argmax/argmin). Integer sums and
        products wrap like NumPy's: where signed overflow is undefined (no -fwrapv: NVRTC)
        and may be folded away, through the unsigned type."""
        op, sym = self.r.op, self.operator()
        dt = np.dtype(self.r.dtype)
        if sym is not None and not self.is_bool and not self.dialect.wraps and dt in UNSIGNED:
            return f"(({self.acc_t})(({UNSIGNED[dt]})({a}) {sym} ({UNSIGNED[dt]})({b})))"
        if sym is not None:
            return f"({a} {sym} {b})"
        if self.in_dt.kind == "f":  # NaN wins: once stored it compares false and stays
            cmp = ">" if op == "max" else "<"
            return f"((({b}) {cmp} ({a}) || ({b}) != ({b})) ? ({b}) : ({a}))"
        return pick(op, a, b)

    def declare(self) -> list[str]:
        """The accumulator's variables, at their starts."""
        if self.compensated:
            return [f"double {self.name} = 0, {self.name}c = 0;"]
        return [f"{t} {var} = {s};" for (t, var), s in zip(self.parts(), self.starts())]

    def update(self, v: str, index: str = "") -> list[str]:
        """Statements adding element value `v` (at `index`, for argmax/argmin)."""
        if self.is_arg or self.compensated:  # a compensated term has no error of its own
            return self.merge([v, index if self.is_arg else ""])
        return [f"{self.name} = {self.combine(self.name, self.term(v))};"]

    def merge(self, src: list[str]) -> list[str]:
        """Statements folding another accumulator's parts `src` (C expressions) into this
        one's: argmax/argmin candidates in index order through `ordered_arg_better`, else
        through `tj_arg_better`; a compensated sum by TwoSum, in a block of its own."""
        a = self.name
        if self.compensated:
            return ["{", *indent(two_sum(a, f"{a}c", src[0], "", src[1])), "}"]
        if not self.is_arg:
            return [f"{a} = {self.combine(a, src[0])};"]
        if self.ordered:
            cand = ordered_arg_better(self.r.op, self.in_dt, src[0], f"{a}v")
        else:
            is_max = "true" if self.r.op == "argmax" else "false"
            cand = f"tj_arg_better<{self.acc_t}>({src[0]}, {src[1]}, {a}v, {a}i, {is_max})"
        return [f"if ({cand}) {{ {a}v = {src[0]}; {a}i = {src[1]}; }}"]

    def partial(self) -> Partial:
        """This accumulator as threads combine it (`Dialect.combine`)."""
        a = self.name
        if self.compensated:
            # an Inf or NaN term makes the error term NaN: the plain sum is the answer then
            finite = self.dialect.math("isfinite")
            result = f"const double r{self.r.rid} = {finite}({a}) ? {a} + {a}c : {a};"
        elif self.is_arg:
            result = self.result(f"{a}i" if self.ordered else f"{a}i < 0 ? 0 : {a}i")
        else:
            result = self.result(a)
        return Partial(self.r.rid, tuple(self.parts()), self.merge, (result,))

    def result(self, a: str) -> str:
        """The statement defining `r<rid>` from accumulator `a` (the index, for arg ops)."""
        rid = self.r.rid
        if self.is_arg:
            return f"const int64_t r{rid} = {a};"
        if self.is_bool:
            return f"const bool r{rid} = {a} != 0;"
        ct = c_type(self.r.dtype)
        return f"const {ct} r{rid} = ({ct}){a};"


__all__ = [
    "ARG_OPS",
    "Accumulator",
    "Partial",
    "extreme_literal",
    "ordered_arg_better",
    "pick",
    "sum_accumulator_type",
    "two_sum",
]
