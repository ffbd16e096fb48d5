"""How one backend spells C: the only backend-specific input of the shared expression emitter.

A `Dialect` says how math functions and special float values are written (GCC builtins in
C++, CUDA's device math library in CUDA: NVRTC knows no builtins), which libm names the
kernels call (the C++ backend's `tj_cosf` wrappers, backend_cpu/vector_math.py), which
float32 functions are generated inline (fast exp/log/tanh in C++, tanh in CUDA too), and how a
buffer parameter is declared. The instances live with their
backends (backend_cpu/emit.py `CPP`, backend_cuda/codegen.py `CUDA`); `GCC` is the plain
builtin spelling.

>>> GCC.math("sqrtf"), Dialect(builtins=False).math("nearbyintf")
('__builtin_sqrtf', 'rintf')
>>> Dialect(builtins=False).special(float("-inf"), f32=True)
'-__int_as_float(0x7f800000)'
>>> Dialect(builtins=False).spell("__builtin_bit_cast(float, __builtin_fmaf(a, b, c))")
'__uint_as_float(fmaf(a, b, c))'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# CUDA device math names that differ from the builtin's name without `__builtin_`.
_DEVICE_MATH = {"nearbyintf": "rintf", "nearbyint": "rint"}
# NaN and Inf by their bits: CUDA has no __builtin_nan / __builtin_inf.
_DEVICE_SPECIAL = {
    ("nan", True): "__int_as_float(0x7fc00000)",
    ("nan", False): "__longlong_as_double(0x7ff8000000000000LL)",
    ("inf", True): "__int_as_float(0x7f800000)",
    ("inf", False): "__longlong_as_double(0x7ff0000000000000LL)",
}
_BUILTIN = re.compile(r"__builtin_(\w+)")
# GCC's bit cast between float and uint32_t, as CUDA's intrinsics (one argument left).
_BIT_CAST = re.compile(r"__builtin_bit_cast\((uint32_t|float),\s*")
_DEVICE_BIT_CAST = {"uint32_t": "__float_as_uint(", "float": "__uint_as_float("}


@dataclass(frozen=True)
class Dialect:
    """One backend's C spelling (see the module docstring)."""

    libm_prefix: str = ""  # prefix of the libm functions kernels call
    inline_f32: dict = field(default_factory=dict)  # prim -> inline function (float32 only)
    builtins: bool = True  # math as GCC builtins, else as device library functions
    restrict_inputs: bool = False  # read-only buffer parameters `const T* __restrict__`

    def math(self, name: str) -> str:
        """The C function for builtin math function `name` ("sqrtf", "fabs", "isinf")."""
        if self.builtins:
            return f"__builtin_{name}"
        return _DEVICE_MATH.get(name, name)

    def special(self, value: float, f32: bool) -> str:
        """NaN or +-Inf as C text."""
        kind = "nan" if math.isnan(value) else "inf"
        sign = "-" if kind == "inf" and value < 0 else ""
        if not self.builtins:
            return sign + _DEVICE_SPECIAL[kind, f32]
        suffix = "f" if f32 else ""
        return f'__builtin_nan{suffix}("")' if kind == "nan" else f"{sign}__builtin_inf{suffix}()"

    def spell(self, text: str) -> str:
        """A shared C text written with GCC builtins, in this dialect's math spelling."""
        if self.builtins:
            return text
        text = _BIT_CAST.sub(lambda m: _DEVICE_BIT_CAST[m.group(1)], text)
        return _BUILTIN.sub(lambda m: self.math(m.group(1)), text)

    def param(self, ctype: str, buf: int, written: bool, may_alias: bool = False) -> str:
        """The parameter declaring buffer `buf` of element type `ctype` (`may_alias`: it may
        share memory with a buffer the kernel writes, so it is never `__restrict__`)."""
        if self.restrict_inputs and not written:
            return f"const {ctype}* b{buf}" if may_alias else f"const {ctype}* __restrict__ b{buf}"
        return f"{ctype}* b{buf}"


GCC = Dialect()

__all__ = ["GCC", "Dialect"]
