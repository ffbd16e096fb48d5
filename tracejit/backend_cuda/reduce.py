"""CUDA reduction kernels: a group of threads per outer index, phases separated by a reduce.

A block holds `X` outer indices ("rows") and `Y` threads per row; thread `lane` of a row walks
the inner index `j = lane, lane + Y, ...`. After each phase the row's partial results combine
across its `Y` threads (`CUDA.combine`: warp shuffles, then shared memory), and every thread
of the row can use them in the next phase. Two layouts:

* row layout (the rows are contiguous in memory: softmax, layernorm, a sum over the last axis):
  the `Y` threads of a row are consecutive lanes, so a warp reads consecutive addresses. When
  the kernel has several phases and the row fits (`ITEMS = ceil(inner / Y)` <= MAX_CACHED),
  each thread keeps its elements of every row-dependent load in registers: the row is read
  from memory once, as on the CPU it stays in cache.
* column layout (the outer index is the contiguous one: a sum over axis 0): the `X` threads of
  a warp take `X` consecutive outer indices, so each load instruction is coalesced, and the
  `Y` partial results of a row combine through shared memory.

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> from tracejit.backend_cuda.codegen import generate
>>> g = tj.make_ir(lambda x: x.sum(axis=1))(np.ones((4, 1024), np.float32))
>>> "__shfl_xor_sync" in generate(plan_memory(fuse(g))).source
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cuda.codegen import CUDA, Launch, kernel_params
from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type
from tracejit.ir.cwriter.emit import Emitter, decompose, indent
from tracejit.ir.cwriter.layout import load_bias
from tracejit.ir.cwriter.reduce import Accumulator

# Threads per block of a reduction kernel in row layout (unless one row needs more threads).
ROW_BLOCK = 256
# Elements one thread aims to reduce before the cross-thread combine: enough sequential work
# to hide the shuffle/shared-memory combine, few enough that rows spread over many threads.
ITEMS_PER_THREAD = 8
# Most elements per thread kept in registers (per cached load) to read a row once.
MAX_CACHED = 16
# Column layout: at most this many threads share one outer index (the rest of the block spans
# consecutive outer indices); kept small so each reduction's shared array stays <= 4 KiB.
MAX_COLUMN_THREADS = 8
COLUMN_BLOCK = 256


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _layout(k: K.Kernel) -> tuple[str, int, int]:
    """(layout, X rows per block, Y threads per row)."""
    outer = int(np.prod(k.outer, dtype=np.int64)) if k.outer else 1
    inner = int(np.prod(k.inner, dtype=np.int64)) if k.inner else 1
    row, col = load_bias(k)  # ir/cwriter/layout.py
    if col > row and outer >= 32:
        y = min(_pow2_at_least(-(-inner // (2 * ITEMS_PER_THREAD))), MAX_COLUMN_THREADS)
        return "column", COLUMN_BLOCK // y, y
    y = min(_pow2_at_least(-(-inner // ITEMS_PER_THREAD)), 1024)
    return "row", max(1, ROW_BLOCK // y), y


def _accumulator(r: K.Reduction) -> Accumulator:
    """One reduction's accumulator in a thread. float64 sums are compensated (TwoSum): a
    thread adds thousands of terms in order, and a plain double sum of 2^20 copies of 0.1
    was 112 ulps off (NumPy's pairwise sum: 1)."""
    return Accumulator(r, CUDA, compensated=r.op == "sum" and np.dtype(r.dtype) == np.float64)


class _Writer:
    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set, donated):
        self.k = kernel
        self.buffers = buffers
        self.donated = donated  # (input, output) pairs sharing memory (codegen.generate)
        self.uses = uses
        self.idx = CUDA.index_type(self.k)
        self.layout, self.x, self.y = _layout(self.k)
        self.threads = self.x * self.y
        self.outer = int(np.prod(self.k.outer, dtype=np.int64)) if self.k.outer else 1
        self.inner = int(np.prod(self.k.inner, dtype=np.int64)) if self.k.inner else 1
        self.items = -(-self.inner // self.y)
        self.reds = {r.rid: _accumulator(r) for r in self.k.reductions}
        self.cache = self._cached_loads()

    def _cached_loads(self) -> dict:
        """Row-dependent loads kept in registers (row layout, several phases, short rows;
        none for empty rows: NVRTC rejects an array of size 0, which g++ accepts)."""
        k = self.k
        if self.layout != "row" or k.nphases < 2 or not 0 < self.items <= MAX_CACHED:
            return {}
        nouter = len(k.outer)
        loads = sorted(
            {ld for ld in k.loads() if any(ld.strides[nouter:])},
            key=lambda ld: (ld.buf, ld.offset, ld.strides),
        )
        return {ld: f"c{n}[it]" for n, ld in enumerate(loads)}

    # -- pieces
    def _inner_loop(self, body: list[str], cached: bool) -> list[str]:
        k, idx = self.k, self.idx
        split = decompose(k.inner, "j", len(k.outer), idx, suffix="")
        if cached:
            head = [
                "#pragma unroll",
                f"for (int it = 0; it < {self.items}; ++it) {{",
                f"  const {idx} j = lane + ({idx})it * {self.y};",
            ]
            if self.items * self.y == self.inner:  # every j is in the row: no bounds check
                return head + indent(split + body) + ["}"]
            head.append(f"  if (j < {self.inner}) {{")
            return head + indent(split + body, 4) + ["  }", "}"]
        head = [f"for ({idx} j = lane; j < {self.inner}; j += {self.y}) {{"]
        return head + indent(split + body) + ["}"]

    def _fill_cache(self) -> list[str]:
        if not self.cache:
            return []
        lines = [f"{c_type(ld.dtype)} c{n}[{self.items}];" for n, ld in enumerate(self.cache)]
        em = Emitter(CUDA, self.uses, "f", self.idx)
        body = [
            f"{text} = b{ld.buf}[{em.affine(ld.offset, ld.strides)}];"
            for ld, text in self.cache.items()
        ]
        return lines + ["if (active) {", *indent(self._inner_loop(body, True)), "}"]

    def _phase(self, phase: int) -> list[str]:
        k = self.k
        reds = [self.reds[r.rid] for r in k.reductions if r.phase == phase]
        em = Emitter(CUDA, self.uses, f"p{phase}_", self.idx, replace=self.cache)
        update = []
        for red in reds:
            v = em.value(red.r.expr)
            update += red.update(v, f"(int64_t)(i{red.r.arg_dim})")
        stores = em.stores(k, phase)
        body = em.lines + update + stores
        lines = [f"// phase {phase}"]
        for red in reds:
            lines += red.declare()
        if body:
            lines += ["if (active) {", *indent(self._inner_loop(body, bool(self.cache))), "}"]
        partials = [red.partial() for red in reds]
        return lines + CUDA.combine(partials, self.x, self.y, self.layout == "column")

    def _epilogue(self) -> list[str]:
        em = Emitter(CUDA, self.uses, "e", self.idx)
        stores = em.stores(self.k, -1)
        if not stores:
            return []
        return ["if (active && lane == 0) {", *indent(em.lines + stores), "}"]

    def function(self) -> str:
        k, idx = self.k, self.idx
        _, params = kernel_params(k, self.buffers, self.donated)
        if self.layout == "row":
            lane, row = f"threadIdx.x % {self.y}", f"threadIdx.x / {self.y}"
        else:
            lane, row = f"threadIdx.x / {self.x}", f"threadIdx.x % {self.x}"
        body = [
            f"const int lane = {lane};",
            f"const int row = {row};",
            f"const {idx} u = ({idx})blockIdx.x * {self.x} + row;",
            f"const bool active = u < {self.outer};",
            "(void)lane; (void)row;",
            *decompose(k.outer, "u", 0, idx, suffix=""),
            *self._fill_cache(),
        ]
        for phase in range(k.nphases):
            body += self._phase(phase)
        body += self._epilogue()
        # no __launch_bounds__: with it, ptxas (CUDA 13.2, -O2 and above, also the driver's
        # JIT) miscompiled an unrolled row kernel of complex128 on an H100, one element of a
        # gradient wrong (tests/backend/test_complex.py; benchmarks/diag/k14.cu reproduces it;
        # -O1, -G, `#pragma unroll 1` or no bounds each gave the right answer)
        return CUDA.function(k.name, [params], body)

    def launch(self) -> Launch:
        ids, _ = kernel_params(self.k, self.buffers)
        blocks = -(-self.outer // self.x)
        return Launch(self.k.name, ids, self.threads, blocks, False)


def reduction_kernel(
    kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set, donated=frozenset()
) -> tuple[str, Launch]:
    """A reduction kernel (see the module docstring) and its launch."""
    writer = _Writer(kernel, buffers, uses, donated)
    return writer.function(), writer.launch()


__all__ = ["reduction_kernel"]
