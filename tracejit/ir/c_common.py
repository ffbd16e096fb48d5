"""C text shared by the CPU (C++) and CUDA kernel writers, next to c_render's op table.

Reduction identities as literals, splitting a flat index into loop variables, indentation,
and `KernelDedupe`: an unrolled loop produces the same kernel many times over different
buffers; both backends emit its text once and call it with each step's buffers.

>>> import numpy as np
>>> extreme_literal(np.dtype(np.int32), low=True)
'((int32_t)(-2147483647LL - 1))'
>>> decompose((4, 5), "u", 0)
['const int64_t i1 = u % 5LL;', 'const int64_t q1 = u / 5LL;', 'const int64_t i0 = q1;']
"""

from __future__ import annotations

import re

import numpy as np

from tracejit.ir.c_render import c_type, literal
from tracejit.ir.cwriter.dialect import GCC, Dialect


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


def decompose(
    extents, flat: str, first_var: int, idx: str = "int64_t", suffix: str = "LL"
) -> list[str]:
    """Statements splitting flat index `flat` into loop variables i{first_var}... over `extents`.

    `idx` is the C type of the variables, `suffix` the one of the integer literals.

    >>> decompose((2, 3), "j", 1, idx="int", suffix="")
    ['const int i2 = j % 3;', 'const int q2 = j / 3;', 'const int i1 = q2;']
    """
    lines = []
    rest = flat
    for d in reversed(range(len(extents))):
        var = f"i{first_var + d}"
        if d == 0:
            lines.append(f"const {idx} {var} = {rest};")
        else:
            lines.append(f"const {idx} {var} = {rest} % {extents[d]}{suffix};")
            lines.append(f"const {idx} q{first_var + d} = {rest} / {extents[d]}{suffix};")
            rest = f"q{first_var + d}"
    return lines


def affine(offset: int, coefs, var: str = "i", suffix: str = "LL") -> str:
    """`offset + sum(c_d * var_d)` as C text; `suffix` types the constants (e.g. 64-bit).

    >>> affine(3, (4, 1, 0)), affine(3, (4,), suffix="")
    ('3 + 4LL * i0 + i1', '3 + 4 * i0')
    """
    terms = [f"{offset}"] if offset else []
    for d, c in enumerate(coefs):
        if c == 1:
            terms.append(f"{var}{d}")
        elif c:
            terms.append(f"{c}{suffix} * {var}{d}")
    return " + ".join(terms) or "0"


def indent(lines: list[str], n: int = 2) -> list[str]:
    """`lines` indented by `n` spaces (empty lines stay empty).

    >>> indent(["a;", "", "b;"])
    ['  a;', '', '  b;']
    """
    return [" " * n + line if line else line for line in lines]


_BUFFER = re.compile(r"\bb(\d+)\b")


class KernelDedupe:
    """Finds kernels whose text is the same up to their name and buffer numbering.

    A kernel's text names its buffer parameters `b<id>` (ids listed in `params`, in parameter
    order) and itself by `name` (also as a prefix of helper names). `first(text, name,
    params)` is the name of an earlier kernel with the same text after renaming those, or None
    when this one is new (then it is remembered). Equal text is equal code, so calling the
    earlier kernel with this one's buffers computes the same thing.

    >>> d = KernelDedupe()
    >>> d.first("void k0(float* b3) { b3[0] = 1; }", "k0", [3]) is None
    True
    >>> d.first("void k7(float* b9) { b9[0] = 1; }", "k7", [9])
    'k0'
    >>> d.first("void k8(float* b9) { b9[0] = 2; }", "k8", [9]) is None
    True
    """

    def __init__(self):
        self.names: dict[str, str] = {}

    def first(self, text: str, name: str, params: list[int]) -> str | None:
        index = {b: i for i, b in enumerate(params)}
        unknown = False

        def rename(m: re.Match) -> str:
            nonlocal unknown
            i = index.get(int(m.group(1)))
            unknown |= i is None
            return f"p{i}"

        key = _BUFFER.sub(rename, text.replace(name, "\0"))
        if unknown:  # a buffer outside the parameters: never shared
            return None
        found = self.names.get(key)
        if found is None:
            self.names[key] = name
        return found


__all__ = [
    "KernelDedupe",
    "decompose",
    "extreme_literal",
    "indent",
    "sum_accumulator_type",
]
