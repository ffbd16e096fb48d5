"""The op -> C expression table, written once and shared by the C++ and CUDA backends.

`C_RULES` holds one rule per elementwise primitive, keyed by the `Primitive` (the registry's
`RuleTable`; the built-in primitives' rules are in their entries, ir/elementwise_ops, over the
helpers here): `rule(args, dtype, out_dtype, attrs, uses, dialect) -> str`, where the
`Dialect` (ir/cwriter/dialect.py) spells builtins, special values and libm names. Where the
operands or the result are float16/bfloat16, the rule runs in float32 and the result is
rounded after (`in_float`), unless the primitive has a rule of its own in
`C_LOW_PRECISION_RULES` (select's bool condition stays as it is; convert rounds float64 to
float16 once).
`render(prim, args, dtype, out_dtype, attrs, uses)` returns a C expression for one elementwise
primitive applied to operand expressions `args` (strings) of dtype `dtype`. Math functions the
expression calls are added to `uses`, so a backend can declare them (the CPU backend declares
them `omp declare simd` to get glibc's vectorized libmvec variants without -ffast-math).

Semantics follow NumPy exactly where a kernel can: integer floor division and remainder follow
Python's sign rules and give 0 on division by zero (NumPy's result, minus the warning);
float floor division and remainder follow `npy_divmod`; `round` is half-to-even (`nearbyint`);
max/min propagate NaN; `sign(nan)` is NaN; float -> int casts of NaN or out-of-range values give
the type's minimum (NumPy's on x86 for int32/int64; see sharp-bits); shifts by >= the width: 0, -1.
Signed overflow wraps, as NumPy's does: integer +, -, * and negation are done in the unsigned
type of the same width (the C++ build also has `-fwrapv`; NVRTC has no such flag, and signed
overflow is undefined there: `(x + 1) > x` would fold to true at INT_MAX).

>>> import numpy as np
>>> render("add", ["a", "b"], np.dtype("float32"), np.dtype("float32"), {}, set())
'(a + b)'
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir.c_types import (
    C_TYPES,
    TYPES_PRELUDE,
    UNSIGNED,
    WRAP_TYPES,
    c_type,
    compute_dtype,
    float_suffix,
    is_low_precision,
    real_dtype,
)
from tracejit.ir.cwriter.dialect import GCC, Dialect
from tracejit.ir.primitives import Primitive, RuleTable

CRule = Callable[[list, np.dtype, np.dtype, dict, set, Dialect], str]
C_RULES = RuleTable("C rendering")
# How a primitive is rendered where its operands or result are float16/bfloat16:
# `rule(c_rule, args, dtype, out_dtype, attrs, uses, dialect) -> str`; without one, `in_float`.
C_LOW_PRECISION_RULES = RuleTable("C rendering in 16-bit floats")

# Float functions with a libm name (the float variant gets an "f" suffix), keyed by primitive
# name; ir/elementwise_ops's `libm_unary` entries add theirs. Every one has a vector variant in
# glibc's libmvec (>= 2.35), so a declare-simd declaration vectorizes it.
LIBM_UNARY: dict[str, str] = {}
LIBM_BINARY: dict[str, str] = {}  # the same for binary functions (`pow`, `atan2`)

# Helpers shared by both backends. TJ_FN is `static inline` in C++ and `__device__ inline` in
# CUDA; the backend defines it before this text. Builtins keep <cmath> out of the translation
# unit (it costs ~0.1 s of compile time per file); CUDA spells them `Dialect.spell`.
PRELUDE = (
    TYPES_PRELUDE
    + r"""
