"""The complex primitives: `real`, `imag`, `conj` and `complex` (real, imaginary -> complex).

Complex arithmetic (+ - * /, negation, ==, !=) uses the ordinary primitives: their VJPs are
holomorphic (`ct * y` for `x * y`, with no conjugate), which is JAX's convention: a cotangent
is transposed through each linear map with respect to the pairing Re(a * b), so `grad` of a
real-valued f of complex z is df/dx - i df/dy (JAX's docs/complex-differentiation.md:
`grad(lambda z: abs(z)**2)(3+4j)` is 6-8j; step along its conjugate to descend). Here the
non-holomorphic maps transpose as: real: ct -> ct + 0i; imag: ct -> -i ct; conj: ct ->
conj(ct); complex(a, b): ct -> (Re ct, -Im ct). Everything else that is complex (abs, exp,
...) tracejit.numpy writes with these four and real arithmetic, so its gradient follows.

>>> import numpy as np, tracejit as tj
>>> from tracejit.tracer.core import bind
>>> tj.jit(lambda z: (bind("real", z), bind("conj", z)))(np.array([1 + 2j]))
(array([1.]), array([1.-2.j]))
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_RULES, c_type
from tracejit.ir.primitives import ELEMENTWISE, register

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}  # fmt: skip


def _complex_operand(name: str, aval) -> None:
    if not dtypes.is_complex(aval[1]):
        raise TracejitTypeError(f"{name} needs a complex operand, got {aval[1]}")


def _part_rule(name: str):
    def rule(avals):
        ((shape, dt, weak),) = avals
        _complex_operand(name, avals[0])
        return (shape, dtypes.real_dtype(dt), weak)

    return rule


def _conj_rule(avals):
    _complex_operand("conj", avals[0])
    return avals[0]


def _complex_rule(avals):
    (shape, dt, wa), (shape_b, dt_b, wb) = avals
    if shape != shape_b or dt != dt_b or dt not in _COMPLEX_OF:
        raise TracejitTypeError(
            f"complex needs two float32 or float64 operands of one shape and dtype, got "
            f"{dt}{list(shape)} and {dt_b}{list(shape_b)}"
        )
    return (shape, _COMPLEX_OF[np.dtype(dt)], wa and wb)


def _complex_impl(re, im):
    out = np.empty(np.shape(re), _COMPLEX_OF[np.asarray(re).dtype])
    out.real, out.imag = re, im  # re + 1j * im would turn an infinite part into NaNs
    return out


def _real_vjp(e, ct, z, *, out):
    return [e.convert(ct, dtype=z.dtype)]  # ct + 0i


def _imag_vjp(e, ct, z, *, out):
    return [e.complex(e.full(0.0, ct), e.neg(ct))]  # -i ct


def _conj_vjp(e, ct, z, *, out):
    return [e.conj(ct)]


def _complex_vjp(e, ct, re, im, *, out):
    return [e.real(ct), e.neg(e.imag(ct))]


register(
    "real",
    ELEMENTWISE,
    _part_rule("real"),
    np.real,
    rules={VJP_RULES: _real_vjp, C_RULES: lambda args, *_: f"(({args[0]}).re)"},
)
register(
    "imag",
    ELEMENTWISE,
    _part_rule("imag"),
    np.imag,
    rules={VJP_RULES: _imag_vjp, C_RULES: lambda args, *_: f"(({args[0]}).im)"},
)
register(
    "conj",
    ELEMENTWISE,
    _conj_rule,
    np.conj,
    rules={VJP_RULES: _conj_vjp, C_RULES: lambda args, *_: f"tj_conj({args[0]})"},
)
register(
    "complex",
    ELEMENTWISE,
    _complex_rule,
    _complex_impl,
    rules={
        VJP_RULES: _complex_vjp,
        C_RULES: lambda args, dt, out_dt, *_: f"{c_type(out_dt)}({args[0]}, {args[1]})",
    },
)
