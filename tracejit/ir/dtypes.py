"""The dtypes tracejit computes in, and NumPy 2 (NEP 50) promotion with weak Python scalars.

Every dtype is NumPy's own (`np.dtype(np.int8)`, ...); bfloat16 is `ml_dtypes.bfloat16`, the
type JAX uses. A *weak* value comes from a Python scalar: it takes the dtype of the array it
meets (`f32_array * 2.0` stays float32), as in NumPy 2 and JAX.

NumPy knows no promotion for bfloat16 (`np.result_type(bfloat16, int32)` raises, and
`bfloat16 + 2.0` gives float64), so bfloat16 promotes as float16 does, and bfloat16 with
float16 gives float32 (JAX's lattice: neither holds the other).

>>> result_type((BFLOAT16, False), (np.dtype(np.float16), False))
(dtype('float32'), False)
>>> result_type((BFLOAT16, False), (np.dtype(np.float64), True))
(dtype(bfloat16), False)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tracejit.errors import UnsupportedError

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT16 = np.dtype(np.float16)

SHORT_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    FLOAT16: "f16",
    BFLOAT16: "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}
SUPPORTED = tuple(SHORT_NAMES)
# Floats stored in 16 bits and computed in float32 (rounded after every operation).
LOW_PRECISION = (FLOAT16, BFLOAT16)
# The Python scalar standing for a weak value of each kind: np.result_type applies NEP 50 to it.
_WEAK_STANDIN = {"b": False, "i": 0, "f": 0.0, "c": 0j}


def canonical(dtype) -> np.dtype:
    """The supported np.dtype for `dtype`, or UnsupportedError naming it."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise UnsupportedError(f"{dtype!r} is not a dtype: {e}") from None
    if dt.byteorder == ">":
        dt = dt.newbyteorder("=")
    if dt not in SHORT_NAMES:
        names = ", ".join(str(d) for d in SUPPORTED)
        raise UnsupportedError(f"dtype {dt} is not supported; use one of: {names}")
    return dt


def category(dtype) -> str:
    """ "b" (bool), "i" (signed or unsigned integer), "f" (real float) or "c" (complex).

    >>> category(BFLOAT16), category(np.uint8), category(np.complex64)
    ('f', 'i', 'c')
    """
    dt = np.dtype(dtype)
    if dt == BFLOAT16:
        return "f"
    return "i" if dt.kind == "u" else dt.kind


def is_float(dtype) -> bool:
    """A real floating dtype (bfloat16 included)."""
    return category(dtype) == "f"


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    """A float or complex dtype: one that has gradients."""
    return category(dtype) in "fc"


def is_int(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def is_low_precision(dtype) -> bool:
    """float16 or bfloat16: stored in 16 bits, computed in float32."""
    return np.dtype(dtype) in LOW_PRECISION


def real_dtype(dtype) -> np.dtype:
    """The dtype of the real part: float32 for complex64, the dtype itself if real."""
    dt = np.dtype(dtype)
    return np.dtype(dt.char.lower()) if dt.kind == "c" else dt


def finfo(dtype):
    """`np.finfo`, and ml_dtypes' for bfloat16 (NumPy's rejects it)."""
    dt = np.dtype(dtype)
    return ml_dtypes.finfo(dt) if dt == BFLOAT16 else np.finfo(dt)


def short_name(dtype) -> str:
    return SHORT_NAMES.get(np.dtype(dtype), str(np.dtype(dtype)))


def python_scalar_dtype(x) -> np.dtype:
    """The dtype NumPy gives a lone Python scalar: bool, int64, float64 or complex128."""
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, complex):
        return np.dtype(np.complex128)
    raise UnsupportedError(f"Python value of type {type(x).__name__} is not an array scalar")


def _numpy_result_type(strong: list[np.dtype], weak: list) -> np.dtype:
    """np.result_type, with bfloat16 standing in as float16 (see the module docstring)."""
    has_bf16 = BFLOAT16 in strong
    if not has_bf16:
        return np.result_type(*strong, *weak)
    has_f16 = FLOAT16 in strong
    out = np.result_type(*[FLOAT16 if dt == BFLOAT16 else dt for dt in strong], *weak)
    if out == FLOAT16:
        return np.dtype(np.float32) if has_f16 else BFLOAT16
    return out


def result_type(*operands: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote (dtype, weak) pairs as NumPy 2 does; the result is weak iff every operand is."""
    strong = [np.dtype(dt) for dt, weak in operands if not weak]
    weak = [_WEAK_STANDIN[category(dt)] for dt, w in operands if w]
    if not strong:
        return canonical(np.result_type(*[dt for dt, _ in operands])), True
    return canonical(_numpy_result_type(strong, weak)), False


# Primitive kinds that compute on complex values in compiled code (after the dtypes pass split
# sums and matmuls into real parts); elementwise ops without a complex C rendering are
# rejected when traced.
_COMPLEX_KINDS = ("elementwise", "layout", "creation", "gather-scatter", "control")
_COMPLEX_SPLIT = ("take_add", "take_along_add")  # split by the pass: any left cannot be
# Kernels whose combine computes on complex values (ir/cwriter/library.py `tj_wrap_mul`).
_COMPLEX_KERNELS = ("cumprod",)
# Host-step primitives whose NumPy implementation takes complex operands (ir/fft_prims.py).
COMPLEX_HOST_PRIMS: set[str] = set()


def check_compilable(graph, device: str) -> None:
    """UnsupportedError naming the first operation of `graph` over a complex dtype that
    `device`'s compiled code does not compute (a product or maximum of complex values, complex
    linear algebra), instead of a C compile error or a wrong answer. Walks loop and branch
    bodies too.

    >>> import numpy as np, tracejit as tj
    >>> from tracejit.tracer.core import bind
    >>> prod = lambda z: bind("reduce_prod", z, axes=(0,))  # tnp.prod multiplies pairwise
    >>> check_compilable(tj.make_ir(prod)(np.ones(2, np.complex64)), "cpu")
    Traceback (most recent call last):
    tracejit.errors.UnsupportedError: complex64 is not supported by reduce_prod on cpu yet (device="numpy" runs it through NumPy)
    """
    from tracejit.ir.regions import nested_graphs  # regions.py imports this module

    for g in [graph, *nested_graphs(graph)]:
        for node in g.nodes:
            ok = node.prim.kind in _COMPLEX_KINDS and node.prim.name not in _COMPLEX_SPLIT
            ok = ok or node.prim.name in COMPLEX_HOST_PRIMS or node.prim.name in _COMPLEX_KERNELS
            for v in [*node.inputs, *node.outputs]:
                if is_complex(v.dtype) and not ok:
                    raise UnsupportedError(
                        f"{v.dtype} is not supported by {node.prim.name} on {device} yet "
                        '(device="numpy" runs it through NumPy)'
                    )
