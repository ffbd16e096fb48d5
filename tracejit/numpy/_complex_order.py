"""NumPy's order of complex numbers (lexicographic: real part, then imaginary part) for
`maximum`, `minimum`, the comparisons, `max`/`min`/`argmax`/`argmin` and `sort`/`argsort`,
and complex `prod` and `power`, in real arithmetic on the parts, so they trace, compile and
differentiate like the rest (the gradient of a max flows to the element it picked).

NaNs follow NumPy: `maximum`/`minimum` and the reductions return the first operand or element
holding a NaN in either part; comparisons with one are False; `sort` puts R + Rj first, then
R + nanj, nan + Rj, nan + nanj (numpy/_core/src/npysort's CDOUBLE_LT).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit.numpy import _elementwise as ew
from tracejit.numpy._complex import imag, real
from tracejit.numpy._core import cast, promote
from tracejit.numpy._creation import ones
from tracejit.numpy._indexing import take_along_axis
from tracejit.numpy._join import concatenate
from tracejit.numpy._reductions import any as any_
from tracejit.numpy._shape import moveaxis, reshape


def _nan(x, y):
    return ew.logical_or(ew.isnan(x), ew.isnan(y))


def _ordered(strict: bool, a, b):
    """NumPy's CLT (strict) / CLE on complex operands."""
    (ar, ai), (br, bi) = (real(a), imag(a)), (real(b), imag(b))
    no_nan = ew.logical_not(ew.logical_or(ew.isnan(ai), ew.isnan(bi)))
    first = ew.logical_and(ew.less(ar, br), no_nan)
    second = (ew.less if strict else ew.less_equal)(ai, bi)
    return ew.logical_or(first, ew.logical_and(ew.equal(ar, br), second))


def less(a, b):
    a, b = promote(a, b)
    return _ordered(True, a, b)


def less_equal(a, b):
    a, b = promote(a, b)
    return _ordered(False, a, b)


def greater(a, b):
    return less(b, a)


def greater_equal(a, b):
    return less_equal(b, a)


def _pick(keep_first, a, b):
    a, b = promote(a, b)
    keep = ew.logical_or(keep_first(a, b), _nan(real(a), imag(a)))
    return ew.where(keep, a, b)


def maximum(a, b):
    return _pick(lambda a, b: _ordered(False, b, a), a, b)


def minimum(a, b):
    return _pick(lambda a, b: _ordered(False, a, b), a, b)


def arg_extremum(x, ax: int, largest: bool):
    """The index along `ax` of the first lexicographic maximum (minimum) of complex `x`,
    or of its first element with a NaN part."""
    from tracejit.numpy._reductions import argmax, max

    re, im = real(x), imag(x)
    nan = _nan(re, im)
    sign = 1.0 if largest else -1.0
    re, im = ew.multiply(re, sign), ew.multiply(im, sign)
    top = max(ew.where(nan, -np.inf, re), axis=ax, keepdims=True)
    cand = ew.logical_and(ew.equal(re, top), ew.logical_not(nan))
    top_im = max(ew.where(cand, im, -np.inf), axis=ax, keepdims=True)
    hit = ew.logical_and(cand, ew.equal(im, top_im))
    return ew.where(any_(nan, axis=ax), argmax(nan, axis=ax), argmax(hit, axis=ax))


def _flat_last(x, axes: tuple):
    """`x` with `axes` moved to the end and flattened into one: (x', kept shape)."""
    shape = tuple(x.shape)
    keep = tuple(shape[i] for i in range(len(shape)) if i not in axes)
    x = moveaxis(x, list(axes), list(range(len(keep), len(shape))))
    return reshape(x, keep + (math.prod(shape[i] for i in axes),)), keep


def extremum(x, axes: tuple, largest: bool):
    """`max`/`min` of complex `x` over `axes` (the element at `arg_extremum`)."""
    x, keep = _flat_last(x, axes)
    idx = reshape(arg_extremum(x, len(keep), largest), keep + (1,))
    return reshape(take_along_axis(x, idx, axis=-1), keep)


def sort_keys(x, descending: bool):
    """lexsort keys (last first) ordering complex `x` as NumPy's sort: by NaN class, then
    real part, then imaginary part."""
    re, im = real(x), imag(x)
    re_nan, im_nan = ew.isnan(re), ew.isnan(im)
    cls = ew.add(ew.multiply(cast(re_nan, np.int8), 2), cast(im_nan, np.int8))
    if descending:
        re, im = ew.negative(re), ew.negative(im)
    return im, re, cls


def sorts_before(a, b):
    """Whether complex `a` sorts strictly before `b` in `sort_keys`' order: by NaN class,
    then real part (parts that are both NaN tie), then imaginary part."""
    (ia, ra, ca), (ib, rb, cb) = sort_keys(a, False), sort_keys(b, False)
    same_re = ew.logical_or(ew.equal(ra, rb), ew.isnan(ra))  # one class: both NaN or neither
    lex = ew.logical_or(ew.less(ra, rb), ew.logical_and(same_re, ew.less(ia, ib)))
    return ew.logical_or(ew.less(ca, cb), ew.logical_and(ew.equal(ca, cb), lex))


def prod(x, axes: tuple):
    """The product of complex `x` over `axes`, by halving: multiply the two halves of the
    flattened axes (padded with ones to a power of two) until one element is left."""
    x, keep = _flat_last(x, axes)
    n = x.shape[-1]
    size = 1 << max(n - 1, 0).bit_length()
    if size > n:
        x = concatenate([x, ones(keep + (size - n,), x.dtype)], axis=-1)
    while size > 1:
        size //= 2
        x = ew.multiply(x[..., :size], x[..., size:])
    return reshape(x, keep)