template <class T> TJ_FN T tj_floordiv_int(T a, T b) {
  if (b == 0) return 0;
  // a / -1 is -a, negated in the unsigned type: INT_MIN / -1 traps, and a signed -INT_MIN is
  // undefined (NVRTC has no -fwrapv: sign(INT_MIN // -1) folded to 1 under CUDA)
  if ((T)-1 < (T)0 && b == (T)-1) return (T)(0ULL - (unsigned long long)a);
  T q = a / b;
  return ((a % b != 0) && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <class T> TJ_FN T tj_mod_int(T a, T b) {
  if (b == 0 || ((T)-1 < (T)0 && b == (T)-1)) return 0;
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
TJ_FN float tj_fmod(float a, float b) { return __builtin_fmodf(a, b); }
TJ_FN double tj_fmod(double a, double b) { return __builtin_fmod(a, b); }
TJ_FN float tj_floor(float a) { return __builtin_floorf(a); }
TJ_FN double tj_floor(double a) { return __builtin_floor(a); }
TJ_FN float tj_copysign(float a, float b) { return __builtin_copysignf(a, b); }
TJ_FN double tj_copysign(double a, double b) { return __builtin_copysign(a, b); }
// npy_divmod: the remainder takes the divisor's sign; the quotient is floor((a - mod) / b).
template <class T> TJ_FN T tj_mod_float(T a, T b) {
  T mod = tj_fmod(a, b);
  if (b == 0) return mod;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = tj_copysign((T)0, b);
  }
  return mod;
}
template <class T> TJ_FN T tj_floordiv_float(T a, T b) {
  if (b == 0) return a / b;
  T mod = tj_fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;
  if (div != 0) {
    T fl = tj_floor(div);
    if (div - fl > (T)0.5) fl += (T)1;
    return fl;
  }
  return tj_copysign((T)0, a / b);
}
// Integer power by squaring, wrapping; negative exponents give 0 except for bases 1 and -1.
template <class T> TJ_FN T tj_pow_int(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;
  }
  T r = 1;
  while (b) {
    if (b & 1) r = (T)((unsigned long long)r * (unsigned long long)a);  // wraps, never UB
    a = (T)((unsigned long long)a * (unsigned long long)a);
    b >>= 1;
  }
  return r;
}
template <class T, class U> TJ_FN T tj_shl(T a, T b) {
  return ((U)b < (U)(sizeof(T) * 8)) ? (T)((U)a << (U)b) : (T)0;
}
template <class T, class U> TJ_FN T tj_shr(T a, T b) {
  if ((U)b < (U)(sizeof(T) * 8)) return (T)(a >> b);
  return a < 0 ? (T)-1 : (T)0;
}
// The bits of x as type To of the same size (bitcast_convert_type).
template <class To, class From> TJ_FN To tj_bit_cast(From x) {
  union { From f; To t; } v;
  v.f = x;
  return v.t;
}
// Float -> integer: NaN and out-of-range give the minimum integer, as x86's cvtt does.
template <class T, class F> TJ_FN T tj_float_to_int(F x, F lo, F hi) {
  return (x >= lo && x < hi) ? (T)x : (T)(((unsigned long long)1) << (sizeof(T) * 8 - 1));
}
"""
)


def literal(value, dtype, dialect: Dialect = GCC) -> str:
    """An exact C literal of `value` as `dtype` (hex floats; NaN and Inf as `dialect` spells
    them).

    >>> literal(0.5, np.float32), literal(200, np.uint8), literal(1.0, np.float16)
    ('0x1.0000000000000p-1f', '((uint8_t)200ULL)', 'tj_f16::from_bits(0x3c00)')
    """
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return "true" if bool(value) else "false"
    if dt.kind == "i":
        v = int(value)
        info = np.iinfo(dt)
        if v == info.min:
            return f"((int{dt.itemsize * 8}_t)({v + 1}LL - 1))"
        return f"((int{dt.itemsize * 8}_t){v}LL)"
    if dt.kind == "u":
        return f"(({c_type(dt)}){int(value)}ULL)"
    if is_low_precision(dt):  # by its bits: exact, and the same text in every dialect
        bits = int(np.asarray(value, dtype=dt).view(np.uint16))
        return f"{c_type(dt)}::from_bits({bits:#06x})"
    if dt.kind == "c":
        z, part = complex(np.asarray(value, dtype=dt)), real_dtype(dt)
        return f"{c_type(dt)}({literal(z.real, part, dialect)}, {literal(z.imag, part, dialect)})"
    c_type(dt)  # UnsupportedError for dtypes compiled code does not compute in
    v = float(np.asarray(value, dtype=dt))
    suffix = "f" if dt == np.float32 else ""
    if math.isnan(v) or math.isinf(v):
        return dialect.special(v, f32=dt == np.float32)
    return f"{v.hex()}{suffix}"


def _libm(name: str, dtype, uses: set, d: Dialect) -> str:
    fn = name + float_suffix(dtype)
    uses.add(fn)
    return d.libm_prefix + fn


def libm_call(fn: str) -> CRule:
    """The C rule of a call to libm function `fn` (`fnf` on float32) on every operand."""

    def rule(args, dt, out_dt, attrs, uses, d):
        return f"{_libm(fn, dt, uses, d)}({', '.join(args)})"

    return rule


def math_call(fn: str) -> CRule:
    """The C rule of builtin math function `fn` (an instruction: `__builtin_sqrtf`, `sqrtf`)."""

    def rule(args, dt, out_dt, attrs, uses, d):
        return f"{_math(fn, dt, d)}({', '.join(args)})"

    return rule


def _math(name: str, dt: np.dtype, d: Dialect) -> str:
    """The builtin math function `name` of float `dt` ("sqrt" -> "__builtin_sqrtf")."""
    return d.math(name + float_suffix(dt))


def wrapping(op: str, a: str, b: str, dt: np.dtype) -> str:
    """`a op b` for integers, modulo 2**bits (in an unsigned type of at least 32 bits: never
    undefined, also where C promotes uint16 * uint16 to a signed int).

    >>> wrapping("+", "x", "1", np.dtype("int32"))
    '((int32_t)((uint32_t)(x) + (uint32_t)(1)))'
    """
    u = WRAP_TYPES[dt]
    return f"(({c_type(dt)})(({u})({a}) {op} ({u})({b})))"


def render(
    prim: Primitive | str,
    args: list[str],
    dtype,
    out_dtype,
    attrs: dict,
    uses: set | None = None,
    dialect: Dialect = GCC,
) -> str:
    """The C expression of elementwise primitive `prim` (or its name) on operand expressions.

    `dtype` is the operands' dtype (for `select`, the branches'), `out_dtype` the result's.
    Names of libm functions the expression calls are added to `uses`; the call itself is to
    `dialect.libm_prefix + name` (the C++ backend's `tj_cosf` wrappers,
    backend_cpu/vector_math.py); builtins and special values are spelled by `dialect`.

    >>> import numpy as np
    >>> render("max", ["a", "b"], np.dtype("int32"), np.dtype("int32"), {}, set())
    '(((a) >= (b)) ? (a) : (b))'
    """
    rule = C_RULES.get(prim)
    if rule is None:
        raise UnsupportedError(f"no C rendering for primitive {getattr(prim, 'name', prim)!r}")
    uses = set() if uses is None else uses
    dt, out_dt = np.dtype(dtype), np.dtype(out_dtype)
    if is_low_precision(dt) or is_low_precision(out_dt):
        low = C_LOW_PRECISION_RULES.get(prim, in_float)
        return low(rule, list(args), dt, out_dt, attrs, uses, dialect)
    return rule(list(args), dt, out_dt, attrs, uses, dialect)


def in_float(rule: CRule, args, dt, out_dt, attrs, uses, dialect: Dialect, first: int = 0) -> str:
    """`rule` on float16/bfloat16 operands computed in float32 and rounded after (the
    operands from `first` on are of dtype `dt`; those before, e.g. `select`'s condition, are
    not widened): every primitive's low-precision rendering unless `C_LOW_PRECISION_RULES`
    has one of its own."""
    wide = list(args[:first]) + [_widen(a, dt) for a in args[first:]]
    expr = rule(wide, compute_dtype(dt), compute_dtype(out_dt), attrs, uses, dialect)
    return f"(({c_type(out_dt)})({expr}))" if is_low_precision(out_dt) else expr


def _widen(arg: str, dt: np.dtype) -> str:
    return f"((float)({arg}))" if is_low_precision(dt) else arg


__all__ = [
    "C_LOW_PRECISION_RULES",
    "C_RULES",
    "C_TYPES",
    "PRELUDE",
    "UNSIGNED",
    "c_type",
    "literal",
    "render",
]
