"""How one backend writes C: the only backend-specific input of the shared kernel writer.

A `Dialect` says how math functions and special float values are written (GCC builtins in
C++, CUDA's device math library in CUDA: NVRTC knows no builtins), which libm names the
kernels call (the C++ backend's `tj_cosf` wrappers, backend_cpu/vector_math.py), which
float32 functions are generated inline (fast exp/log/tanh in C++, tanh in CUDA too), how a
buffer parameter is declared, and how a kernel is written: its qualifiers and the helpers'
(`TJ_FN`), the type of its loop counters, and its parallel loop over units (C++: the range
[lo, hi) of units a pool thread is handed, the kernel's first parameters; CUDA: a grid-stride
loop over the launch), whether signed overflow wraps, and how threads combine partial results
(`combine`: C++ folds per-block partials in block order; CUDA shuffles across a warp, then
shared memory). The instances live with their backends (backend_cpu/emit.py `CPP`,
backend_cuda/codegen.py `CUDA`); `GCC` is the plain builtin spelling.

>>> GCC.math("sqrtf"), Dialect(builtins=False).math("nearbyintf")
('__builtin_sqrtf', 'rintf')
>>> Dialect(builtins=False).special(float("-inf"), f32=True)
'-__int_as_float(0x7f800000)'
>>> Dialect(builtins=False).spell("__builtin_bit_cast(float, __builtin_fmaf(a, b, c))")
'__uint_as_float(fmaf(a, b, c))'
>>> print(GCC.function("k0", [*GCC.unit_params(), "float* b0"], GCC.parallel_for(8, ["b0[u] = 0;"])))
static void k0(int64_t lo, int64_t hi, float* b0) {
  for (int64_t u = lo; u < hi; ++u) {
    b0[u] = 0;
  }
}
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

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
# Narrow loop counters stay 32-bit while every address and counter fits with room to spare.
INT32_LIMIT = 1 << 30


def indent(lines: list[str], n: int = 2) -> list[str]:
    """`lines` indented by `n` spaces (empty lines stay empty).

    >>> indent(["a;", "", "b;"])
    ['  a;', '', '  b;']
    """
    return [" " * n + line if line else line for line in lines]


def int_suffix(idx: str) -> str:
    """The suffix of integer constants in index arithmetic of C type `idx`."""
    return "" if idx == "int" else "LL"


@dataclass(frozen=True)
class Dialect:
    """One backend's C spelling (see the module docstring)."""

    libm_prefix: str = ""  # prefix of the libm functions kernels call
    inline_f32: dict = field(default_factory=dict)  # prim -> inline function (float32 only)
    builtins: bool = True  # math as GCC builtins, else as device library functions
    restrict_inputs: bool = False  # read-only buffer parameters `const T* __restrict__`
    kernel_qualifiers: str = "static"  # before a kernel's `void name(...)`
    helper_qualifiers: str = "static inline"  # TJ_FN: the C helpers' (c_render, library)
    narrow_index: bool = False  # `int` loop counters where a kernel's reach allows
    grid_stride: bool = False  # parallel loops stride over a launch, else run [lo, hi)
    wraps: bool = True  # signed integer overflow wraps (-fwrapv), else undefined
    # threads combine partial results by warp shuffles and shared memory, in no index order;
    # else each block of units leaves its partials in a struct, folded in block order
    warp_shuffle: bool = False

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

    def tj_fn(self) -> str:
        """The definition of `TJ_FN`, the qualifiers of every shared C helper."""
        return f"#define TJ_FN {self.helper_qualifiers}"

    def index_type(self, kernel) -> str:
        """The C type of `kernel`'s loop counters: `int` (`narrow_index`, cheaper div/mod/
        multiply on a GPU) when every counter and address fits far below 2**31."""
        if not self.narrow_index:
            return "int64_t"
        extents = list(kernel.outer) + list(kernel.inner)
        work = int(np.prod(extents, dtype=np.int64)) if extents else 1
        reach = max(
            (
                abs(o) + sum(abs(c) * max(n - 1, 0) for c, n in zip(cs, extents))
                for o, cs in kernel.affine_maps()
            ),
            default=0,
        )
        return "int" if max(work, reach) < INT32_LIMIT else "int64_t"

    def function(self, name: str, params: list[str], body: list[str], threads: int = 0) -> str:
        """Kernel `name` with the non-empty `params` and `body`; `threads` (CUDA) bounds the
        threads per block of its launch (`__launch_bounds__`)."""
        bounds = f"__launch_bounds__({threads}) " if threads else ""
        head = f"{self.kernel_qualifiers} void {bounds}{name}({', '.join(p for p in params if p)})"
        return "\n".join([head + " {", *indent(body), "}"])

    def unit_params(self) -> list[str]:
        """The first parameters of a kernel whose parallel loop runs a range of units: the
        range itself in C++ (`tj_parallel` calls the kernel once per block of units), none
        in CUDA (the launch's grid is the range)."""
        return [] if self.grid_stride else ["int64_t lo", "int64_t hi"]

    def parallel_for(
        self, units: int, body: list[str], idx: str = "int64_t", head=(), var: str = "u"
    ) -> list[str]:
        """`body` for each unit `var` in [0, units) that falls to this thread, after `head`
        (statements that may advance CUDA's `start`, the thread's first unit)."""
        if not self.grid_stride:
            loop = f"for ({idx} {var} = lo; {var} < hi; ++{var}) {{"
            return [*head, loop, *indent(body), "}"]
        first = [
            f"const {idx} stride = ({idx})gridDim.x * blockDim.x;",
            f"{idx} start = ({idx})blockIdx.x * blockDim.x + threadIdx.x;",
        ]
        loop = f"for ({idx} {var} = start; {var} < {units}{int_suffix(idx)}; {var} += stride) {{"
        return [*first, *head, loop, *indent(body), "}"]

    def combine(self, partials: list, rows: int = 1, lanes: int = 1, columns=False) -> list[str]:
        """Statements combining `partials` (ir/cwriter/reduce.py `Partial`) across threads,
        then their results. C++: the blocks of a split reduction left theirs in `parts[b]`
        (b < n), folded here in block order. CUDA: a block's `rows` rows of `lanes` threads,
        a row's lanes consecutive (a shuffle butterfly, then shared memory across warps) or,
        `columns`, `rows` apart (shared memory); every lane ends with its row's results."""
        if not self.warp_shuffle:
            lines = fold(partials, "parts[0].{v}", "parts[b].{v}", "n", "int64_t b")
            return lines + [q for p in partials for q in p.result]
        return [x for p in partials for x in [*_group(p, rows, lanes, columns), *p.result]]


