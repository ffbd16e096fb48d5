"""CUDA C code generation: one source per `Schedule`, one `__global__` kernel per `Kernel` step.

The schedule is the one the CPU backend consumes (ir/fusion, ir/memory); only the loop
structure differs: expressions come from the shared emitter (ir/cwriter/emit.py) in the `CUDA`
dialect. The `Fallback` steps that `ir/gather_plan.is_native` accepts (gathers,
scatter-adds, cumsum, threefry) get kernels from `gather.py`. Elementwise kernels are grid-stride loops over the flat index; when every
access is contiguous (or a broadcast scalar) they also carry a 16-byte vector path, taken at
run time when every pointer is aligned. Reduction kernels are written by `reduce.py`.

The source compiles both with NVRTC (backend_cuda/nvrtc.py, at run time) and with
`nvcc --cubin` (what CI checks without a GPU).

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> program = generate(plan_memory(fuse(tj.make_ir(lambda x: x + 1.0)(np.ones(3, np.float32)))))
>>> [launch.name for launch in program.launches]
['k0_loop']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tracejit.ir import kernel as K
from tracejit.ir.c_render import PRELUDE, c_type
from tracejit.ir.cwriter.dedupe import KernelDedupe
from tracejit.ir.cwriter.dialect import Dialect
from tracejit.ir.cwriter.emit import Emitter, buffer_ids, decompose, indent, param_text
from tracejit.ir.cwriter.fast_tanh import TANHF_C, TANHF_NAME
from tracejit.ir.cwriter.library import LIBRARY
from tracejit.ir.gather_plan import is_native

# Threads per block of elementwise kernels: a multiple of the warp size that keeps many blocks
# resident per SM (2048 threads / SM on sm_80..sm_90).
BLOCK = 256
# Bytes one thread moves per vector access: 128-bit loads/stores (ld.global.v4.f32).
VECTOR_BYTES = 16
# CUDA: the device math library (NVRTC knows no GCC builtins), libm by its own names, but
# float32 tanh inline as on the CPU (ir/cwriter/fast_tanh.py: 1.03 ulp, the same bits on both
# backends; CUDA's tanhf is documented at 2 ulp), read-only buffers `const T* __restrict__`
# (read through the read-only data cache) unless they may share memory with a buffer the
# kernel writes (emit.may_alias: an in-place temporary, or a donated input, `generate`);
# kernels `extern "C" __global__` (launched by name), helpers device functions, 32-bit loop
# counters where a kernel allows, grid-stride loops, signed overflow undefined (no -fwrapv),
# partial results combined by warp shuffles and shared memory.
CUDA = Dialect(
    builtins=False,
    restrict_inputs=True,
    inline_f32={"tanh": TANHF_NAME},
    kernel_qualifiers='extern "C" __global__',
    helper_qualifiers="static __device__ __forceinline__",
    narrow_index=True,
    grid_stride=True,
    wraps=False,
    warp_shuffle=True,
)

HEADER = (
    r"""
#ifdef __CUDACC_RTC__
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif
"""
    + CUDA.tj_fn()
    + r"""
