"""CUDA kernels for the schedule's natively compiled `Fallback` steps (ir/gather_plan.py).

Each kernel reproduces the NumPy reference (ir/structural.py, ir/threefry.py) bit for bit, as
the CPU backend's templates (backend_cpu/gather.py) do, through the same element helpers
(ir/cwriter/library.py: index clamping, wrapping add, Threefry); every index is 64-bit and
every loop is a grid-stride loop over independent work units:

- take / take_along_axis: one thread per output element; an index wraps once when negative,
  then clamps to [0, n-1].
- take_add / take_along_add: one thread per output column (p, q): it copies x's column, then
  adds the updates in index order, as `np.add.at` does (no atomics: float sums round
  identically and deterministically).
- cumsum / cumprod: one thread per row scanning the axis in NumPy's order, the same bits as
  NumPy's `accumulate` (not a parallel, log-depth scan); complete kernels of their own,
  tiled through shared memory where the axis is contiguous (scan.py).
- threefry2x32: one thread per counter pair, on uint32_t words (wrapping, as NumPy's uint32).

Integers add and multiply through their unsigned type (wrapping, like NumPy), bools through
`||` / `&&`.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> b = {0: K.Buffer(0, (4, 3), np.dtype(np.float32), "input"),
...      1: K.Buffer(1, (2,), np.dtype(np.int64), "input"),
...      2: K.Buffer(2, (2, 3), np.dtype(np.float32), "output")}
>>> text, launch = gather_kernel(K.Fallback("k0", "take", {"axis": 0}, [0, 1], [2]), b)
>>> launch.name, launch.params, launch.units
('k0', [0, 1, 2], 6)
"""

from __future__ import annotations

from tracejit.backend_cuda.codegen import BLOCK, CUDA, Launch
from tracejit.backend_cuda.scan import scan_kernel
from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type
from tracejit.ir.gather_plan import gather_sizes
from tracejit.ir.primitives import RuleTable


def _div(v: int) -> int:
    """A divisor of the unit index: `v`, or 1 when `v` is 0 (then the kernel has no units)."""
    return max(v, 1)


def _gather(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[list[str], int, list[str]]:
    pre, n, post, m = gather_sizes(step, buffers)
    t, i = c_type(buffers[step.inputs[0]].dtype), c_type(buffers[step.inputs[1]].dtype)
    params = [f"const {t}* x", f"const {i}* idx", f"{t}* out"]
    body = [f"const int64_t q = u % {_div(post)}LL, r = u / {_div(post)}LL;"]
    if step.prim == "take_along_axis":  # idx has out's shape
        body += [f"const int64_t p = r / {_div(m)}LL;", "const int64_t i = idx[u];"]
    else:
        body += [f"const int64_t j = r % {_div(m)}LL, p = r / {_div(m)}LL;"]
        body += ["const int64_t i = idx[j];"]
    body += [
        f"const int64_t k = tj_clamp_index(i, {n}LL);",
        f"out[u] = x[(p * {n}LL + k) * {post}LL + q];",
    ]
    return params, pre * m * post, body


def _scatter(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[list[str], int, list[str]]:
    pre, n, post, m = gather_sizes(step, buffers)
    dt = buffers[step.inputs[0]].dtype
    t, i = c_type(dt), c_type(buffers[step.inputs[1]].dtype)
    params = [f"const {t}* x", f"const {i}* idx", f"const {t}* upd", f"{t}* out"]
    at = f"(p * {m}LL + j) * {post}LL + q" if step.prim == "take_along_add" else "j"
    body = [
        f"const int64_t q = u % {_div(post)}LL, p = u / {_div(post)}LL;",
        f"const int64_t base = p * {n}LL * {post}LL + q;",
        f"if (x != out) for (int64_t k = 0; k < {n}LL; ++k) {{",
        f"  out[base + k * {post}LL] = x[base + k * {post}LL];",
        "}",
        f"for (int64_t j = 0; j < {m}LL; ++j) {{",
        f"  const int64_t k = tj_clamp_index((int64_t)idx[{at}], {n}LL);",
        f"  {t}* d = out + base + k * {post}LL;",
        f"  *d = tj_wrap_add(*d, upd[(p * {m}LL + j) * {post}LL + q]);",
        "}",
    ]
    return params, pre * post, body


def _threefry(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[list[str], int, list[str]]:
    key_t, count_t = (c_type(buffers[b].dtype) for b in step.inputs)
    n = buffers[step.outputs[0]].size
    params = [f"const {key_t}* key", f"const {count_t}* counts", "int64_t* out"]
    return params, (n + 1) // 2, [f"tj_threefry_pair(key, counts, out, u, {n}LL);"]


# The kernel of each primitive of fusion class KERNEL, keyed by the primitive:
# rule(step, buffers) -> (parameters, units, body of one unit `u`), a grid-stride loop of
# BLOCK threads, or a complete kernel (text, Launch).
CUDA_KERNELS = RuleTable("CUDA kernel")
CUDA_KERNELS.register("take", "take_along_axis")(_gather)
CUDA_KERNELS.register("take_add", "take_along_add")(_scatter)
CUDA_KERNELS.register("cumsum", "cumprod")(scan_kernel)
CUDA_KERNELS.register("threefry2x32")(_threefry)


def gather_kernel(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[str, Launch]:
    """The CUDA kernel running `step` (when `gather_plan.is_native`) and its launch."""
    made = CUDA_KERNELS[step.prim](step, buffers)
    if len(made) == 2:  # a complete kernel
        return made
    params, units, body = made
    # the step's name: unique in the schedule
    text = CUDA.function(step.name, params, CUDA.parallel_for(units, body), BLOCK)
    return text, Launch(step.name, list(step.inputs) + list(step.outputs), BLOCK, units, True)


__all__ = ["CUDA_KERNELS", "gather_kernel"]