def _group(p, rows: int, lanes: int, columns: bool) -> list[str]:
    """Partial `p` combined across the `lanes` threads of each row (`Dialect.combine`)."""
    n, warps, s = rows * lanes, lanes // 32, f"s{p.rid}_{{v}}"
    if columns and lanes > 1:
        lines = []
        for t, v in p.fields:
            lines += [f"__shared__ {t} s{p.rid}_{v}[{n}];", f"s{p.rid}_{v}[threadIdx.x] = {v};"]
        at = s + f"[q * {rows} + row]"
        return [*lines, "__syncthreads();", *fold([p], s + "[row]", at, lanes, "int q", False)]
    if columns or lanes == 1:
        return []
    width = min(lanes, 32)
    lines = [f"for (int m = {width // 2}; m > 0; m >>= 1) {{"]
    lines += [
        f"  const {t} {v}_o = __shfl_xor_sync(0xffffffffu, {v}, m, {width});" for t, v in p.fields
    ]
    lines += [*indent(p.merge([f"{v}_o" for _, v in p.fields])), "}"]
    if warps < 2:
        return lines
    lines += [f"__shared__ {t} s{p.rid}_{v}[{n // 32}];" for t, v in p.fields]
    stores = [f"  s{p.rid}_{v}[threadIdx.x >> 5] = {v};" for _, v in p.fields]
    lines += ["if ((threadIdx.x & 31) == 0) {", *stores, "}", "__syncthreads();"]
    first, at = s + f"[row * {warps}]", s + f"[row * {warps} + q]"
    return lines + fold([p], first, at, warps, "int q", False)


def fold(partials: list, first: str, at: str, count, counter: str, declare=True) -> list[str]:
    """`count` partial results of each of `partials` folded in order: each field `v` starts
    from `first` (a template of `{v}`; declared, if `declare`), then a loop over `counter`
    (its declaration: "int q") from 1 merges in `at`."""
    lines = [
        f"{t + ' ' if declare else ''}{v} = {first.format(v=v)};"
        for p in partials
        for t, v in p.fields
    ]
    q = counter.split()[-1]
    lines.append(f"for ({counter} = 1; {q} < {count}; ++{q}) {{")
    lines += indent([m for p in partials for m in p.merge([at.format(v=v) for _, v in p.fields])])
    return lines + ["}"]


GCC = Dialect()

__all__ = ["GCC", "INT32_LIMIT", "Dialect", "fold", "indent", "int_suffix"]