// CUDA's pow and powf are within 2 ulps, and not always exact where the result is
// representable (an H100 missed NumPy's exact float64 results in the last bit). An integer
// exponent up to 64 multiplies instead, each product checked exact with an FMA (its exact
// rounding error must be 0, with the result far above the subnormals, where that error is
// representable), and 0.5 on a positive x is sqrt; anything else calls pow.
#define TJ_POW_EXACT_MIN 0x1p-969
TJ_FN bool tj_pow_by_products(double x, double y, double* out) {
  const double n = y < 0 ? -y : y;
  if (!(n <= 64.0) || n != (double)(int)n || x != x || x == 0.0 || isinf(x)) return false;
  double p = 1.0, b = x;
  for (int k = (int)n; k; k >>= 1) {
    if (k & 1) {
      const double q = p * b;
      if (fma(p, b, -q) != 0.0 || fabs(q) < TJ_POW_EXACT_MIN) return false;
      p = q;
    }
    if (k > 1) {
      const double s = b * b;
      if (fma(b, b, -s) != 0.0 || fabs(s) < TJ_POW_EXACT_MIN) return false;
      b = s;
    }
  }
  if (y < 0) {
    const double r = 1.0 / p;
    if (fma(r, p, -1.0) != 0.0 || fabs(r) < TJ_POW_EXACT_MIN) return false;
    p = r;
  }
  *out = p;
  return true;
}
TJ_FN double tj_pow(double x, double y) {
  double r;
  if (tj_pow_by_products(x, y, &r)) return r;
  if (y == 0.5 && x > 0) return sqrt(x);
  return (pow)(x, y);
}
TJ_FN float tj_powf(float x, float y) {
  double r;  // exact in double and representable as a float: exact
  if (tj_pow_by_products(x, y, &r) && (double)(float)r == r) return (float)r;
  if (y == 0.5f && x > 0) return sqrtf(x);
  return (powf)(x, y);
}
#define pow(x, y) tj_pow(x, y)
#define powf(x, y) tj_powf(x, y)
"""
)

DEVICE_RUNTIME = r"""
template <class T, int N> struct alignas(sizeof(T) * N) tj_vec { T v[N]; };
"""


@dataclass
class Launch:
    """How to launch one kernel: its buffer parameters and its grid.

    `grid_stride`: `units` work items over a grid capped by the device size (the kernel loops);
    otherwise exactly `units` blocks (one per group of outer indices).
    """

    name: str
    params: list[int]
    block: int
    units: int
    grid_stride: bool

    def grid(self, max_blocks: int) -> int:
        if not self.grid_stride:
            return self.units
        return min(-(-self.units // self.block), max_blocks)


@dataclass
class CudaProgram:
    source: str
    launches: list[Launch]  # one per Kernel step and native Fallback step, in schedule order


# ---------------------------------------------------------------- expressions


def kernel_params(
    kernel: K.Kernel, buffers: dict[int, K.Buffer], donated=frozenset()
) -> tuple[list[int], str]:
    """(buffer ids in parameter order, the C parameter list): read-only buffers are restrict
    unless they may share memory with one the kernel writes (`generate`'s `donated`)."""
    return buffer_ids(kernel), param_text(CUDA, kernel, buffers, donated)


# ---------------------------------------------------------------- elementwise kernels


def _vector_width(kernel: K.Kernel) -> int:
    """Elements per vector access, or 0 when the kernel has no contiguous 1-D form."""
    if len(kernel.outer) != 1 or kernel.outer[0] < 2:
        return 0
    loads = kernel.loads()
    if any(ld.strides[0] not in (0, 1) for ld in loads):
        return 0
    if any(s.strides[0] != 1 for s in kernel.stores):
        return 0
    sizes = [ld.dtype.itemsize for ld in loads if ld.strides[0] == 1]
    sizes += [K.expr_dtype(s.expr).itemsize for s in kernel.stores]
    return VECTOR_BYTES // max(sizes)


def _vector_path(kernel: K.Kernel, width: int, idx: str, uses: set) -> list[str]:
    contiguous = sorted(
        {ld for ld in kernel.loads() if ld.strides[0] == 1}, key=lambda ld: (ld.buf, ld.offset)
    )
    lanes = {ld: f"v{n}.v[j]" for n, ld in enumerate(contiguous)}
    vec_of = {}
    checks, loads = [], []
    for n, ld in enumerate(contiguous):
        vt = f"tj_vec<{c_type(ld.dtype)}, {width}>"
        ptr = f"(b{ld.buf} + {ld.offset})"
        checks.append(f"((uint64_t){ptr} % sizeof({vt}))")
        loads.append(f"const {vt} v{n} = *(const {vt}*)({ptr} + base);")
        vec_of[ld] = vt
    em = Emitter(CUDA, uses, "t", idx, replace=lanes)
    targets, outs = {}, []
    for n, s in enumerate(kernel.stores):
        vt = f"tj_vec<{c_type(K.expr_dtype(s.expr))}, {width}>"
        ptr = f"(b{s.buf} + {s.offset})"
        checks.append(f"((uint64_t){ptr} % sizeof({vt}))")
        targets[id(s)] = f"o{n}.v[j]"
        outs.append((n, vt, ptr))
    body = [f"const {idx} i0 = base + j;"]
    stores = em.stores(kernel, 0, targets)
    body += em.lines + stores
    n = kernel.outer[0]
    lines = [f"if (({' | '.join(checks)}) == 0) {{"]
    loop = [f"{vt} o{k};" for k, vt, _ in outs]
    loop += ["#pragma unroll", f"for (int j = 0; j < {width}; ++j) {{", *indent(body), "}"]
    loop += [f"*({vt}*)({ptr} + base) = o{k};" for k, vt, ptr in outs]
    lines += indent(
        [
            f"for ({idx} v = start; v < {n // width}; v += stride) {{",
            f"  const {idx} base = v * {width};",
            *indent(loads),
            *indent(loop),
            "}",
            f"start += {n // width * width};",
        ]
    )
    lines += ["}"]
    return lines


def elementwise_kernel(
    k: K.Kernel, buffers: dict[int, K.Buffer], uses: set, donated=frozenset()
) -> tuple[str, Launch]:
    """A grid-stride loop over the flat outer index (with a vector path when contiguous)."""
    idx = CUDA.index_type(k)
    ids, params = kernel_params(k, buffers, donated)
    units = int(np.prod(k.outer, dtype=np.int64)) if k.outer else 1
    em = Emitter(CUDA, uses, "t", idx)
    stores = em.stores(k, 0)
    body = decompose(k.outer, "u", 0, idx, suffix="") + em.lines + stores
    width = _vector_width(k)
    head = _vector_path(k, width, idx, uses) if width else []
    text = CUDA.function(k.name, [params], CUDA.parallel_for(units, body, idx, head), BLOCK)
    return text, Launch(k.name, ids, BLOCK, units, True)


# ---------------------------------------------------------------- the program


def generate(
    schedule: K.Schedule, name: str = "function", donated: frozenset[tuple[int, int]] = frozenset()
) -> CudaProgram:
    """The CUDA source for `schedule` (after `plan_memory`) and how to launch each kernel.

    `donated`: (input buffer, output buffer) pairs whose memory a call shares (donation,
    ir/donation.py): a kernel writing that output does not read that input through a
    `__restrict__` pointer. Without donation no input shares memory with an output (outputs
    are fresh arrays), so every read-only input is restrict (launcher.CudaExecutable runs
    a donating call with the program generated for its pairs)."""
    from tracejit.backend_cuda.gather import gather_kernel
    from tracejit.backend_cuda.reduce import reduction_kernel

    buffers = {b.id: b for b in schedule.buffers}
    uses: set[str] = set()
    functions, launches = [], []
    dedupe = KernelDedupe()  # an unrolled loop's repeated kernel is compiled once
    for step in schedule.steps:
        if isinstance(step, K.Fallback) and is_native(step, buffers):
            text, launch = gather_kernel(step, buffers)
        elif isinstance(step, K.Kernel):
            write = reduction_kernel if step.reductions else elementwise_kernel
            text, launch = write(step, buffers, uses, donated)
        else:
            continue
        first = dedupe.first(text, launch.name, launch.params)
        if first is None:
            functions.append(text)
        else:
            launch = dataclasses.replace(launch, name=first)
        launches.append(launch)
    parts = [f"// tracejit: generated from {name}", HEADER, CUDA.spell(PRELUDE)]
    parts += [DEVICE_RUNTIME, LIBRARY, CUDA.spell(TANHF_C) if TANHF_NAME in uses else ""]
    parts += [*functions, ""]
    return CudaProgram("\n".join(parts), launches)


__all__ = ["BLOCK", "CUDA", "CudaProgram", "Launch", "generate"]
