"""Fuzzer inputs: arrays of every supported dtype with adversarial values and memory layouts.

Float values mix IEEE specials (NaN, +-inf, -0.0, the smallest and largest subnormals, the
largest finite), small integers and halves (exactly representable, so sums stay exact), and
ordinary numbers. Layouts: C-contiguous, Fortran order, every other element of a larger
buffer, and negative strides; the values are the same in each, only the strides differ.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = (np.bool_, np.int32, np.int64, np.float32, np.float64)
# The narrow and unsigned integers: exact like the others (wraparound is NumPy's modular
# arithmetic, shifts past the width give 0 or -1), drawn less often than DTYPES.
SMALL_INTS = (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64)
# float16: every op rounds to half (NumPy computes in float32 and rounds, as tracejit does);
# sums and matmul may accumulate in float32 (tracejit, like JAX): within the half's bounds
NARROW_DTYPES = (*SMALL_INTS, np.float16)
FLOAT_DTYPES = (np.float32, np.float64)
LAYOUTS = ("C", "F", "strided", "reversed")


def _nan_payloads(dtype) -> list:
    """NaNs other than the canonical one: negative, with payload bits, signaling. An inline
    function that adds to a NaN's bits (issue 13 item 4) turns most of them into numbers."""
    bits = {4: (0xFFC00000, 0x7FC12345, 0x7F800001), 8: (0xFFF8000000000000, 0x7FF0000000000001)}
    bits[2] = (0xFE00, 0x7E12, 0x7C01)
    size = np.dtype(dtype).itemsize
    ints = np.array(bits[size], {2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
    return list(ints.view(dtype))


def _specials(dtype) -> list[float]:
    fi = np.finfo(dtype)
    return [
        *_nan_payloads(dtype),
        np.nan,
        np.inf,
        -np.inf,
        -0.0,
        0.0,
        float(fi.smallest_subnormal),
        -float(fi.smallest_subnormal),
        float(fi.smallest_normal) * 0.75,  # a subnormal with many bits set
        float(fi.max),
        -float(fi.max),
        1.0,
        -1.0,
    ]


def float_elements(dtype, special: bool = True) -> st.SearchStrategy:
    width = np.dtype(dtype).itemsize * 8
    ordinary = st.floats(-8, 8, width=width)
    halves = st.integers(-16, 16).map(lambda k: k / 2)
    anything = st.floats(width=width, allow_nan=False)
    if not special:
        return st.one_of(halves, ordinary)
    return st.one_of(st.sampled_from(_specials(dtype)), halves, ordinary, anything)


def int_elements(dtype) -> st.SearchStrategy:
    info = np.iinfo(dtype)
    edges = [info.min, info.max, info.min + 1, info.max // 2 + 1, -1, 0, 1, 2]
    edges = st.sampled_from([e for e in edges if info.min <= e])
    small = st.integers(max(-9, info.min), 9)
    return st.one_of(small, edges, st.integers(info.min, info.max))


def elements(dtype, special: bool = True) -> st.SearchStrategy:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return st.booleans()
    if kind in "iu":
        return int_elements(dtype)
    if kind == "c":  # parts of ordinary and of extreme magnitude (ordinary alone for a
        # plain input: special=False), no NaN or infinity
        part = np.finfo(dtype).dtype
        wide = st.floats(width=part.itemsize * 8, allow_nan=False, allow_infinity=False)
        parts = float_elements(part, special=False)
        parts = st.one_of(parts, wide) if special else parts
        return st.builds(complex, parts, parts)
    return float_elements(dtype, special)


def with_layout(x: np.ndarray, layout: str, axis: int = 0) -> np.ndarray:
    """`x`'s values in memory laid out as `layout` (a view where the layout needs one)."""
    if x.ndim == 0:
        return x.copy()
    if layout == "F":
        return np.asfortranarray(x)
    axis %= x.ndim
    if layout == "strided":
        shape = list(x.shape)
        shape[axis] *= 2
        big = np.zeros(shape, x.dtype)
        index = tuple(slice(None, None, 2) if i == axis else slice(None) for i in range(x.ndim))
        big[index] = x
        return big[index]
    if layout == "reversed":
        return np.flip(np.flip(x, axis).copy(), axis)
    return np.ascontiguousarray(x)


@st.composite
def arrays(draw, shape, dtype, special: bool = True) -> np.ndarray:
    """An array of `shape` and `dtype` in a drawn layout."""
    x = draw(hnp.arrays(dtype, shape, elements=elements(dtype, special)))
    layout = draw(st.sampled_from(LAYOUTS))
    axis = draw(st.integers(0, max(len(shape) - 1, 0)))
    return with_layout(x, layout, axis)


@st.composite
def index_arrays(draw, shape, dtype, low: int, high: int, unique: bool) -> np.ndarray:
    """Traced indices in [low, high]; `unique`: distinct positions of an axis of length
    high + 1, some written negatively (scatter targets that never collide)."""
    if not unique:
        return draw(hnp.arrays(dtype, shape, elements=st.integers(low, high)))
    x = draw(hnp.arrays(dtype, shape, elements=st.integers(0, high), unique=True))
    wrap = draw(hnp.arrays(np.bool_, shape)) & (low < 0)
    return np.where(wrap, x - (high + 1), x).astype(dtype)
